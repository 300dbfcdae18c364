/**
 * `onMissing` on a HubSpot record object. With `skip`, a contact this ledger wrote goes out as an
 * update by its id property (`batch/update`), which never creates: deleted in HubSpot since, it
 * stays deleted and the action fails RECORD_GONE (not retryable) naming the id it had. Contacts
 * never written through the ledger are upserted as always, also in the same call. With the
 * default (`create`), the deleted contact is written again and reported `recreated`. Checked on
 * fakeHubSpot's records and request log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const T0 = Date.parse('2026-11-29T10:00:00Z');
const objectsWith = (onMissing?: 'create' | 'skip'): HubSpotAdapterOptions['objects'] => ({
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'], ...(onMissing ? { onMissing } : {}) },
});
const contact = (eventId: string, externalId: string, firstname: string, at = T0) => ({
  source: 'crm-test', eventId, op: 'upsert', object: 'contact', externalId, occurredAt: new Date(at).toISOString(), fields: { email: `${externalId}@example.test`, firstname },
});
const UPSERT = 'POST /crm/v3/objects/contacts/batch/upsert';
const UPDATE = 'POST /crm/v3/objects/contacts/batch/update';

describe('onMissing on a HubSpot record object (hubspotAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });
  const setup = async (onMissing?: 'create' | 'skip') => {
    h = await harness('loopback', {}, { objects: objectsWith(onMissing) });
    return createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
  };
  const contactsNamed = (externalId: string) => h!.fake.records('contacts').filter((c) => c.properties.ai_external_id === externalId);

  it("skip: leaves a contact deleted in HubSpot deleted, failing RECORD_GONE with the id it had, for good", async () => {
    const sync = await setup('skip');
    const first = await sync.apply(contact('evt-1', 'zd-7', 'Ana'));
    expect(first.status).toBe('created');
    expect(h!.fake.delete('contacts', first.recordId!)).toBe(true);

    h!.fake.core.resetLog();
    const gone = await sync.apply(contact('evt-2', 'zd-7', 'Ana Maria', T0 + 60_000));
    expect(gone).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'RECORD_GONE', vendorCode: 'RECORD_GONE', retryable: false } });
    expect(gone.error!.message).toContain(`id ${first.recordId}`);
    expect(gone.error!.message).toContain('zd-7');
    expect(gone.recreated).toBeUndefined();
    expect(h!.fake.records('contacts')).toEqual([]);
    expect(h!.fake.counts()).toEqual({ [UPDATE]: 1 });

    // A later event for the same contact is refused the same way: nothing learnt the record anew.
    const later = await sync.apply(contact('evt-3', 'zd-7', 'Ana M.', T0 + 120_000));
    expect(later).toMatchObject({ status: 'failed', error: { code: 'RECORD_GONE' } });
    expect(h!.fake.records('contacts')).toEqual([]);
    await sync.close();
  });

  it('skip: updates a contact this ledger wrote that is still there, and one re-created by someone under the same external id', async () => {
    const sync = await setup('skip');
    const [kept, gone] = await sync.applyMany([contact('evt-a1', 'zd-1', 'Ben'), contact('evt-b1', 'zd-2', 'Cy')]);
    expect(h!.fake.delete('contacts', gone!.recordId!)).toBe(true);
    const successor = h!.fake.state.seed('contacts', { ai_external_id: 'zd-2', email: 'cy@example.test' });

    h!.fake.core.resetLog();
    const outcomes = await sync.applyMany([contact('evt-a2', 'zd-1', 'Ben O.', T0 + 1_000), contact('evt-b2', 'zd-2', 'Cy D.', T0 + 1_000)]);
    expect(outcomes.map((o) => [o.status, o.recordId, o.recreated])).toEqual([
      ['updated', kept!.recordId, undefined],
      ['updated', successor, undefined],
    ]);
    expect(contactsNamed('zd-2').map((c) => [c.id, c.properties.firstname])).toEqual([[successor, 'Cy D.']]);
    expect(h!.fake.counts()).toEqual({ [UPDATE]: 1 });
    await sync.close();
  });

  it('skip: upserts contacts never written through this ledger as always, next to a gone one in the same call', async () => {
    const sync = await setup('skip');
    const gone = await sync.apply(contact('evt-g1', 'zd-g', 'Gil'));
    expect(h!.fake.delete('contacts', gone.recordId!)).toBe(true);
    // Made in HubSpot's screens, never through the ledger: upserted (updated), never judged gone.
    const theirs = h!.fake.state.seed('contacts', { ai_external_id: 'zd-t', email: 'old@example.test' });

    h!.fake.core.resetLog();
    const outcomes = await sync.applyMany([
      contact('evt-g2', 'zd-g', 'Gil B.', T0 + 1_000),
      contact('evt-n1', 'zd-n', 'Nia', T0 + 1_000),
      contact('evt-t1', 'zd-t', 'Tom', T0 + 1_000),
    ]);
    expect(outcomes.map((o) => [o.status, o.error?.code])).toEqual([
      ['failed', 'RECORD_GONE'],
      ['created', undefined],
      ['updated', undefined],
    ]);
    expect(outcomes[2]!.recordId).toBe(theirs);
    expect(contactsNamed('zd-g')).toEqual([]);
    expect(h!.fake.records('contacts').map((c) => c.properties.ai_external_id).sort()).toEqual(['zd-n', 'zd-t']);
    expect(h!.fake.counts()).toEqual({ [UPSERT]: 1, [UPDATE]: 1 });
    await sync.close();
  });

  it('skip: a failed update of the known contacts is theirs alone: the contact upserted with it is created, and retried updates go out alone', async () => {
    const sync = await setup('skip');
    const known = await sync.apply(contact('evt-k1', 'zd-k', 'Kim'));
    h!.fake.core.resetLog();
    h!.fake.failNext('server_error', { endpoint: UPDATE });
    const retried = await sync.applyMany([contact('evt-k2', 'zd-k', 'Kim L.', T0 + 1_000), contact('evt-n1', 'zd-n', 'Nia', T0 + 1_000)]);
    expect(retried.map((o) => [o.status, o.recordId])).toEqual([['updated', known.recordId], ['created', expect.any(String)]]);
    expect(h!.fake.counts()).toEqual({ [UPSERT]: 1, [UPDATE]: 2 });

    // HubSpot refuses the update for good: only the known contact's action fails.
    h!.fake.core.resetLog();
    h!.fake.failNext('non_unique_id_property', { endpoint: UPDATE, times: 3 });
    const refused = await sync.applyMany([contact('evt-k3', 'zd-k', 'Kim M.', T0 + 2_000), contact('evt-o1', 'zd-o', 'Otto', T0 + 2_000)]);
    expect(refused.map((o) => o.status)).toEqual(['failed', 'created']);
    expect(refused[0]!.error).toMatchObject({ retryable: false, message: expect.stringContaining('non-unique') });
    expect(h!.fake.records('contacts').map((c) => [c.properties.ai_external_id, c.properties.firstname])).toEqual([['zd-k', 'Kim L.'], ['zd-n', 'Nia'], ['zd-o', 'Otto']]);
    expect(h!.fake.counts()).toEqual({ [UPSERT]: 1, [UPDATE]: 1 });
    await sync.close();
  });

  it.each([undefined, 'create' as const])('onMissing %s: writes a contact deleted in HubSpot again and reports it recreated', async (onMissing) => {
    const sync = await setup(onMissing);
    const first = await sync.apply(contact('evt-1', 'zd-7', 'Ana'));
    expect(h!.fake.delete('contacts', first.recordId!)).toBe(true);
    h!.fake.core.resetLog();
    const again = await sync.apply(contact('evt-2', 'zd-7', 'Ana Maria', T0 + 60_000));
    expect(again).toMatchObject({ status: 'created', recreated: { previousId: first.recordId } });
    expect(contactsNamed('zd-7').map((c) => c.id)).toEqual([again.recordId]);
    expect(h!.fake.counts()).toEqual({ [UPSERT]: 1 });
    await sync.close();
  });
});
