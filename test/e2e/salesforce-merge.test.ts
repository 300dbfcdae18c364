/**
 * Contacts merged in Salesforce after this ledger wrote them, and every write that follows.
 * Salesforce (and fakeSalesforce after it) keeps the master's Id and values, reparents the
 * merged-away contact's Tasks to the master and deletes it with MasterRecordId set. So: a Task for
 * the master lands on it; a Task for the merged-away contact, sent with the Id the ledger holds, is
 * refused ENTITY_IS_DELETED, the contact is queried again by its External ID, which no record holds,
 * and the Task fails as parent-missing (retryable later), never written on the deleted Id; an upsert
 * of the master updates it; an upsert of the merged-away contact is `created` with `recreated`
 * (default) or fails RECORD_GONE (`onMissing: 'skip'`): never a silent duplicate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { harness, type Harness } from './salesforce-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const T0 = Date.parse('2026-11-29T10:00:00Z');
const objectsWith = (onMissing?: 'create' | 'skip'): SalesforceAdapterOptions['objects'] => ({
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'], ...(onMissing ? { onMissing } : {}) },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject'], parents: { contact: 'WhoId' } },
});
const at = (ms: number) => new Date(T0 + ms).toISOString();
const contact = (eventId: string, externalId: string, firstName: string, ms = 0) => ({
  source: 'sf-test', eventId, op: 'upsert', object: 'contact', externalId, occurredAt: at(ms), fields: { LastName: `Person ${externalId}`, FirstName: firstName },
});
const taskOn = (eventId: string, externalId: string, ms = 0) => ({
  source: 'sf-test', eventId, op: 'create', object: 'task', occurredAt: at(ms), target: { object: 'contact', externalId }, fields: { Subject: `follow up ${eventId}` },
});
const TASKS = 'PATCH /composite/sobjects/Task/AI_Idempotency_Key__c';
const QUERY = 'GET /query';

describe('contacts merged in Salesforce (salesforceAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  /** C-1 (the master) and C-2 written through a Sync, a Task on C-2, then C-2 merged into C-1. */
  const mergedPair = async (onMissing?: 'create' | 'skip') => {
    h = await harness('loopback', {}, { objects: objectsWith(onMissing) });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
    const [master, other] = await sync.applyMany([contact('evt-1', 'C-1', 'Ana'), contact('evt-2', 'C-2', 'Ben')]);
    expect((await sync.apply(taskOn('evt-t0', 'C-2'))).status).toBe('created');
    h.fake.merge('Contact', master!.recordId!, other!.recordId!);
    h.fake.core.resetLog();
    return { sync, master: master!.recordId!, other: other!.recordId! };
  };
  const tasks = () => h!.fake.records('Task').map((t) => [t.Subject, t.WhoId]);

  it('merges as Salesforce does: the master keeps its Id and values and gets the Tasks, the other is deleted with MasterRecordId', async () => {
    const { sync, master, other } = await mergedPair();
    expect(h!.fake.records('Contact').map((c) => [c.Id, c.AI_External_Id__c, c.FirstName])).toEqual([[master, 'C-1', 'Ana']]);
    expect(h!.fake.mergedRecords('Contact').map((c) => [c.Id, c.AI_External_Id__c, c.IsDeleted, c.MasterRecordId])).toEqual([[other, 'C-2', true, master]]);
    expect(tasks()).toEqual([['follow up evt-t0', master]]);
    expect(() => h!.fake.merge('Contact', master, other)).toThrow(/cannot merge/);
    await sync.close();
  });

  it('lands a Task for the master on it, and fails one for the merged-away contact as parent-missing, never on the deleted Id', async () => {
    const { sync, master } = await mergedPair();
    const [onOther, onMaster] = await sync.applyMany([taskOn('evt-t1', 'C-2', 1_000), taskOn('evt-t2', 'C-1', 1_000)]);
    expect(onMaster!.status).toBe('created');
    expect(onOther).toMatchObject({ status: 'failed', error: { vendorCode: 'PARENT_NOT_FOUND', message: expect.stringContaining('"C-2"') } });
    expect(onOther!.error!.message).not.toContain('ENTITY_IS_DELETED');
    expect(tasks()).toEqual([
      ['follow up evt-t0', master],
      ['follow up evt-t2', master],
    ]);
    // The deleted Id refused once, C-2 queried again by its External ID, the Task not sent again.
    expect(h!.fake.counts()).toEqual({ [TASKS]: 1, [QUERY]: 1 });
    await sync.close();
  });

  it('updates the master, and reports the merged-away contact recreated (default onMissing)', async () => {
    const { sync, master, other } = await mergedPair();
    const [again, kept] = await sync.applyMany([contact('evt-3', 'C-2', 'Ben B.', 1_000), contact('evt-4', 'C-1', 'Ana A.', 1_000)]);
    expect(kept).toMatchObject({ status: 'updated', recordId: master });
    expect(again).toMatchObject({ status: 'created', recreated: { previousId: other } });
    expect(h!.fake.records('Contact').map((c) => [c.Id, c.AI_External_Id__c, c.FirstName])).toEqual([
      [master, 'C-1', 'Ana A.'],
      [again!.recordId, 'C-2', 'Ben B.'],
    ]);
    await sync.close();
  });

  it("onMissing 'skip': updates the master and leaves the merged-away contact merged (RECORD_GONE)", async () => {
    const { sync, master, other } = await mergedPair('skip');
    const [gone, kept] = await sync.applyMany([contact('evt-3', 'C-2', 'Ben B.', 1_000), contact('evt-4', 'C-1', 'Ana A.', 1_000)]);
    expect(kept).toMatchObject({ status: 'updated', recordId: master });
    expect(gone).toMatchObject({ status: 'failed', error: { code: 'RECORD_GONE', retryable: false, message: expect.stringContaining(`id ${other}`) } });
    expect(h!.fake.records('Contact').map((c) => c.Id)).toEqual([master]);
    expect(h!.fake.counts()).toEqual({ [QUERY]: 1, 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 1 });
    await sync.close();
  });
});
