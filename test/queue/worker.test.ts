/**
 * startWorker in this process against real Redis and a fake HubSpot on loopback: event jobs run
 * through a handler module, duplicates cost nothing, concurrent jobs share CRM batches, an event
 * another worker holds is delayed (not lost), a throwing handler is retried, then kept in the
 * failed set with its reason, a 429 pauses the queue, and a chunk whose lines another worker holds
 * runs again for those lines only.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync, type Sync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { EVENT_JOB, eventJobId } from '../../src/queue/jobs.js';
import { enqueueChunks, planChunks, waitForChunks } from '../../src/queue/chunks.js';
import { watchRateLimits } from '../../src/queue/rate-limits.js';
import type { EventHandler, EventJobResult } from '../../src/queue/run-event.js';
import { startWorker, type QueueWorker } from '../../src/queue/worker.js';
import { duplicates, HUBSPOT_OBJECTS, tempDir } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, HANDLER, modelCalls, testQueue, ticketEvent, type TestQueue } from './helpers.js';

const redis = await redisUrl();
const handler = (await import(pathToFileURL(HANDLER).href) as { default: EventHandler }).default;

describe.skipIf(redis === undefined)('startWorker', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  const cleanup: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    fake = fakeHubSpot();
    server = await fake.listen();
  });
  afterAll(() => server.close());
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  function setup(options: { concurrency?: number; lingerMs?: number; parentWaitMs?: number } = {}): { tq: TestQueue; sync: Sync; worker: QueueWorker; calls: string } {
    const tq = testQueue(redis!);
    const watch = watchRateLimits(hubspotAdapter({ accessToken: 'pat-test-queue', basePath: server.basePath, objects: HUBSPOT_OBJECTS as never, rateLimit: { points: 1_000_000, durationMs: 1_000 } }));
    const sync = createSync({
      adapter: watch.adapter,
      ledger: openLedger(tq.ledgerUrl),
      leaseMs: 60_000,
    });
    const worker = startWorker({ sync, queue: tq.target, handlers: { tickets: handler }, concurrency: options.concurrency ?? 10, lingerMs: options.lingerMs ?? 20, leaseMs: 60_000, inFlightDelayMs: 200, rateLimits: watch, ...(options.parentWaitMs !== undefined ? { parentWaitMs: options.parentWaitMs } : {}) });
    cleanup.push(async () => {
      await worker.close();
      await sync.close();
      await tq.drop();
    });
    const calls = join(tempDir('crm-upsert-queue-'), 'model-calls.txt');
    process.env.MODEL_CALLS_FILE = calls;
    return { tq, sync, worker, calls };
  }

  it('writes exactly one note per event, runs the model once per event, and shares CRM batches between concurrent jobs', async () => {
    fake.core.log.length = 0;
    const { tq, worker, calls } = setup();
    const notesBefore = fake.records('notes').length;
    const events = Array.from({ length: 40 }, (_, i) => ticketEvent(1_000 + i));
    // Every event delivered 1 to 3 times: the receiver adds each with its idempotency-key job id.
    await addEvents(tq.queue, [...events, ...events.filter((_, i) => i % 2 === 0), ...events.filter((_, i) => i % 3 === 0)]);
    await worker.ready();
    await drained(tq.queue);
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: 40, failed: 0 });

    const notes = fake.records('notes').slice(notesBefore);
    expect(notes).toHaveLength(40);
    expect(duplicates(notes.map((n) => n.properties.crm_upsert_key))).toBe(0);
    const perEvent = modelCalls(calls);
    expect(perEvent.size).toBe(40);
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
    // 40 jobs, 10 at a time: their contacts went out in far fewer batch upserts than one per event.
    const upserts = fake.core.log.filter((e) => e.endpoint === 'POST /crm/v3/objects/contacts/batch/upsert').length;
    expect(upserts).toBeLessThanOrEqual(10);

    // The same events again under new job ids (a job BullMQ ran twice): replays, 0 CRM calls, 0 model calls.
    const before = fake.count();
    await tq.queue.addBulk(events.slice(0, 10).map((e) => ({ name: EVENT_JOB, data: e, opts: { jobId: `${eventJobId(e)}-again` } })));
    await drained(tq.queue);
    expect(fake.count()).toBe(before);
    expect([...modelCalls(calls).values()].every((n) => n === 1)).toBe(true);
    const again = await tq.queue.getJob(`${eventJobId(events[0]!)}-again`);
    expect(again?.returnvalue).toMatchObject({ status: 'replayed', apiCalls: 0 });
  });

  it('delays an event another worker holds and completes it once that worker is done, instead of losing it', async () => {
    const { tq, sync, worker } = setup();
    const event = ticketEvent(2_000);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // Another worker (same ledger) is in the middle of this event.
    const other = sync.handle({ source: 'tickets', eventId: event.eventId }, async () => {
      await held;
      return [];
    });
    await new Promise((r) => setTimeout(r, 50));
    await addEvents(tq.queue, [event]);
    await worker.ready();
    const deadline = Date.now() + 10_000;
    while (worker.stats().delayed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(worker.stats().delayed).toBeGreaterThan(0);
    expect(await (await tq.queue.getJob(eventJobId(event)))!.getState()).toBe('delayed');
    release();
    await other;
    await drained(tq.queue);
    const job = await tq.queue.getJob(eventJobId(event));
    expect(await job!.getState()).toBe('completed');
    expect(job!.returnvalue).toMatchObject({ status: 'replayed' });
  });

  it('delays a note whose contact another event writes later, spending no attempt, and completes it once that event ran', async () => {
    const { tq, worker } = setup({ parentWaitMs: 30_000 });
    const creates = () => fake.core.log.filter((e) => e.endpoint === 'POST /crm/v3/objects/notes/batch/create').length;
    const createsBefore = creates();
    const noteEvent = ticketEvent(4_000, { only: 'note' });
    const contactEvent = { ...ticketEvent(4_000, { only: 'contact' }), eventId: 'evt-4000-contact' };
    await addEvents(tq.queue, [noteEvent], { attempts: 1 });
    await worker.ready();
    const deadline = Date.now() + 10_000;
    while (worker.stats().delayed < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const job = () => tq.queue.getJob(eventJobId(noteEvent));
    expect(await (await job())!.getState()).toBe('delayed');
    expect(worker.stats().failed).toBe(0);
    expect(fake.records('notes').filter((n) => n.properties.hs_note_body === 'Summary of ticket 4000')).toHaveLength(0);
    // The contact's webhook arrives after the note's.
    await addEvents(tq.queue, [contactEvent]);
    await drained(tq.queue);
    const done = (await job())!;
    expect(await done.getState()).toBe('completed');
    // Its one attempt (of one) is the run that completed: none went to the waits.
    expect(done.attemptsMade).toBe(1);
    expect(done.returnvalue).toMatchObject({ status: 'completed' });
    expect(fake.records('notes').filter((n) => n.properties.hs_note_body === 'Summary of ticket 4000')).toHaveLength(1);
    // Nothing was sent for the note while its contact was missing: one create, once it was there.
    expect(creates() - createsBefore).toBe(1);
    expect(worker.stats().failed).toBe(0);
  });

  it('stops waiting for a parent record after parentWaitMs: the job then fails with its attempts, naming the missing contact', async () => {
    const { tq, worker } = setup({ parentWaitMs: 400 });
    const noteEvent = ticketEvent(4_100, { only: 'note' });
    await addEvents(tq.queue, [noteEvent], { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await worker.ready();
    await drained(tq.queue);
    const job = (await tq.queue.getJob(eventJobId(noteEvent)))!;
    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(2);
    expect(job.failedReason).toMatch(/1 of 1 actions did not complete: .*zd-4100.* does not exist in HubSpot/);
    expect(worker.stats().delayed).toBeGreaterThan(0);
  });

  it('says in a job\'s outcomes that it wrote again a contact deleted in HubSpot since an earlier event wrote it (recreated)', async () => {
    const { tq, worker } = setup();
    const first = ticketEvent(4_200, { only: 'contact' });
    const later = { ...ticketEvent(4_200, { only: 'contact', firstname: 'T4200 again' }), eventId: 'evt-4200-later' };
    await addEvents(tq.queue, [first]);
    await worker.ready();
    await drained(tq.queue);
    const written = (await tq.queue.getJob(eventJobId(first)))!.returnvalue as EventJobResult;
    expect(written.outcomes).toEqual([{ key: expect.any(String), status: 'created', recordId: expect.any(String) }]);
    const previousId = written.outcomes[0]!.recordId!;
    expect(fake.delete('contacts', previousId)).toBe(true);

    await addEvents(tq.queue, [later]);
    await drained(tq.queue);
    const again = (await tq.queue.getJob(eventJobId(later)))!.returnvalue as EventJobResult;
    expect(again).toMatchObject({ status: 'completed', outcomes: [{ status: 'created', recreated: { previousId } }] });
    expect(fake.records('contacts').filter((c) => c.properties.ai_external_id === 'zd-4200').map((c) => c.id)).toEqual([again.outcomes[0]!.recordId]);
  });

  it('retries a throwing handler with backoff, then keeps the job in the failed set with its reason', async () => {
    const { tq, worker } = setup();
    const event = ticketEvent(3_000, { fail: true });
    await addEvents(tq.queue, [event], { attempts: 3, backoff: { type: 'fixed', delay: 50 } });
    await worker.ready();
    await drained(tq.queue);
    const job = await tq.queue.getJob(eventJobId(event));
    expect(await job!.getState()).toBe('failed');
    expect(job!.attemptsMade).toBe(3);
    expect(job!.failedReason).toBe('the model refused ticket 3000');
    expect(worker.stats().failed).toBe(3);
  });

  it('pauses job fetching for every worker of the queue when the CRM answers 429, then goes on', async () => {
    const { tq, worker } = setup();
    await worker.ready();
    fake.failNext('rate_limit', { endpoint: 'contacts/batch/upsert' });
    await addEvents(tq.queue, [ticketEvent(5_000)]);
    const deadline = Date.now() + 10_000;
    while ((await tq.queue.getRateLimitTtl(1_000_000_000)) <= 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const limitedAt = Date.now();
    expect(limitedAt).toBeLessThan(deadline);
    await addEvents(tq.queue, [ticketEvent(5_001)]);
    await drained(tq.queue);
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: 2, failed: 0 });
    // The second job waited out the CRM's Retry-After (1 s) before it started.
    const second = await tq.queue.getJob(eventJobId(ticketEvent(5_001)));
    expect(second!.processedOn! - limitedAt).toBeGreaterThan(500);
  });

  it('runs a chunk again later for the lines another worker holds, keeping the outcomes of the others', async () => {
    const { tq, worker } = setup();
    const line = (n: number) => ({ source: 'test', eventId: `chunk-line-${n}`, op: 'upsert', object: 'contact', externalId: `chunk-c-${n}`, fields: { email: `chunk${n}@example.com` } });
    // Another worker (same ledger, a CRM that answers only when told) is writing line 1.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const inner = hubspotAdapter({ accessToken: 'pat-test-queue', basePath: server.basePath, objects: HUBSPOT_OBJECTS as never });
    const other = createSync({ adapter: { ...inner, upsertRecords: async (...a) => (await held, inner.upsertRecords(...a)) }, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000 });
    const writing = other.applyMany([line(1)]);
    await new Promise((r) => setTimeout(r, 100));
    const enqueued = await enqueueChunks({ queue: tq.target, file: 'f1-500', chunks: planChunks([{ line: 1, action: line(1) }, { line: 2, action: line(2) }], 500) });
    await worker.ready();
    const deadline = Date.now() + 10_000;
    while (worker.stats().delayed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(worker.stats().delayed).toBeGreaterThan(0);
    release();
    expect((await writing)[0]!.status).toBe('created');
    await other.close();
    const states = await waitForChunks({ queue: tq.target, enqueued, pollMs: 50 });
    const outcomes = states.results.get(enqueued.records[0]!)!.outcomes.map((o) => [o.line, o.outcome.status]);
    expect(outcomes).toEqual([[1, 'replayed'], [2, 'created']]);
    expect(fake.records('contacts').filter((c) => c.properties.ai_external_id === 'chunk-c-1')).toHaveLength(1);
  });
});
