/**
 * A CRM outage under the worker: every upsert answers 503 for a while. After three event jobs in a
 * row got no answer the worker takes the CRM to be down: jobs go back to wait without spending
 * an attempt, the queue pauses (doubling, capped), and once the CRM answers every job completes
 * with nothing in the failed set, although each job has only two attempts. With the rule off, the
 * same outage fills the failed set. The rule itself (streak, one pause at a time, doubling, cap,
 * reset) is checked on a fake clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { queueConfigSchema } from '../../schemas/queue.js';
import { createSync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { CHUNK_JOB, type LinesChunkData } from '../../src/queue/jobs.js';
import { evidenceOf, outageRule, type OutagePause } from '../../src/queue/outage.js';
import type { EventHandler } from '../../src/queue/run-event.js';
import { startWorker, type StartWorkerOptions } from '../../src/queue/worker.js';
import { memoryCrm } from '../helpers/memory-crm.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, testQueue, ticketEvent } from './helpers.js';

const redis = await redisUrl();

describe('outageRule', () => {
  it('pauses from the afterJobs-th unanswered job on, one pause at a time, doubling to the cap, and starts over once answered', async () => {
    let t = 0;
    const pauses: number[] = [];
    const seen: OutagePause[] = [];
    const rule = outageRule({ afterJobs: 3, firstPauseMs: 100, maxPauseMs: 300 }, async (ms) => void pauses.push(ms), (p) => seen.push(p), () => t);
    expect(await rule.unanswered('503')).toBe(false);
    expect(await rule.unanswered('503')).toBe(false);
    expect(await rule.unanswered('503')).toBe(true);
    // Jobs that were running when the pause began go back without pausing again.
    expect(await rule.unanswered('503')).toBe(true);
    expect(pauses).toEqual([100]);
    t = 100;
    expect(await rule.unanswered('503')).toBe(true);
    t = 300;
    expect(await rule.unanswered('503')).toBe(true);
    t = 600;
    expect(await rule.unanswered('503')).toBe(true);
    expect(pauses).toEqual([100, 200, 300, 300]);
    expect(seen.map((p) => p.unansweredJobs)).toEqual([3, 5, 6, 7]);
    expect(seen[0]!.reason).toBe('503');
    rule.answered();
    expect(await rule.unanswered('503')).toBe(false);
    expect(await rule.unanswered('503')).toBe(false);
    t = 10_000;
    expect(await rule.unanswered('503')).toBe(true);
    expect(pauses).toEqual([100, 200, 300, 300, 100]);
  });

  it('never holds a job back when it is off', async () => {
    const rule = outageRule(false, async () => {
      throw new Error('no pause when off');
    });
    for (let i = 0; i < 10; i++) expect(await rule.unanswered('503')).toBe(false);
  });
});

describe('evidenceOf', () => {
  const unanswered = { status: 'failed', error: { retryable: true } };
  const refused = { status: 'failed', error: { retryable: false } };
  const parentMissing = { status: 'failed', error: { retryable: true, vendorCode: 'PARENT_NOT_FOUND' } };
  const heldBack = { status: 'failed', error: { retryable: true, vendorCode: 'PARENT_DEFERRED' } };
  it.each<[string, { status: string; error?: { retryable?: boolean; vendorCode?: string } }[], string]>([
    ['a record written', [{ status: 'created' }, unanswered], 'answered'],
    ['a record updated', [{ status: 'updated' }], 'answered'],
    ['a refusal of its own (4xx)', [unanswered, refused], 'answered'],
    ['every failure a 5xx, timeout, reset or 429', [unanswered, unanswered, parentMissing], 'unanswered'],
    ['no request needed (replayed, unchanged, suppressed)', [{ status: 'replayed' }, { status: 'unchanged' }, { status: 'suppressed' }], 'none'],
    ['activities failed only for their parents', [parentMissing, heldBack], 'none'],
    ['rejected input and lines another worker holds', [{ status: 'rejected', error: { retryable: false } }, { status: 'in_flight' }], 'none'],
    ['nothing at all (a gate)', [], 'none'],
  ])('%s', (_name, outcomes, evidence) => {
    expect(evidenceOf(outcomes)).toBe(evidence);
  });
});

describe('queue.outage in the config', () => {
  it('defaults to 3 jobs, 1 s doubling to 60 s, and can be turned off', () => {
    expect(queueConfigSchema.parse({ url: 'redis://127.0.0.1:6379' }).outage).toEqual({ afterJobs: 3, firstPauseMs: 1_000, maxPauseMs: 60_000 });
    expect(queueConfigSchema.parse({ url: 'redis://127.0.0.1:6379', outage: false }).outage).toBe(false);
    expect(queueConfigSchema.parse({ url: 'redis://127.0.0.1:6379', outage: { afterJobs: 5 } }).outage).toEqual({ afterJobs: 5, firstPauseMs: 1_000, maxPauseMs: 60_000 });
    const bad = queueConfigSchema.safeParse({ url: 'redis://127.0.0.1:6379', outage: { firstPauseMs: 5 } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(['outage', 'firstPauseMs']);
  });
});

describe.skipIf(redis === undefined)('a worker through a CRM outage', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function run(outage: StartWorkerOptions['outage']) {
    const EVENTS = 4;
    const OUTAGE_CALLS = 10;
    const crm = memoryCrm();
    crm.failNext('server_error', { times: OUTAGE_CALLS, op: 'upsert' });
    const tq = testQueue(redis!);
    // No retries inside a run: each run of a job during the outage ends with the 503.
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000, retry: { retries: 0 }, sleep: async () => undefined });
    const handler: EventHandler = async (payload, ctx) => {
      const n = (payload as { ticket: number }).ticket;
      const summary = await ctx.once('summarize', () => `Summary of ticket ${n}`);
      return [
        { op: 'upsert', object: 'contact', externalId: `out-${n}`, fields: { email: `out${n}@example.com` } },
        { op: 'create', object: 'note', target: { object: 'contact', externalId: `out-${n}` }, fields: { body: summary } },
      ];
    };
    const pauses: OutagePause[] = [];
    const worker = startWorker({ sync, queue: tq.target, handlers: { tickets: handler }, concurrency: 1, lingerMs: 0, leaseMs: 60_000, outage, onOutagePause: (p) => pauses.push(p) });
    cleanup.push(async () => {
      await worker.close();
      await sync.close();
      await tq.drop();
    });
    const events = Array.from({ length: EVENTS }, (_, i) => ticketEvent(9_000 + i));
    // Two attempts each: a job charged for the outage's runs would end in the failed set.
    await addEvents(tq.queue, events, { attempts: 2, backoff: { type: 'fixed', delay: 20 } });
    await worker.ready();
    await drained(tq.queue, 30_000);
    return { crm, tq, worker, pauses, EVENTS, OUTAGE_CALLS };
  }

  it('puts the jobs back without spending attempts while the CRM is down, then completes every one', async () => {
    const { crm, tq, worker, pauses, EVENTS, OUTAGE_CALLS } = await run({ afterJobs: 3, firstPauseMs: 50, maxPauseMs: 200 });
    const counts = await tq.queue.getJobCounts('completed', 'failed');
    expect(counts).toEqual({ completed: EVENTS, failed: 0 });
    expect(crm.calls.upsert).toBe(OUTAGE_CALLS + EVENTS);
    expect(crm.records('contact')).toHaveLength(EVENTS);
    expect(crm.activities('note')).toHaveLength(EVENTS);
    const stats = worker.stats();
    // Two runs spent an attempt before the outage was seen; every later unanswered run went back.
    expect(stats.unanswered).toBe(OUTAGE_CALLS - 2);
    expect(stats.rateLimited).toBe(0);
    expect(pauses.length).toBeGreaterThanOrEqual(2);
    expect(pauses[0]).toMatchObject({ pauseMs: 50, unansweredJobs: 3 });
    expect(pauses[0]!.reason).toContain('503');
    expect(pauses.map((p) => p.pauseMs)).toEqual([...pauses.map((p) => p.pauseMs)].sort((a, b) => a - b));
    expect(Math.max(...pauses.map((p) => p.pauseMs))).toBeLessThanOrEqual(200);
    let spent = 0;
    for (const job of await tq.queue.getCompleted()) spent += job.attemptsMade - 1;
    expect(spent).toBe(2);
  });

  it('sees the outage through file chunks interleaved with event jobs: no attempt spent once seen, no failed job, every line and event written once', async () => {
    const OUTAGE_CALLS = 16;
    const crm = memoryCrm();
    crm.failNext('server_error', { times: OUTAGE_CALLS, op: 'upsert' });
    const tq = testQueue(redis!);
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000, retry: { retries: 0 }, sleep: async () => undefined });
    const handler: EventHandler = async (payload) => {
      const n = (payload as { ticket: number }).ticket;
      return [{ op: 'upsert', object: 'contact', externalId: `ev-${n}`, fields: { email: `ev${n}@example.com` } }];
    };
    const pauses: OutagePause[] = [];
    const worker = startWorker({ sync, queue: tq.target, handlers: { tickets: handler }, concurrency: 1, lingerMs: 0, leaseMs: 60_000, outage: { afterJobs: 3, firstPauseMs: 50, maxPauseMs: 200 }, onOutagePause: (p) => pauses.push(p) });
    cleanup.push(async () => {
      await worker.close();
      await sync.close();
      await tq.drop();
    });
    const opts = { attempts: 2, backoff: { type: 'fixed' as const, delay: 20 } };
    for (let i = 0; i < 4; i++) {
      await addEvents(tq.queue, [ticketEvent(9_100 + i)], opts);
      const chunk: LinesChunkData = { v: 1, kind: 'records', file: 'outage-file', index: i, lines: [{ line: i + 1, action: { source: 'file', eventId: `line-${i}`, op: 'upsert', object: 'contact', externalId: `line-${i}`, fields: { email: `line${i}@example.com` } } }] };
      await tq.queue.add(CHUNK_JOB, chunk, { ...opts, jobId: `chunk-outage-${i}` });
    }
    await worker.ready();
    await drained(tq.queue, 30_000);

    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: 8, failed: 0 });
    let spent = 0;
    for (const job of await tq.queue.getCompleted()) spent += job.attemptsMade - 1;
    // Only the first event job spent an attempt: the chunk after it and the event after that made three unanswered jobs.
    expect(spent).toBe(1);
    expect(pauses[0]).toMatchObject({ pauseMs: 50, unansweredJobs: 3 });
    // The chunk that ran before the outage was seen completed with its line failed; every later one went back and ran once the CRM answered.
    const chunkLines = new Map<string, string[]>();
    for (const job of await tq.queue.getCompleted()) {
      if (job.name === CHUNK_JOB) chunkLines.set(job.id!, (job.returnvalue as { outcomes: { outcome: { status: string } }[] }).outcomes.map((o) => o.outcome.status));
    }
    expect(Object.fromEntries(chunkLines)).toEqual({ 'chunk-outage-0': ['failed'], 'chunk-outage-1': ['created'], 'chunk-outage-2': ['created'], 'chunk-outage-3': ['created'] });
    expect(crm.records('contact').map((r) => r.externalId).sort()).toEqual(['ev-9100', 'ev-9101', 'ev-9102', 'ev-9103', 'line-1', 'line-2', 'line-3']);
    expect(crm.calls.upsert).toBe(OUTAGE_CALLS + 7);
    // Nothing lost: the failed line is kept with its action and written by a retry.
    const failed = await sync.ledger.list({ status: 'failed' });
    expect((await sync.retryStored(failed)).map((o) => o.status)).toEqual(['created']);
    expect(crm.records('contact').filter((r) => r.externalId.startsWith('line-'))).toHaveLength(4);
  });

  it('with the rule off, the same outage leaves jobs in the failed set', async () => {
    const { tq, worker, pauses } = await run(false);
    const counts = await tq.queue.getJobCounts('failed');
    expect(counts.failed).toBeGreaterThan(0);
    expect(worker.stats().unanswered).toBe(0);
    expect(pauses).toEqual([]);
  });
});
