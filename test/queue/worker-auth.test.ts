/**
 * `crm-upsert worker` whose token the CRM refuses (a fake HubSpot that accepts one other token):
 * it stops at once with exit 2 naming the token's variable, sends almost nothing, and leaves
 * every job on the queue (waiting or delayed, no attempt spent, none failed); a worker with the
 * right token then completes them all, with the model asked once per event.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { duplicates, ensureBuilt, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, modelCalls, queueConfigExtra, spawnWorker, testQueue, ticketEvent, type TestQueue, type WorkerProcess } from './helpers.js';

const redis = await redisUrl();
const GOOD = 'pat-na1-current';

describe.skipIf(redis === undefined)('crm-upsert worker with a refused token', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let tq: TestQueue;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot({ token: GOOD });
    server = await fake.listen();
    tq = testQueue(redis!);
  }, 180_000);
  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await tq?.drop();
    await server?.close();
  });

  it('exits 2 naming HUBSPOT_ACCESS_TOKEN and keeps every job on the queue, unfailed, for a worker with a valid token', async () => {
    const EVENTS = 20;
    const dir = tempDir('crm-upsert-worker-auth-');
    const config = writeHubSpotConfig(dir, server.basePath, queueConfigExtra(tq, { concurrency: 4 }));
    const calls = join(dir, 'model-calls.txt');
    const events = Array.from({ length: EVENTS }, (_, i) => ticketEvent(30_000 + i));
    // Two attempts: a refusal that spent attempts would leave jobs in the failed set.
    await addEvents(tq.queue, events, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });

    const refused = await spawnWorker(config, { HUBSPOT_ACCESS_TOKEN: 'pat-na1-revoked', MODEL_CALLS_FILE: calls });
    workers.push(refused);
    const { code } = await refused.done;
    expect(code).toBe(2);
    expect(refused.stderr()).toContain('crm-upsert: stopped: the token in HUBSPOT_ACCESS_TOKEN was refused by HubSpot (HTTP 401): set a current access token.');
    expect(refused.stderr()).toContain('crm-upsert: the jobs stay on the queue, no attempt spent: start the worker again with a valid token');
    expect(refused.stderr()).not.toContain('pat-na1-revoked');
    expect(JSON.parse(refused.stdout().trim().split('\n').pop()!)).toMatchObject({ command: 'worker', stopped: 'auth', exitCode: 2, completed: 0, failed: 0 });

    const counts = await tq.queue.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed');
    expect(counts.failed).toBe(0);
    expect(counts.completed).toBe(0);
    expect(counts.active).toBe(0);
    expect(counts.waiting + counts.delayed).toBe(EVENTS);
    for (const job of [...(await tq.queue.getWaiting()), ...(await tq.queue.getDelayed())]) expect(job.attemptsMade).toBe(0);
    // The first refusal stops the sending: at most the batch in flight per running job went out.
    expect(fake.count()).toBeLessThanOrEqual(4);
    expect(fake.records('notes')).toHaveLength(0);

    const good = await spawnWorker(config, { HUBSPOT_ACCESS_TOKEN: GOOD, MODEL_CALLS_FILE: calls });
    workers.push(good);
    await good.ready;
    await drained(tq.queue, 20_000);
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: EVENTS, failed: 0 });
    const notes = fake.records('notes');
    expect(notes).toHaveLength(EVENTS);
    expect(duplicates(notes.map((n) => n.properties.crm_upsert_key))).toBe(0);
    // The summaries made before the refusal were kept: no event asked the model twice.
    const perEvent = modelCalls(calls);
    expect(perEvent.size).toBe(EVENTS);
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
    good.child.kill('SIGTERM');
    expect((await good.done).code).toBe(143);
  }, 60_000);
});
