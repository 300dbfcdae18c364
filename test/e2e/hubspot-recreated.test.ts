/**
 * A record this ledger wrote, deleted in HubSpot since (by hand, an erasure, a merge), upserted
 * again by a later event: HubSpot's batch upsert answers it `new`, and the outcome is `created`
 * with `recreated.previousId`, the id the ledger held. A record never written before is `created`
 * without it. Checked on fakeHubSpot's records, with the memory ledger, and with SQLite, Postgres
 * and Redis ledgers opened again by a new Sync between the writes (the previous id comes from the
 * ledger, not from the process).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { postgresLedgerUnderTest, redisLedgerUnderTest, sqliteLedgerUnderTest, type LedgerUnderTest } from '../helpers/services.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const T0 = Date.parse('2026-11-29T10:00:00Z');
const contact = (eventId: string, externalId: string, firstname: string, at = T0) => ({
  source: 'crm-test', eventId, op: 'upsert', object: 'contact', externalId, occurredAt: new Date(at).toISOString(),
  fields: { email: `${externalId}@example.test`, firstname },
});
const UPSERT_CONTACTS = 'POST /crm/v3/objects/contacts/batch/upsert';

describe('records deleted in HubSpot and upserted again (hubspotAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const contactsNamed = (externalId: string) => h!.fake.records('contacts').filter((c) => c.properties.ai_external_id === externalId);

  it('reports a contact deleted in HubSpot and upserted again by a later event as created, recreated from its previous id', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
    const first = await sync.apply(contact('evt-1', 'zd-7', 'Ana'));
    expect(first).toMatchObject({ status: 'created' });
    expect(first.recreated).toBeUndefined();

    expect(h.fake.delete('contacts', first.recordId!)).toBe(true);
    h.fake.core.resetLog();
    const again = await sync.apply(contact('evt-2', 'zd-7', 'Ana Maria', T0 + 60_000));
    expect(again).toMatchObject({ status: 'created', recreated: { previousId: first.recordId } });
    expect(again.recordId).not.toBe(first.recordId);
    const held = contactsNamed('zd-7');
    expect(held.map((c) => [c.id, c.properties.firstname])).toEqual([[again.recordId, 'Ana Maria']]);
    expect(h.fake.counts()).toEqual({ [UPSERT_CONTACTS]: 1 });

    // Written since under its new id: the next change is an update, nothing re-created.
    const later = await sync.apply(contact('evt-3', 'zd-7', 'Ana M.', T0 + 120_000));
    expect(later).toMatchObject({ status: 'updated', recordId: again.recordId });
    expect(later.recreated).toBeUndefined();
    await sync.close();
  });

  it('reports only the deleted record of a batch as recreated; one never written and one still there are not', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
    const [gone, kept] = await sync.applyMany([contact('evt-a1', 'zd-1', 'Ben'), contact('evt-b1', 'zd-2', 'Cy')]);
    expect(h.fake.delete('contacts', gone!.recordId!)).toBe(true);
    const outcomes = await sync.applyMany([
      contact('evt-a2', 'zd-1', 'Ben O.', T0 + 1_000),
      contact('evt-b2', 'zd-2', 'Cy D.', T0 + 1_000),
      contact('evt-c1', 'zd-3', 'Dee', T0 + 1_000),
    ]);
    expect(outcomes.map((o) => [o.status, o.recreated])).toEqual([
      ['created', { previousId: gone!.recordId }],
      ['updated', undefined],
      ['created', undefined],
    ]);
    expect(outcomes[1]!.recordId).toBe(kept!.recordId);
    expect(contactsNamed('zd-1').map((c) => c.id)).toEqual([outcomes[0]!.recordId]);
    expect(h.fake.records('contacts')).toHaveLength(3);
    await sync.close();
  });

  it('reports a keyless upsert that re-creates a deleted record as recreated too', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
    const keyless = (firstname: string, at: number) => ({
      source: 'crm-test', op: 'upsert', object: 'contact', externalId: 'zd-9', occurredAt: new Date(at).toISOString(), fields: { email: 'zd-9@example.test', firstname },
    });
    const first = await sync.apply(keyless('Eve', T0));
    expect(first.status).toBe('created');
    expect(h.fake.delete('contacts', first.recordId!)).toBe(true);
    const again = await sync.apply(keyless('Eve B.', T0 + 60_000));
    expect(again).toMatchObject({ status: 'created', recreated: { previousId: first.recordId } });
    expect(contactsNamed('zd-9').map((c) => c.id)).toEqual([again.recordId]);
    await sync.close();
  });

});

const ledgers: [string, () => Promise<LedgerUnderTest | undefined>][] = [
  ['sqlite', async () => sqliteLedgerUnderTest()],
  ['postgres', postgresLedgerUnderTest],
  ['redis', redisLedgerUnderTest],
];

describe.each(ledgers)('a record deleted in HubSpot, upserted again through a %s ledger opened anew', (_name, open) => {
  it('reports it created, recreated from the id the ledger kept', async (ctx) => {
    const ledger = await open();
    if (ledger === undefined) return ctx.skip();
    const h = await harness('loopback');
    const sync = () => createSync({ adapter: h.adapter, ledger: openLedger(ledger.url, ledger.options), retry: fast, sleep: async () => undefined });
    try {
      const before = sync();
      const first = await before.apply(contact('evt-1', 'zd-5', 'Fay'));
      expect(first.status).toBe('created');
      expect(first.recreated).toBeUndefined();
      await before.close();
      expect(h.fake.delete('contacts', first.recordId!)).toBe(true);

      const after = sync();
      const again = await after.apply(contact('evt-2', 'zd-5', 'Fay G.', T0 + 60_000));
      expect(again).toMatchObject({ status: 'created', recreated: { previousId: first.recordId } });
      expect(h.fake.records('contacts').map((c) => [c.id, c.properties.ai_external_id, c.properties.firstname])).toEqual([[again.recordId, 'zd-5', 'Fay G.']]);
      await after.close();
    } finally {
      await h.stop();
      await ledger.drop();
    }
  });
});
