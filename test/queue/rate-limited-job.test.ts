/**
 * The 429-only path of an event job, made deterministic: an in-memory CRM answers the first N
 * contact upserts with 429 and the engine retries nothing by itself, so each of those runs ends
 * with only rate-limited failures. The job must go back to wait each time without spending an
 * attempt (it has fewer attempts than 429s), then complete with one contact and one note. A job
 * with another failure beside its 429s spends its attempt as any failing job does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, type Sync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { eventJobId } from '../../src/queue/jobs.js';
import { watchRateLimits, type RateLimitWatch } from '../../src/queue/rate-limits.js';
import type { EventHandler } from '../../src/queue/run-event.js';
import { startWorker } from '../../src/queue/worker.js';
import { memoryCrm } from '../helpers/memory-crm.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, testQueue, ticketEvent, type TestQueue } from './helpers.js';

const redis = await redisUrl();

describe.skipIf(redis === undefined)('an event job that only met 429s', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /** One worker, one job at a time, no linger; stopped with its sync and queue after the test. */
  const start = (o: { sync: Sync; tq: TestQueue; handler: EventHandler; watch: RateLimitWatch }) => {
    const worker = startWorker({ sync: o.sync, queue: o.tq.target, handlers: { tickets: o.handler }, concurrency: 1, lingerMs: 0, leaseMs: 60_000, rateLimits: o.watch, rateLimitWaitMs: 50 });
    cleanup.push(async () => {
      await worker.close();
      await o.sync.close();
      await o.tq.drop();
    });
    return worker;
  };

  it('goes back to wait without spending an attempt, and completes once the CRM takes it', async () => {
    const RATE_LIMITED = 3;
    const crm = memoryCrm({ retryAfterMs: 20 });
    crm.failNext('rate_limited', { times: RATE_LIMITED, op: 'upsert' });
    const tq = testQueue(redis!);
    const watch = watchRateLimits(crm.adapter);
    const waits: number[] = [];
    watch.onRateLimited((ms) => waits.push(ms));
    // No in-call rate-limit waits and no retries: every 429 ends the run with a failed outcome.
    const sync = createSync({ adapter: watch.adapter, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000, retry: { retries: 0, maxRateLimitWaits: 0 }, sleep: async () => undefined });
    let runs = 0;
    const handler: EventHandler = async (payload, ctx) => {
      runs += 1;
      const n = (payload as { ticket: number }).ticket;
      const summary = await ctx.once('summarize', () => `Summary of ticket ${n}`);
      return [
        { op: 'upsert', object: 'contact', externalId: `rl-${n}`, fields: { email: `rl${n}@example.com` } },
        { op: 'create', object: 'note', target: { object: 'contact', externalId: `rl-${n}` }, fields: { body: summary } },
      ];
    };
    const worker = start({ sync, tq, handler, watch });
    const event = ticketEvent(7_000);
    // Two attempts only: had a 429 spent one, the job would be in the failed set after the second.
    await addEvents(tq.queue, [event], { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await worker.ready();
    await drained(tq.queue, 15_000);

    const job = await tq.queue.getJob(eventJobId(event));
    expect(job!.failedReason ?? '').toBe('');
    expect(await job!.getState()).toBe('completed');
    expect(job!.returnvalue).toMatchObject({ status: 'completed' });
    expect(worker.stats()).toMatchObject({ completed: 1, failed: 0, rateLimited: RATE_LIMITED });
    expect(runs).toBe(RATE_LIMITED + 1);
    expect(crm.calls.upsert).toBe(RATE_LIMITED + 1);
    expect(waits).toEqual(Array(RATE_LIMITED).fill(20));
    expect(crm.records('contact').map((c) => c.externalId)).toEqual(['rl-7000']);
    expect(crm.activities('note').map((a) => a.fields.body)).toEqual(['Summary of ticket 7000']);
    // Four runs, one attempt: only the run that completed counted.
    expect(job!.attemptsStarted).toBe(RATE_LIMITED + 1);
    expect(job!.attemptsMade).toBe(1);
  });

  it('spends an attempt when a failure other than a 429 comes with it', async () => {
    const crm = memoryCrm({ retryAfterMs: 20 });
    crm.failNext('rate_limited', { times: 1, op: 'upsert' });
    const tq = testQueue(redis!);
    const watch = watchRateLimits(crm.adapter);
    const sync = createSync({ adapter: watch.adapter, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000, retry: { retries: 0, maxRateLimitWaits: 0 }, sleep: async () => undefined });
    // The note is on a contact nobody writes: its failure is not the 429's doing.
    const handler: EventHandler = () => [
      { op: 'upsert', object: 'contact', externalId: 'rl-mixed', fields: { email: 'mixed@example.com' } },
      { op: 'create', object: 'note', target: { object: 'contact', externalId: 'rl-nobody' }, fields: { body: 'orphan' } },
    ];
    const worker = start({ sync, tq, handler, watch });
    const event = ticketEvent(7_001);
    await addEvents(tq.queue, [event], { attempts: 1 });
    await worker.ready();
    await drained(tq.queue, 15_000);
    const job = await tq.queue.getJob(eventJobId(event));
    expect(await job!.getState()).toBe('failed');
    expect(job!.attemptsMade).toBe(1);
    expect(job!.failedReason).toContain('429');
    expect(worker.stats()).toMatchObject({ failed: 1, rateLimited: 0 });
  });
});
