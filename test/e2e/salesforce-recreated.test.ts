/**
 * A contact this ledger wrote, deleted in Salesforce since (by hand, an erasure, a merge), upserted
 * again by a later event: the sObject Collections upsert answers it `created: true`, and the
 * outcome is `created` with `recreated.previousId`, the Id the ledger held. A contact never
 * written before is `created` without it. Checked on fakeSalesforce's records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { harness, type Harness } from './salesforce-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const T0 = Date.parse('2026-11-29T10:00:00Z');
const contact = (eventId: string, externalId: string, firstName: string, at = T0) => ({
  source: 'sf-test', eventId, op: 'upsert', object: 'contact', externalId, occurredAt: new Date(at).toISOString(),
  fields: { LastName: `Person ${externalId}`, FirstName: firstName, Email: `${externalId.toLowerCase()}@example.test` },
});

describe('contacts deleted in Salesforce and upserted again (salesforceAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });
  const contactsNamed = (externalId: string) => h!.fake.records('Contact').filter((c) => c.AI_External_Id__c === externalId);

  it('reports a contact deleted in Salesforce and upserted again by a later event as created, recreated from its previous Id', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
    const [first, other] = await sync.applyMany([contact('evt-1', 'C-1', 'Ana'), contact('evt-2', 'C-2', 'Ben')]);
    expect([first!.status, first!.recreated, other!.status, other!.recreated]).toEqual(['created', undefined, 'created', undefined]);

    expect(h.fake.delete('Contact', first!.recordId!)).toBe(true);
    const outcomes = await sync.applyMany([contact('evt-3', 'C-1', 'Ana Maria', T0 + 60_000), contact('evt-4', 'C-2', 'Ben O.', T0 + 60_000), contact('evt-5', 'C-3', 'Cy', T0 + 60_000)]);
    expect(outcomes.map((o) => [o.status, o.recreated])).toEqual([
      ['created', { previousId: first!.recordId }],
      ['updated', undefined],
      ['created', undefined],
    ]);
    expect(outcomes[0]!.recordId).not.toBe(first!.recordId);
    expect(contactsNamed('C-1').map((c) => [c.Id, c.FirstName])).toEqual([[outcomes[0]!.recordId, 'Ana Maria']]);
    expect(h.fake.records('Contact')).toHaveLength(3);
    await sync.close();
  });
});
