/**
 * Order over time on the queue: startWorker in this process against real Redis (queue and ledger)
 * and a fake HubSpot on loopback. The job of an event from 09:55, run after the job of the same
 * deal's event from 10:00 (webhooks out of order, a job retried after later ones ran), completes
 * with its upsert `superseded`, sends nothing, and the deal keeps the newer stage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { eventJobId, type EventJobData } from '../../src/queue/jobs.js';
import type { EventHandler, EventJobResult } from '../../src/queue/run-event.js';
import { startWorker } from '../../src/queue/worker.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { redisUrl } from '../helpers/services.js';
import { addEvents, drained, testQueue } from './helpers.js';

const redis = await redisUrl();
const objects: HubSpotAdapterOptions['objects'] = {
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'dealstage'] },
};
/** A deal-stage webhook: the deal's external id and its stage, as the CRM of origin sends them. */
const dealStage: EventHandler = (payload) => {
  const { deal, stage } = payload as { deal: string; stage: string };
  return [{ op: 'upsert', object: 'deal', externalId: deal, fields: { dealname: `Deal ${deal}`, dealstage: stage } }];
};
const stageEvent = (eventId: string, occurredAt: string, stage: string): EventJobData => ({
  v: 1, source: 'deals', eventId, occurredAt, receivedAt: '2026-11-30T10:05:00Z', payload: { deal: 'q-deal-1', stage },
});

describe.skipIf(redis === undefined)('queue jobs of one record run out of event order', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  beforeAll(async () => {
    fake = fakeHubSpot();
    server = await fake.listen();
  });
  afterAll(() => server.close());

  it('completes the job of the older event with its upsert superseded, 0 requests, and the newer stage kept', async () => {
    const tq = testQueue(redis!);
    const adapter = hubspotAdapter({ accessToken: 'pat-test-queue-order', basePath: server.basePath, objects, rateBudget: unlimitedRateBudget });
    const sync = createSync({ adapter, ledger: openLedger(tq.ledgerUrl), leaseMs: 60_000 });
    const worker = startWorker({ sync, queue: tq.target, handlers: { deals: dealStage }, concurrency: 1, lingerMs: 5, leaseMs: 60_000 });
    try {
      await worker.ready();
      const newer = stageEvent('evt-won', '2026-11-30T10:00:00Z', 'closedwon');
      await addEvents(tq.queue, [newer]);
      await drained(tq.queue);
      expect((await tq.queue.getJob(eventJobId(newer)))!.returnvalue).toMatchObject({ status: 'completed', outcomes: [{ status: 'created' }] });

      const before = fake.count();
      const older = stageEvent('evt-lost', '2026-11-30T09:55:00Z', 'closedlost');
      await addEvents(tq.queue, [older]);
      await drained(tq.queue);
      const job = (await tq.queue.getJob(eventJobId(older)))!;
      expect(await job.getState()).toBe('completed');
      expect(job.returnvalue as EventJobResult).toMatchObject({ status: 'completed', outcomes: [{ status: 'superseded' }], apiCalls: 0 });
      expect(fake.count()).toBe(before);
      expect(fake.records('deals').find((d) => d.properties.ai_external_id === 'q-deal-1')!.properties.dealstage).toBe('closedwon');
    } finally {
      await worker.close();
      await sync.close();
      await tq.drop();
    }
  });
});
