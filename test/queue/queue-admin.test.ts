/**
 * `crm-upsert queue failed | retry | remove | stats` against a handler that always throws: after
 * its attempts the job is in the failed set with the handler's message, retry moves it back to
 * wait with its attempts reset, remove deletes failed jobs only (by id, or all with --all), and
 * stats counts every state.
 */
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { createSync, type Sync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { eventJobId } from '../../src/queue/jobs.js';
import type { EventHandler } from '../../src/queue/run-event.js';
import { startWorker, type QueueWorker } from '../../src/queue/worker.js';
import { ensureBuilt, HUBSPOT_OBJECTS, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, HANDLER, testQueue, ticketEvent, type TestQueue } from './helpers.js';

const redis = await redisUrl();
const handler = (await import(pathToFileURL(HANDLER).href) as { default: EventHandler }).default;

describe.skipIf(redis === undefined)('crm-upsert queue', () => {
  let tq: TestQueue;
  let sync: Sync;
  let worker: QueueWorker;
  let server: { basePath: string; close(): Promise<void> };
  let config: string;
  beforeAll(async () => {
    ensureBuilt();
    ({ server } = await startFakeHubSpot());
    tq = testQueue(redis!);
    sync = createSync({
      adapter: hubspotAdapter({ accessToken: 'pat-test-admin', basePath: server.basePath, objects: HUBSPOT_OBJECTS as never }),
      ledger: openLedger(tq.ledgerUrl),
    });
    worker = startWorker({ sync, queue: tq.target, handlers: { tickets: handler } });
    config = writeHubSpotConfig(tempDir('crm-upsert-admin-'), server.basePath, { queue: { url: 'redis://127.0.0.1:1', name: tq.target.name, prefix: tq.target.prefix } });
  }, 180_000);
  afterAll(async () => {
    await worker.close();
    await sync.close();
    await tq.drop();
    await server.close();
  });

  const cli = async (...args: string[]) => {
    const r = await runCli(['queue', ...args, '--config', config, '--queue', tq.target.url]);
    return { ...r, lines: r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
  };

  it('lists the failed job with its reason after its attempts, retries it, and counts every state', async () => {
    const event = ticketEvent(4_000, { fail: true });
    const id = eventJobId(event);
    await addEvents(tq.queue, [event], { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await worker.ready();
    await drained(tq.queue);

    const stats = await cli('stats');
    expect(stats.code).toBe(0);
    expect(stats.lines[0]).toMatchObject({ command: 'queue stats', queue: tq.target.name, counts: { failed: 1, completed: 0, waiting: 0, active: 0, delayed: 0 } });

    const failed = await cli('failed');
    expect(failed.code).toBe(0);
    expect(failed.lines).toEqual([expect.objectContaining({ id, name: 'event', source: 'tickets', eventId: event.eventId, attemptsMade: 2, failedReason: 'the model refused ticket 4000' })]);

    // Retrying all: back to wait with its attempts reset, it fails twice more.
    const retried = await cli('retry');
    expect(retried.lines[0]).toMatchObject({ command: 'queue retry', retried: 1 });
    await drained(tq.queue);
    expect(worker.stats().failed).toBe(4);
    expect((await tq.queue.getJob(id))!.attemptsMade).toBe(2);

    // The cause fixed (here: the payload), a retry by id completes it.
    await (await tq.queue.getJob(id))!.updateData({ ...event, payload: { ticket: 4_000 } });
    const byId = await cli('retry', id);
    expect(byId.lines[0]).toMatchObject({ retried: 1 });
    await drained(tq.queue);
    expect((await cli('stats')).lines[0]).toMatchObject({ counts: { failed: 0, completed: 1 } });

    const unknown = await cli('retry', 'no-such-job');
    expect(unknown.code).toBe(1);
    expect(unknown.lines[0]).toMatchObject({ retried: 0, notFailed: ['no-such-job'] });
  }, 60_000);

  it('removes failed jobs only: by id, or every one with --all, and refuses to guess', async () => {
    const events = [4_100, 4_101, 4_102].map((n) => ticketEvent(n, { fail: true }));
    await addEvents(tq.queue, events, { attempts: 1 });
    await drained(tq.queue);
    const completed = (await tq.queue.getCompleted())[0]!;
    expect((await cli('stats')).lines[0]).toMatchObject({ counts: { failed: 3 } });

    const none = await cli('remove');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('give the ids of the failed jobs to remove, or --all');

    // A completed job named among them is not removed: its id still dedupes at enqueue.
    const one = await cli('remove', eventJobId(events[0]!), completed.id!);
    expect(one.code).toBe(1);
    expect(one.lines[0]).toMatchObject({ command: 'queue remove', removed: 1, notFailed: [completed.id] });
    expect(await tq.queue.getJob(eventJobId(events[0]!))).toBeUndefined();
    expect(await (await tq.queue.getJob(completed.id!))!.getState()).toBe('completed');

    const all = await cli('remove', '--all');
    expect(all.code).toBe(0);
    expect(all.lines[0]).toMatchObject({ removed: 2 });
    expect((await cli('stats')).lines[0]).toMatchObject({ counts: { failed: 0, completed: 1 } });
  }, 60_000);
});
