/**
 * Bounded stops in this process against real Redis. QueueWorker.stop(drainMs): a job that finishes
 * within the drain completes there; one that outlasts it is left behind with the connections
 * dropped, and since its completion can no longer be recorded on the queue, its lock expires and
 * another worker runs it again, which replays from the ledger: one contact, one note, the handler
 * run once. waitForChunks: a stop ends the wait stopGraceMs later even while its poll hangs on a
 * Redis that is gone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, type Sync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { EventHandler } from '../../src/queue/run-event.js';
import { enqueueChunks, planChunks, waitForChunks } from '../../src/queue/chunks.js';
import { startWorker, type QueueWorker } from '../../src/queue/worker.js';
import { contactLine, noteLine, waitFor } from '../cli/helpers.js';
import { memoryCrm } from '../helpers/memory-crm.js';
import { redisUrl } from '../helpers/services.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { addEvents, drained, testQueue, ticketEvent } from './helpers.js';

const redis = await redisUrl();

describe.skipIf(redis === undefined)('QueueWorker.stop', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /** A handler whose runs wait until `release()`; `runs` counts them. */
  function heldHandler() {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const state = { runs: 0 };
    const handler: EventHandler = async (payload) => {
      state.runs += 1;
      await gate;
      const n = (payload as { ticket: number }).ticket;
      return [
        { op: 'upsert', object: 'contact', externalId: `stop-${n}`, fields: { email: `stop${n}@example.com` } },
        { op: 'create', object: 'note', target: { object: 'contact', externalId: `stop-${n}` }, fields: { body: `ticket ${n}` } },
      ];
    };
    return { handler, release, state };
  }

  function setup(handler: EventHandler) {
    const crm = memoryCrm();
    const tq = testQueue(redis!);
    const sync: Sync = createSync({ adapter: crm.adapter, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000 });
    const workers: QueueWorker[] = [];
    const start = () => {
      const w = startWorker({ sync, queue: tq.target, handlers: { tickets: handler }, concurrency: 2, lingerMs: 0, leaseMs: 60_000, lockDurationMs: 1_000, stalledIntervalMs: 500 });
      workers.push(w);
      return w;
    };
    cleanup.push(async () => {
      for (const w of workers) await w.stop(0);
      await sync.close();
      await tq.drop();
    });
    return { crm, tq, start };
  }

  it('resolves true once the running job finished within the drain, and the job is completed', async () => {
    const held = heldHandler();
    const { crm, tq, start } = setup(held.handler);
    await addEvents(tq.queue, [ticketEvent(50_001)]);
    const worker = start();
    await waitFor(() => held.state.runs === 1, 10_000);
    const stopping = worker.stop(10_000);
    held.release();

    expect(await stopping).toBe(true);
    expect(await tq.queue.getJobCounts('completed', 'active', 'waiting')).toEqual({ completed: 1, active: 0, waiting: 0 });
    expect([crm.records('contact').length, crm.activities('note').length]).toEqual([1, 1]);
  });

  it('gives up after drainMs when a job outlasts it; the job runs again on another worker and replays, written once', async () => {
    const held = heldHandler();
    const { crm, tq, start } = setup(held.handler);
    await addEvents(tq.queue, [ticketEvent(50_002)]);
    const first = start();
    await waitFor(() => held.state.runs === 1, 10_000);
    const started = performance.now();
    const drainedInTime = await first.stop(300);
    const ms = performance.now() - started;

    expect(drainedInTime).toBe(false);
    expect(ms).toBeLessThan(300 + 1_000);
    // The abandoned run finishes its CRM and ledger work, but cannot record the job as completed.
    held.release();
    await waitFor(() => crm.activities('note').length === 1, 10_000);
    const calls = crm.adapter.apiCalls();
    expect((await tq.queue.getJobCounts('completed')).completed).toBe(0);

    start();
    await drained(tq.queue, 20_000);
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: 1, failed: 0 });
    expect([crm.records('contact').length, crm.activities('note').length]).toEqual([1, 1]);
    // The second run replayed the stored outcome: no CRM call, no second handler run.
    expect(crm.adapter.apiCalls()).toBe(calls);
    expect(held.state.runs).toBe(1);
  });
});

describe.skipIf(redis === undefined)('waitForChunks with a stop', () => {
  it('returns stopGraceMs after the stop while its poll hangs on a Redis that is gone, every job left blocked', async () => {
    const tq = testQueue(redis!);
    const proxy = await tcpProxy({ port: Number(new URL(redis!).port || 6379) });
    try {
      const lines = [0, 1].flatMap((i) => [{ line: 2 * i + 1, action: JSON.parse(contactLine(i)) as unknown }, { line: 2 * i + 2, action: JSON.parse(noteLine(i)) as unknown }]);
      const enqueued = await enqueueChunks({ queue: tq.target, file: 'stop-test', chunks: planChunks(lines, 10) });
      let stop!: () => void;
      const stopped = new Promise<void>((r) => (stop = r));
      const waiting = waitForChunks({ queue: { ...tq.target, url: proxy.url(tq.target.url) }, enqueued, stop: stopped, stopGraceMs: 300, pollMs: 20 });
      // Polling (answers beyond the ready check), then Redis goes away and the signal comes.
      await waitFor(() => proxy.connections().some((c) => c.answers >= 5), 10_000);
      await proxy.cut('blackhole');
      const started = performance.now();
      stop();
      const states = await waiting;

      expect(performance.now() - started).toBeLessThan(300 + 1_000);
      expect(states.results.size).toBe(0);
      expect(states.blocked.sort()).toEqual([...enqueued.records, enqueued.gate, ...enqueued.activities].sort());
    } finally {
      await proxy.close();
      await tq.drop();
    }
  });
});
