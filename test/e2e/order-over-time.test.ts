/**
 * Order over time, end to end: a deal `closedwon` at 10:00 written first, then `closedlost` from
 * 09:55 in a later call, through the real HubSpot and Salesforce clients against their fakes on
 * loopback, with SQLite, Postgres and Redis ledgers, keyed and keyless. Every step runs on a Sync
 * over the ledger opened anew (the same file, tables or key prefix), so the field times come from
 * the ledger, not from the process: the older event is `superseded` with no request and the fake
 * keeps `closedwon`; an older event that sets another field writes that field only; a failed older
 * action retried (retry-failed) after a newer write is `superseded`.
 */
import { describe, expect, it } from 'vitest';
import type { HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import type { CrmAdapter } from '../../src/adapter.js';
import { createSync, openLedger, type Sync } from '../../src/index.js';
import { postgresLedgerUnderTest, redisLedgerUnderTest, sqliteLedgerUnderTest, type LedgerUnderTest } from '../helpers/services.js';
import { harness as hubspotHarness } from './hubspot-helpers.js';
import { harness as salesforceHarness } from './salesforce-helpers.js';

const fast = { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 };
const at = (hhmm: string) => `2026-11-30T${hhmm}:00.000Z`;

/** One CRM under test: its fake on loopback, the deal's stage and amount fields, what the fake holds. */
interface CrmUnderTest {
  adapter: CrmAdapter;
  stage: string;
  won: string;
  lost: string;
  amount: string;
  /** Fields a new deal needs besides its stage. */
  required: Record<string, unknown>;
  /** The deal's stored stage and amount in the fake. */
  held(externalId: string): { stage: unknown; amount: unknown } | undefined;
  requests(): number;
  failNextUpsert(times: number): void;
  stop(): Promise<void>;
}

const hubspotDeals: HubSpotAdapterOptions['objects'] = {
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'dealstage', 'amount'] },
};
const salesforceDeals: SalesforceAdapterOptions['objects'] = {
  deal: { kind: 'record', sobject: 'Opportunity', externalIdField: 'AI_External_Id__c', fields: ['Name', 'StageName', 'CloseDate', 'Amount'] },
};

async function hubspot(): Promise<CrmUnderTest> {
  const h = await hubspotHarness('loopback', {}, { objects: hubspotDeals });
  return {
    adapter: h.adapter, stage: 'dealstage', won: 'closedwon', lost: 'closedlost', amount: 'amount', required: { dealname: 'Renewal' },
    held(externalId) {
      const deal = h.fake.records('deals').find((d) => d.properties.ai_external_id === externalId);
      return deal && { stage: deal.properties.dealstage, amount: deal.properties.amount };
    },
    requests: () => h.fake.count(),
    failNextUpsert: (times) => h.fake.failNext('server_error', { times, endpoint: 'batch/upsert' }),
    stop: h.stop,
  };
}

async function salesforce(): Promise<CrmUnderTest> {
  const h = await salesforceHarness('loopback', {}, { objects: salesforceDeals });
  return {
    adapter: h.adapter, stage: 'StageName', won: 'Closed Won', lost: 'Closed Lost', amount: 'Amount', required: { Name: 'Renewal', CloseDate: '2026-12-31' },
    held(externalId) {
      const deal = h.fake.records('Opportunity').find((d) => d.AI_External_Id__c === externalId);
      return deal && { stage: deal.StageName, amount: deal.Amount };
    },
    requests: () => h.fake.count(),
    failNextUpsert: (times) => h.fake.failNext('server_error', { times, endpoint: 'composite/sobjects' }),
    stop: h.stop,
  };
}

const ledgers: [string, () => Promise<LedgerUnderTest | undefined>][] = [
  ['SQLite', async () => sqliteLedgerUnderTest()],
  ['Postgres', postgresLedgerUnderTest],
  ['Redis', redisLedgerUnderTest],
];
const crms: [string, () => Promise<CrmUnderTest>][] = [['HubSpot', hubspot], ['Salesforce', salesforce]];
const keyings = [['keyed', true], ['keyless', false]] as const;

describe.each(ledgers)('order over time on a %s ledger opened anew between calls', (_name, openStore) => {
  describe.each(crms)('against the fake %s', (_crm, openCrm) => {
    /** Runs `body` with a CRM, a ledger, and `step`: one Sync over the ledger opened anew, closed after `fn`. */
    async function withStore(body: (crm: CrmUnderTest, step: <T>(fn: (sync: Sync) => Promise<T>) => Promise<T>) => Promise<void>): Promise<boolean> {
      const store = await openStore();
      if (store === undefined) return false;
      const crm = await openCrm();
      const step = async <T>(fn: (sync: Sync) => Promise<T>): Promise<T> => {
        const sync = createSync({ adapter: crm.adapter, ledger: openLedger(store.url, store.options), retry: fast, sleep: async () => undefined });
        try {
          return await fn(sync);
        } finally {
          await sync.close();
        }
      };
      try {
        await body(crm, step);
      } finally {
        await crm.stop();
        await store.drop();
      }
      return true;
    }

    const deal = (crm: CrmUnderTest, keyed: boolean, id: string, time: string, fields: Record<string, unknown>) => ({
      source: 'crm-test', ...(keyed ? { eventId: `${id}-${time}` } : {}), occurredAt: at(time), op: 'upsert', object: 'deal', externalId: id, fields,
    });

    for (const [keying, keyed] of keyings) {
      it(`${keying}: an older event in a later call is superseded with 0 requests; one that also sets another field writes that field only`, async (ctx) => {
        const ran = await withStore(async (crm, step) => {
          const won = await step((s) => s.apply(deal(crm, keyed, 'D-1', '10:00', { ...crm.required, [crm.stage]: crm.won })));
          expect(won.status).toBe('created');

          const before = crm.requests();
          const lost = await step((s) => s.apply(deal(crm, keyed, 'D-1', '09:55', { [crm.stage]: crm.lost })));
          expect(lost).toMatchObject({ status: 'superseded', recordId: won.recordId, superseded: [crm.stage], newerAt: at('10:00'), attempts: 0 });
          expect(crm.requests()).toBe(before);
          expect(crm.held('D-1')!.stage).toBe(crm.won);

          const older = await step((s) => s.apply(deal(crm, keyed, 'D-1', '09:50', { [crm.stage]: crm.lost, [crm.amount]: 500 })));
          expect(older).toMatchObject({ status: 'updated', recordId: won.recordId, superseded: [crm.stage], newerAt: at('10:00') });
          expect(crm.requests()).toBe(before + 1);
          expect(crm.held('D-1')).toMatchObject({ stage: crm.won });
          expect(Number(crm.held('D-1')!.amount)).toBe(500);

          // The amount now carries 09:50: an event from 09:45 leaves it, as the stage, and sends nothing.
          const oldest = await step((s) => s.apply(deal(crm, keyed, 'D-1', '09:45', { [crm.stage]: crm.lost, [crm.amount]: 1 })));
          expect(oldest).toMatchObject({ status: 'superseded', superseded: [crm.stage, crm.amount], newerAt: at('10:00') });
          expect(crm.requests()).toBe(before + 1);
          expect(Number(crm.held('D-1')!.amount)).toBe(500);
        });
        if (!ran) ctx.skip();
      });

      it(`${keying}: a failed older action retried after a newer write is superseded`, async (ctx) => {
        const ran = await withStore(async (crm, step) => {
          await step((s) => s.apply(deal(crm, keyed, 'D-2', '08:00', { ...crm.required, [crm.stage]: crm.lost })));
          crm.failNextUpsert(fast.retries + 1);
          const failed = await step((s) => s.apply(deal(crm, keyed, 'D-2', '09:55', { [crm.stage]: crm.won })));
          expect(failed.status).toBe('failed');
          const newer = await step((s) => s.apply(deal(crm, keyed, 'D-2', '10:00', { [crm.stage]: crm.lost, [crm.amount]: 7 })));
          expect(newer.status).toBe('updated');

          const before = crm.requests();
          const [retried, ...rest] = await step(async (s) => s.retryStored(await s.ledger.list({ status: 'failed' })));
          expect(rest).toEqual([]);
          expect(retried).toMatchObject({ key: failed.key, status: 'superseded', superseded: [crm.stage], newerAt: at('10:00') });
          expect(crm.requests()).toBe(before);
          expect(crm.held('D-2')!.stage).toBe(crm.lost);
          // Settled: nothing is left for a second retry-failed.
          expect(await step((s) => s.ledger.list({ status: 'failed' }))).toEqual([]);
        });
        if (!ran) ctx.skip();
      });
    }
  });
});
