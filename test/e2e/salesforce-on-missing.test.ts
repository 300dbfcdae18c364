/**
 * `onMissing` on a Salesforce record object. With `skip`, the contacts this ledger wrote are
 * looked up by their External ID first (one query per batch; sObject Collections upsert has no
 * documented update-only mode): one no record holds any more stays deleted and its action fails
 * RECORD_GONE (not retryable) naming the Id it had, without being sent. Contacts never written
 * through the ledger are upserted as always, with no query. With the default (`create`), the
 * deleted contact is written again and reported `recreated`. Checked on fakeSalesforce's records
 * and request log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { harness, type Harness } from './salesforce-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const T0 = Date.parse('2026-11-29T10:00:00Z');
const objectsWith = (onMissing?: 'create' | 'skip'): SalesforceAdapterOptions['objects'] => ({
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'], ...(onMissing ? { onMissing } : {}) },
});
const contact = (eventId: string, externalId: string, firstName: string, at = T0) => ({
  source: 'sf-test', eventId, op: 'upsert', object: 'contact', externalId, occurredAt: new Date(at).toISOString(),
  fields: { LastName: `Person ${externalId}`, FirstName: firstName, Email: `${externalId.toLowerCase()}@example.test` },
});
const UPSERT = 'PATCH /composite/sobjects/Contact/AI_External_Id__c';
const QUERY = 'GET /query';

describe('onMissing on a Salesforce record object (salesforceAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });
  const setup = async (onMissing?: 'create' | 'skip') => {
    h = await harness('loopback', {}, { objects: objectsWith(onMissing) });
    return createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
  };
  const contactsNamed = (externalId: string) => h!.fake.records('Contact').filter((c) => c.AI_External_Id__c === externalId);

  it('skip: leaves a contact deleted in Salesforce deleted, failing RECORD_GONE with the Id it had, without sending it', async () => {
    const sync = await setup('skip');
    const first = await sync.apply(contact('evt-1', 'C-1', 'Ana'));
    expect(first.status).toBe('created');
    expect(h!.fake.delete('Contact', first.recordId!)).toBe(true);

    h!.fake.core.resetLog();
    const gone = await sync.apply(contact('evt-2', 'C-1', 'Ana Maria', T0 + 60_000));
    expect(gone).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'RECORD_GONE', vendorCode: 'RECORD_GONE', retryable: false } });
    expect(gone.error!.message).toContain(`id ${first.recordId}`);
    expect(gone.error!.message).toContain('C-1');
    expect(h!.fake.records('Contact')).toEqual([]);
    expect(h!.fake.counts()).toEqual({ [QUERY]: 1 });
    await sync.close();
  });

  it('skip: writes a contact still there and one never written through this ledger as always, next to a gone one', async () => {
    const sync = await setup('skip');
    const [kept, gone] = await sync.applyMany([contact('evt-a1', 'C-1', 'Ben'), contact('evt-b1', 'C-2', 'Cy')]);
    expect(h!.fake.delete('Contact', gone!.recordId!)).toBe(true);

    h!.fake.core.resetLog();
    const outcomes = await sync.applyMany([contact('evt-a2', 'C-1', 'Ben O.', T0 + 1_000), contact('evt-b2', 'C-2', 'Cy D.', T0 + 1_000), contact('evt-c1', 'C-3', 'Dee', T0 + 1_000)]);
    expect(outcomes.map((o) => [o.status, o.error?.code])).toEqual([
      ['updated', undefined],
      ['failed', 'RECORD_GONE'],
      ['created', undefined],
    ]);
    expect(outcomes[0]!.recordId).toBe(kept!.recordId);
    expect(contactsNamed('C-2')).toEqual([]);
    expect(h!.fake.records('Contact').map((c) => c.AI_External_Id__c)).toEqual(['C-1', 'C-3']);
    expect(h!.fake.counts()).toEqual({ [QUERY]: 1, [UPSERT]: 1 });

    // Nothing this ledger wrote in the batch: no query.
    h!.fake.core.resetLog();
    expect((await sync.apply(contact('evt-d1', 'C-4', 'Eve', T0 + 2_000))).status).toBe('created');
    expect(h!.fake.counts()).toEqual({ [UPSERT]: 1 });
    await sync.close();
  });

  it.each([undefined, 'create' as const])('onMissing %s: writes a contact deleted in Salesforce again and reports it recreated, with no query', async (onMissing) => {
    const sync = await setup(onMissing);
    const first = await sync.apply(contact('evt-1', 'C-1', 'Ana'));
    expect(h!.fake.delete('Contact', first.recordId!)).toBe(true);
    h!.fake.core.resetLog();
    const again = await sync.apply(contact('evt-2', 'C-1', 'Ana Maria', T0 + 60_000));
    expect(again).toMatchObject({ status: 'created', recreated: { previousId: first.recordId } });
    expect(contactsNamed('C-1').map((c) => c.Id)).toEqual([again.recordId]);
    expect(h!.fake.counts()).toEqual({ [UPSERT]: 1 });
    await sync.close();
  });
});
