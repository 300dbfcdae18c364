/**
 * `crm-upsert worker` processes against real Redis and one fake HubSpot on loopback: four of them
 * with one killed (SIGKILL) and restarted while 10% of the CRM's responses are lost, and one
 * stopped with SIGTERM in the middle of its jobs.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { duplicates, startFakeHubSpot, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, modelCalls, queueConfigExtra, spawnWorker, testQueue, ticketEvent, type TestQueue, type WorkerProcess } from './helpers.js';

const redis = await redisUrl();

describe.skipIf(redis === undefined)('crm-upsert worker', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  const queues: TestQueue[] = [];
  const workers: WorkerProcess[] = [];
  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()), 180_000);
  afterAll(() => server.close());
  afterEach(async () => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    for (const q of queues.splice(0)) await q.drop();
    fake.setFaults({});
  });

  function setup(queue: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
    const tq = testQueue(redis!);
    queues.push(tq);
    const dir = tempDir('crm-upsert-workers-');
    const config = writeHubSpotConfig(dir, server.basePath, { ...queueConfigExtra(tq, queue), ...extra });
    const calls = join(dir, 'model-calls.txt');
    const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-workers', MODEL_CALLS_FILE: calls };
    const spawnOne = async () => {
      const w = await spawnWorker(config, env);
      workers.push(w);
      return w;
    };
    return { tq, calls, spawnOne };
  }

  it('loses and duplicates nothing with 4 workers, one killed and restarted, and 10% lost responses', async () => {
    const { tq, calls, spawnOne } = setup({ concurrency: 4 });
    const EVENTS = 200;
    const notesBefore = fake.records('notes').length;
    const contactsBefore = fake.records('contacts').length;
    const events = Array.from({ length: EVENTS }, (_, i) => ticketEvent(10_000 + i, { modelMs: 20 }));
    await addEvents(tq.queue, events, { attempts: 8, backoff: { type: 'fixed', delay: 200 } });
    fake.setFaults({ lostResponse: 0.1, seed: 11 });
    const pool = await Promise.all([spawnOne(), spawnOne(), spawnOne(), spawnOne()]);
    await Promise.all(pool.map((w) => w.ready));

    const deadline = Date.now() + 20_000;
    while (modelCalls(calls).size < EVENTS * 0.3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    pool[0]!.child.kill('SIGKILL');
    await pool[0]!.done;
    await (await spawnOne()).ready;
    await drained(tq.queue, 40_000);

    const counts = await tq.queue.getJobCounts('completed', 'failed');
    expect(counts.completed + counts.failed).toBe(EVENTS);
    for (const job of await tq.queue.getFailed()) expect(job.failedReason).not.toBe('');
    const notes = fake.records('notes').slice(notesBefore);
    const contacts = fake.records('contacts').slice(contactsBefore);
    expect(duplicates(notes.map((n) => n.properties.crm_upsert_key))).toBe(0);
    expect(duplicates(contacts.map((c) => c.properties.ai_external_id))).toBe(0);
    // Nothing lost: every completed event has its contact and its note.
    expect(notes).toHaveLength(counts.completed);
    expect(contacts.length).toBeGreaterThanOrEqual(counts.completed);
    expect(counts.completed).toBe(EVENTS);
    const perEvent = modelCalls(calls);
    expect(perEvent.size).toBe(EVENTS);
    // Only the killed worker's jobs in progress may have asked the model twice.
    expect([...perEvent.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(4);
    expect(fake.core.log.some((e) => e.fault === 'lost_response')).toBe(true);
  }, 90_000);

  it('finishes the jobs in progress on SIGTERM, exits 143, and leaves later jobs on the queue', async () => {
    const { tq, calls, spawnOne } = setup({ concurrency: 5 });
    const notesBefore = fake.records('notes').length;
    const events = [1, 2, 3].map((i) => ticketEvent(20_000 + i, { modelMs: 1_500 }));
    await addEvents(tq.queue, events);
    const w = await spawnOne();
    await w.ready;
    const deadline = Date.now() + 10_000;
    while (modelCalls(calls).size < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    w.child.kill('SIGTERM');
    while (!w.stderr().includes('SIGTERM') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // Added once the worker is draining: it must stay on the queue for the next worker.
    await addEvents(tq.queue, [ticketEvent(20_004)]);
    const { code } = await w.done;

    expect(code).toBe(143);
    expect(w.stderr()).toContain('SIGTERM: finishing the jobs in progress');
    expect(await tq.queue.getJobCounts('completed', 'failed', 'active', 'waiting')).toEqual({ completed: 3, failed: 0, active: 0, waiting: 1 });
    expect(fake.records('notes').slice(notesBefore)).toHaveLength(3);
    expect([...modelCalls(calls).values()]).toEqual([1, 1, 1]);
    expect(JSON.parse(w.stdout().trim().split('\n').pop()!)).toMatchObject({ command: 'worker', completed: 3, stopped: 'SIGTERM', exitCode: 143 });
  }, 60_000);
  it('prints each pause of the queue while the CRM does not answer, spends no attempt, and finishes once it answers', async () => {
    const outage = { afterJobs: 2, firstPauseMs: 300, maxPauseMs: 600 };
    const { tq, spawnOne } = setup({ concurrency: 1, outage }, { retry: { retries: 0 } });
    const notesBefore = fake.records('notes').length;
    fake.setFaults({ serverError: 1 });
    await addEvents(tq.queue, [1, 2, 3, 4].map((i) => ticketEvent(30_000 + i)), { attempts: 2 });
    const w = await spawnOne();
    await w.ready;
    const deadline = Date.now() + 20_000;
    while ((w.stderr().match(/pausing the queue/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    fake.setFaults({});
    await drained(tq.queue, 30_000);
    w.child.kill('SIGTERM');
    await w.done;

    const pauses = w.stderr().match(/^crm-upsert: the CRM did not answer \d+ jobs in a row \(.+\): pausing the queue [\d.]+ s; the jobs go back to wait, no attempt spent$/gm) ?? [];
    expect(pauses.length).toBeGreaterThanOrEqual(2);
    expect(pauses[0]).toContain('did not answer 2 jobs in a row');
    expect(pauses[0]).toContain('pausing the queue 0.3 s');
    expect(pauses[1]).toContain('pausing the queue 0.6 s');
    // Two attempts per job and many more failed requests than that: none of them was spent.
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: 4, failed: 0 });
    expect(fake.records('notes').slice(notesBefore)).toHaveLength(4);
  }, 60_000);
});
