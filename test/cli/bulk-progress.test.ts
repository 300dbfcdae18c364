/**
 * The Bulk job line of `sync` (one updating line per job on a terminal's stderr, nothing off a
 * terminal) and the dry run's count of the writes a run would send through jobs (record upserts,
 * keyed Task creates) with its stderr line.
 */
import { describe, expect, it } from 'vitest';
import type { BulkLane } from '../../src/adapter.js';
import { bulkProgressLine, bulkProgressText } from '../../src/cli/bulk-progress.js';
import { bulkJobText, bulkPlan } from '../../src/cli/dry-run-bulk.js';

const at = (state: string, processed: number, failed = 0, jobId = '750xx') => ({ object: 'contact', jobId, state, uploaded: 10_000, processed, failed });

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe('bulk job progress line', () => {
  it('reads as the object, the job, its counts and state', () => {
    expect(bulkProgressText(at('InProgress', 4_000, 12))).toBe('contact job 750xx: uploaded 10,000, processed 4,000, failed 12 (InProgress)');
  });

  it('leaves the upload out when it is not known (a job followed after a restart)', () => {
    const { uploaded: _, ...followed } = at('InProgress', 4_000, 12);
    expect(bulkProgressText(followed)).toBe('contact job 750xx: processed 4,000, failed 12 (InProgress)');
    expect(bulkProgressText({ ...followed, uploaded: 0 })).toBe('contact job 750xx: uploaded 0, processed 4,000, failed 12 (InProgress)');
  });

  it('redraws one line per job on a terminal and ends it with a newline when the job is over', () => {
    const out = stream(true);
    const calls: string[] = [];
    const line = bulkProgressLine(out, { pause: () => calls.push('pause'), resume: () => calls.push('resume') })!;
    line.update(at('Open', 0));
    line.update(at('InProgress', 4_000, 12));
    line.update(at('JobComplete', 10_000, 12));
    expect(out.writes).toEqual([
      '\rcontact job 750xx: uploaded 10,000, processed 0, failed 0 (Open)\x1b[K',
      '\rcontact job 750xx: uploaded 10,000, processed 4,000, failed 12 (InProgress)\x1b[K',
      '\rcontact job 750xx: uploaded 10,000, processed 10,000, failed 12 (JobComplete)\x1b[K',
      '\n',
    ]);
    expect(calls).toEqual(['pause', 'resume']);
  });

  it.each(['Failed', 'Aborted'])('ends the line on %s', (state) => {
    const out = stream(true);
    const line = bulkProgressLine(out)!;
    line.update(at(state, 0));
    expect(out.writes.at(-1)).toBe('\n');
  });

  it('ends a line left open when another job starts, or when told to (a job not followed to its end)', () => {
    const out = stream(true);
    const line = bulkProgressLine(out)!;
    line.update(at('InProgress', 1));
    line.update(at('InProgress', 2, 0, '750yy'));
    expect(out.writes.filter((w) => w === '\n')).toHaveLength(1);
    line.end();
    line.end();
    expect(out.writes.filter((w) => w === '\n')).toHaveLength(2);
  });

  it('writes nothing off a terminal', () => {
    expect(bulkProgressLine(stream(false))).toBeUndefined();
    expect(bulkProgressLine({ write: () => true })).toBeUndefined();
  });
});

describe('dry run bulk plan', () => {
  const lane = { minRecords: 3, accepts: (object: string) => object === 'contact', acceptsActivities: (object: string) => object === 'task', upsertActivities: async () => new Map() } as unknown as BulkLane;
  const upsert = (i: number, object = 'contact') => ({ op: 'upsert', object, externalId: `c-${i}` });
  const write = (plan: ReturnType<typeof bulkPlan>, action: { op: string; object: string; externalId?: string; eventId?: string }, key = `key-${action.externalId ?? action.eventId}`) => plan.write(action, key);
  /** A Task create: keyed by its event id unless `keyless`. */
  const task = (i: number, keyless = false) => ({ op: 'create', object: 'task', ...(keyless ? {} : { eventId: `t-${i}` }) });

  it('under auto takes an object whose distinct records in a call reach minRecords', () => {
    const plan = bulkPlan(lane, 'auto', 500);
    for (const i of [1, 2, 2, 3]) write(plan, upsert(i));
    for (const i of [1, 2, 3, 4]) write(plan, upsert(i, 'note'));
    expect(plan.finish()).toEqual({ contact: { upserts: 3, calls: 1 } });
  });

  it('under auto leaves an object below minRecords, under always takes it, under never takes nothing', () => {
    const run = (mode: 'auto' | 'always' | 'never') => {
      const plan = bulkPlan(lane, mode, 500);
      write(plan, upsert(1));
      write(plan, { op: 'create', object: 'contact' });
      return plan.finish();
    };
    expect(run('auto')).toEqual({});
    expect(run('always')).toEqual({ contact: { upserts: 1, calls: 1 } });
    expect(run('never')).toEqual({});
  });

  it('counts call by call, as a run cuts the file', () => {
    const plan = bulkPlan(lane, 'auto', 1);
    for (let i = 0; i < 50_003; i++) write(plan, upsert(i));
    expect(plan.finish()).toEqual({ contact: { upserts: 50_003, calls: 2 } });
  });

  it('takes nothing without a lane', () => {
    const plan = bulkPlan(undefined, 'always', 500);
    write(plan, upsert(1));
    expect(plan.finish()).toEqual({});
  });

  it('counts keyed Task creates of an activity object the lane accepts, apart from the records', () => {
    const plan = bulkPlan(lane, 'auto', 500, { nativeActivityUpsert: true });
    for (const i of [1, 2, 3]) write(plan, upsert(i));
    for (const i of [1, 2, 3, 4]) write(plan, task(i));
    expect(plan.finish()).toEqual({ contact: { upserts: 3, calls: 1 }, task: { creates: 4, calls: 1 } });
  });

  it('leaves keyless creates to the batch calls: they neither go in a job nor count toward minRecords', () => {
    const plan = bulkPlan(lane, 'auto', 500, { nativeActivityUpsert: true });
    for (const i of [1, 2]) write(plan, task(i));
    for (const i of [3, 4, 5]) write(plan, task(i, true), `keyless-${i}`);
    expect(plan.finish()).toEqual({});

    const always = bulkPlan(lane, 'always', 500, { nativeActivityUpsert: true });
    write(always, task(1));
    write(always, task(2, true), 'keyless-2');
    expect(always.finish()).toEqual({ task: { creates: 1, calls: 1 } });
  });

  it('takes no creates without native activity upsert, of an object the lane does not accept, or from a lane without upsertActivities', () => {
    const off = bulkPlan(lane, 'always', 500);
    write(off, task(1));
    expect(off.finish()).toEqual({});

    const note = bulkPlan(lane, 'always', 500, { nativeActivityUpsert: true });
    write(note, { op: 'create', object: 'note', eventId: 'n-1' });
    expect(note.finish()).toEqual({});

    const recordsOnly = { minRecords: 3, accepts: () => true, acceptsActivities: () => true } as unknown as BulkLane;
    const plan = bulkPlan(recordsOnly, 'always', 500, { nativeActivityUpsert: true });
    write(plan, task(1));
    expect(plan.finish()).toEqual({});
  });

  it('counts Task creates call by call, one row per key', () => {
    const plan = bulkPlan(lane, 'auto', 1, { nativeActivityUpsert: true });
    // The second call holds two creates: below minRecords, left to the batch calls.
    for (let i = 0; i < 50_002; i++) write(plan, task(i));
    expect(plan.finish()).toEqual({ task: { creates: 50_000, calls: 1 } });
  });
});

describe('dry run bulk line', () => {
  const job = 'a Bulk API 2.0 job (create, upload, close, polls, results)';

  it('names record upserts, and the auto threshold in upserts', () => {
    expect(bulkJobText({ upserts: 10_000, calls: 1 }, job, 2_000)).toBe(`10,000 upserts in ${job}, not the batch requests shown for them (--bulk auto: 2,000 or more upserts of an object in one call)`);
  });

  it('names Task creates as upserted on their key, and the auto threshold in keyed creates', () => {
    expect(bulkJobText({ creates: 2_500, calls: 1 }, job, 2_000)).toBe(`2,500 creates upserted on their key in ${job}, not the batch requests shown for them (--bulk auto: 2,000 or more keyed creates of an object in one call)`);
  });

  it('counts the calls when there are several, and names --bulk always', () => {
    expect(bulkJobText({ creates: 3, calls: 2 }, job, undefined)).toBe(`3 creates upserted on their key in 2 calls, each ${job}, not the batch requests shown for them (--bulk always)`);
  });
});
