/**
 * The Bulk job line of `sync` (one updating line per job on a terminal's stderr, nothing off a
 * terminal) and the dry run's count of the upserts a run would send through jobs.
 */
import { describe, expect, it } from 'vitest';
import type { BulkLane } from '../../src/adapter.js';
import { bulkProgressLine, bulkProgressText } from '../../src/cli/bulk-progress.js';
import { bulkPlan } from '../../src/cli/dry-run-bulk.js';

const at = (state: string, processed: number, failed = 0, jobId = '750xx') => ({ object: 'contact', jobId, state, uploaded: 10_000, processed, failed });

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe('bulk job progress line', () => {
  it('reads as the object, the job, its counts and state', () => {
    expect(bulkProgressText(at('InProgress', 4_000, 12))).toBe('contact job 750xx: uploaded 10,000, processed 4,000, failed 12 (InProgress)');
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
  const lane = { minRecords: 3, accepts: (object: string) => object === 'contact' } as unknown as BulkLane;
  const upsert = (i: number, object = 'contact') => ({ op: 'upsert', object, externalId: `c-${i}` });

  it('under auto takes an object whose distinct records in a call reach minRecords', () => {
    const plan = bulkPlan(lane, 'auto', 500);
    for (const i of [1, 2, 2, 3]) plan.write(upsert(i));
    for (const i of [1, 2, 3, 4]) plan.write(upsert(i, 'note'));
    expect(plan.finish()).toEqual({ contact: { upserts: 3, calls: 1 } });
  });

  it('under auto leaves an object below minRecords, under always takes it, under never takes nothing', () => {
    const run = (mode: 'auto' | 'always' | 'never') => {
      const plan = bulkPlan(lane, mode, 500);
      plan.write(upsert(1));
      plan.write({ op: 'create', object: 'contact' });
      return plan.finish();
    };
    expect(run('auto')).toEqual({});
    expect(run('always')).toEqual({ contact: { upserts: 1, calls: 1 } });
    expect(run('never')).toEqual({});
  });

  it('counts call by call, as a run cuts the file', () => {
    const plan = bulkPlan(lane, 'auto', 1);
    for (let i = 0; i < 50_003; i++) plan.write(upsert(i));
    expect(plan.finish()).toEqual({ contact: { upserts: 50_003, calls: 2 } });
  });

  it('takes nothing without a lane', () => {
    const plan = bulkPlan(undefined, 'always', 500);
    plan.write(upsert(1));
    expect(plan.finish()).toEqual({});
  });
});
