/**
 * One key, one action on the worker, against real Redis and a fake HubSpot on loopback: an event
 * whose handler returns two different notes on one contact without an intent fails with both
 * rejected (nothing written for them, the reason naming the key and intent), while another event
 * riding the same coalesced call completes; a file chunk's later line under an earlier key is a
 * redelivery, replayed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { EVENT_JOB, eventJobId, type EventJobData } from '../../src/queue/jobs.js';
import type { EventHandler } from '../../src/queue/run-event.js';
import { startWorker } from '../../src/queue/worker.js';
import { HUBSPOT_OBJECTS } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { drained, testQueue } from './helpers.js';

const redis = await redisUrl();
const AT = '2026-12-01T10:00:00Z';

/** A handler that files each of the payload's notes on its contact, with the payload's intents. */
const notesHandler: EventHandler = (payload) => {
  const { contact, notes } = payload as { contact: string; notes: { body: string; intent?: string }[] };
  return [
    { op: 'upsert', object: 'contact', externalId: contact, fields: { email: `${contact}@example.com` } },
    ...notes.map((n) => ({ op: 'create' as const, object: 'note', target: { object: 'contact', externalId: contact }, ...(n.intent ? { intent: n.intent } : {}), fields: { hs_note_body: n.body, hs_timestamp: AT } })),
  ];
};

const event = (eventId: string, payload: unknown): EventJobData => ({ v: 1, source: 'notes', eventId, occurredAt: AT, receivedAt: AT, payload });

describe.skipIf(redis === undefined)('worker: one key, one action', () => {
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

  it('fails an event with two different notes under one key, writing neither, while the event beside it in the same call completes', async () => {
    const tq = testQueue(redis!);
    const sync = createSync({
      adapter: hubspotAdapter({ accessToken: 'pat-test-shared-keys', basePath: server.basePath, objects: HUBSPOT_OBJECTS as never, rateLimit: { points: 1_000_000, durationMs: 1_000 } }),
      ledger: openLedger(tq.ledgerUrl),
    });
    // A long linger and both jobs running at once: they share one coalesced applyMany.
    const worker = startWorker({ sync, queue: tq.target, handlers: { notes: notesHandler }, concurrency: 2, lingerMs: 200, inFlightDelayMs: 200 });
    cleanup.push(async () => {
      await worker.close();
      await sync.close();
      await tq.drop();
    });
    const clash = event('evt-clash', { contact: 'sk-clash', notes: [{ body: 'Asked for a refund.' }, { body: 'Promised a callback.' }] });
    const fine = event('evt-fine', { contact: 'sk-fine', notes: [{ body: 'Refund note.', intent: 'refund' }, { body: 'Callback note.', intent: 'callback' }] });
    await tq.queue.addBulk([clash, fine].map((e) => ({ name: EVENT_JOB, data: e, opts: { jobId: eventJobId(e), attempts: 1 } })));
    await worker.ready();
    await drained(tq.queue);

    const failed = (await tq.queue.getJob(eventJobId(clash)))!;
    expect(await failed.getState()).toBe('failed');
    expect(failed.failedReason).toMatch(/^2 of 3 actions did not complete: intent: actions 1 and 2 share the key v1:e:\S+ but not their fields or links, so neither is written: give each its own intent/);
    const done = (await tq.queue.getJob(eventJobId(fine)))!;
    expect(await done.getState()).toBe('completed');
    const bodies = fake.records('notes').map((n) => n.properties.hs_note_body);
    expect(bodies).toEqual(expect.arrayContaining(['Refund note.', 'Callback note.']));
    expect(bodies).not.toContain('Asked for a refund.');
    expect(bodies).not.toContain('Promised a callback.');
    // The contact of the failed event is written: only the clashing notes are refused.
    expect(fake.records('contacts').some((c) => c.properties.ai_external_id === 'sk-clash')).toBe(true);
  });
});
