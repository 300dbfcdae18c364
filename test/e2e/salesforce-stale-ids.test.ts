/**
 * A Task's WhoId known to this process from an earlier write that went stale: the contact was
 * deleted in Salesforce (or merged away), perhaps re-created under the same external id by someone
 * else. Salesforce refuses the Id (ENTITY_IS_DELETED); it is dropped, the contact queried again by
 * its external id (one query) and the Task sent once more: on the contact that holds the external
 * id now, or failed as parent-missing when none does. Record links travel as external-id
 * references and use no cached Id. Counted on fakeSalesforce's request log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { salesforceAdapter } from '../../adapters/salesforce/index.js';
import { FakeSalesforceState, fakeSalesforceFromState, type FakeSalesforce } from '../../adapters/salesforce/fake/salesforce-fake.js';
import { createSync, openLedger } from '../../src/index.js';
import { DEFAULT_PARENT_ABSENT_MS } from '../../src/engine/parents.js';
import { objects, TOKEN } from './salesforce-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const contact = (eventId: string, externalId: string) => ({ source: 'sf-test', eventId, op: 'upsert', object: 'contact', externalId, fields: { LastName: `Person ${externalId}`, Email: `${externalId}@example.test` } });
const taskOn = (eventId: string, contactId: string) => ({
  source: 'sf-test', eventId, op: 'create', object: 'task', target: { object: 'contact', externalId: contactId }, fields: { Subject: `follow up ${eventId}` },
});
const TASKS = 'PATCH /composite/sobjects/Task/AI_Idempotency_Key__c';
const QUERY = 'GET /query';

describe('stale Salesforce Ids in one process (salesforceAdapter over loopback)', () => {
  let state: FakeSalesforceState;
  let fake: FakeSalesforce;
  let close: (() => Promise<void>) | undefined;
  const clock = { at: 0 };
  afterEach(async () => close?.());

  const setup = async () => {
    clock.at = Date.parse('2026-11-29T10:00:00Z');
    state = new FakeSalesforceState({ accessToken: TOKEN });
    fake = fakeSalesforceFromState(state);
    const server = await fake.listen();
    close = server.close;
    const adapter = salesforceAdapter({ instanceUrl: server.instanceUrl, accessToken: TOKEN, objects });
    return createSync({ adapter, ledger: openLedger('memory:'), retry: fast, now: () => clock.at, sleep: async () => undefined });
  };
  const whoIds = () => fake.records('Task').map((t) => t.WhoId);

  it('upserts a Task on the contact re-created under the same external id after the one it wrote was deleted: one extra query', async () => {
    const sync = await setup();
    const written = await sync.apply(contact('evt-c1', 'C-1'));
    expect(written.status).toBe('created');
    expect(fake.delete('Contact', written.recordId!)).toBe(true);
    const recreated = state.seed('Contact', { LastName: 'Again', AI_External_Id__c: 'C-1' });
    fake.core.resetLog();
    const task = await sync.apply(taskOn('evt-t1', 'C-1'));
    expect(task.status).toBe('created');
    expect(whoIds()).toEqual([recreated]);
    // The refused Task (ENTITY_IS_DELETED on WhoId), one query of the contact, the Task again.
    expect(fake.counts()).toEqual({ [TASKS]: 2, [QUERY]: 1 });
    // The new Id is what this process knows now: the next Task needs no query.
    fake.core.resetLog();
    expect((await sync.apply(taskOn('evt-t2', 'C-1'))).status).toBe('created');
    expect(fake.counts()).toEqual({ [TASKS]: 1 });
    await sync.close();
  });

  it('fails a Task whose deleted contact has no successor as parent-missing, and upserts it once the contact exists again', async () => {
    const sync = await setup();
    const written = await sync.apply(contact('evt-c2', 'C-2'));
    expect(fake.delete('Contact', written.recordId!)).toBe(true);
    fake.core.resetLog();
    const task = await sync.apply(taskOn('evt-t3', 'C-2'));
    expect(task.status).toBe('failed');
    expect(task.error).toMatchObject({ vendorCode: 'PARENT_NOT_FOUND' });
    expect(task.error?.message).toContain('C-2');
    expect(task.error?.message).not.toContain('ENTITY_IS_DELETED');
    expect(fake.counts()).toEqual({ [TASKS]: 1, [QUERY]: 1 });
    expect(fake.records('Task')).toHaveLength(0);

    const recreated = state.seed('Contact', { LastName: 'Again', AI_External_Id__c: 'C-2' });
    clock.at += DEFAULT_PARENT_ABSENT_MS;
    fake.core.resetLog();
    expect((await sync.apply(taskOn('evt-t3', 'C-2'))).status).toBe('created');
    expect(whoIds()).toEqual([recreated]);
    expect(fake.counts()).toEqual({ [TASKS]: 1, [QUERY]: 1 });
    await sync.close();
  });
});
