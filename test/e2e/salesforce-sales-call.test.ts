/**
 * A sales call written to Salesforce with links: the account, its contact and opportunity
 * (AccountId set by an external-id reference inside the upsert) and the call's Task (WhoId the
 * contact, WhatId the opportunity), through createSync, the real jsforce 3.10.16 and the fake
 * org over loopback. Every test asserts the org's records and the exact requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { harness, statuses, type Harness } from './salesforce-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const AT = '2026-12-04T15:00:00Z';

const objects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'], links: { company: 'AccountId' } },
  deal: { kind: 'record', sobject: 'Opportunity', externalIdField: 'AI_External_Id__c', fields: ['Name', 'StageName', 'CloseDate', 'Amount'], links: { company: 'AccountId' } },
  task: {
    kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'ActivityDate', 'Status'],
    parents: { contact: 'WhoId', company: 'WhatId', deal: 'WhatId' },
  },
};

type Link = { object: string; externalId: string };
const company = (id: string, eventId = `evt-${id}`) => ({ source: 'call', eventId, occurredAt: AT, op: 'upsert', object: 'company', externalId: id, fields: { Name: `Company ${id}` } });
const contact = (id: string, links: Link[], eventId = `evt-${id}`, occurredAt = AT) => ({
  source: 'call', eventId, occurredAt, op: 'upsert', object: 'contact', externalId: id, fields: { LastName: `Person ${id}`, Email: `${id}@example.test` }, links,
});
const deal = (id: string, links: Link[]) => ({
  source: 'call', eventId: `evt-${id}`, occurredAt: AT, op: 'upsert', object: 'deal', externalId: id,
  fields: { Name: `Deal ${id}`, StageName: 'Prospecting', CloseDate: '2027-01-31' }, links,
});
const callTask = (eventId: string, who: string, links: Link[]) => ({
  source: 'call', eventId, occurredAt: AT, op: 'create', object: 'task', target: { object: 'contact', externalId: who },
  fields: { Subject: 'Discovery call', Description: 'Budget approved; follow up next week', ActivityDate: '2026-12-11' }, links,
});
const to = (object: string, externalId: string): Link => ({ object, externalId });
const byExt = (rows: Array<Record<string, unknown>>, ext: string) => rows.find((r) => r.AI_External_Id__c === ext);

describe('a sales call written to Salesforce with links (jsforce over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  const start = async () => {
    h = await harness('loopback', {}, { objects });
    return createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
  };

  it('writes account, contact, opportunity and task once each with their lookups in 4 requests, and 0 the second time', async () => {
    const sync = await start();
    const actions = [
      callTask('evt-call-1', 'c-ann', [to('deal', 'd-1')]),
      contact('c-ann', [to('company', 'acme')]),
      deal('d-1', [to('company', 'acme')]),
      company('acme'),
    ];
    expect(statuses(await sync.applyMany(actions))).toEqual({ created: 4 });

    const account = h.fake.records('Account');
    const [ann] = h.fake.records('Contact');
    const [opp] = h.fake.records('Opportunity');
    const tasks = h.fake.records('Task');
    expect(account).toHaveLength(1);
    expect(ann!.AccountId).toBe(account[0]!.Id);
    expect(opp!.AccountId).toBe(account[0]!.Id);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ WhoId: ann!.Id, WhatId: opp!.Id, Subject: 'Discovery call' });
    // Account, then Contact and Opportunity (their links resolved inside the upsert), then the
    // Task, whose Who and What were just upserted in this call: no query at all.
    expect(h.fake.counts()).toEqual({
      'PATCH /composite/sobjects/Account/AI_External_Id__c': 1,
      'PATCH /composite/sobjects/Contact/AI_External_Id__c': 1,
      'PATCH /composite/sobjects/Opportunity/AI_External_Id__c': 1,
      'PATCH /composite/sobjects/Task/AI_Idempotency_Key__c': 1,
    });
    expect(h.fake.count()).toBe(4);

    expect(statuses(await sync.applyMany(actions))).toEqual({ replayed: 4 });
    expect(h.fake.count()).toBe(4);
    expect(h.adapter.apiCalls()).toBe(4);
    await sync.close();
  });

  it('sends the link as an external-id reference on the relationship, in the upsert itself', async () => {
    const sync = await start();
    await sync.applyMany([company('acme'), contact('c-ann', [to('company', 'acme')])]);
    const upsert = h.fake.requests.find((r) => r.path.endsWith('/composite/sobjects/Contact/AI_External_Id__c'))!;
    expect((upsert.body as { records: unknown[] }).records).toEqual([
      { attributes: { type: 'Contact' }, LastName: 'Person c-ann', Email: 'c-ann@example.test', Account: { attributes: { type: 'Account' }, AI_External_Id__c: 'acme' }, AI_External_Id__c: 'c-ann' },
    ]);
    // As Salesforce's Data Loader sends it: the nested record's attributes first.
    expect(JSON.stringify((upsert.body as { records: Array<{ Account: unknown }> }).records[0]!.Account)).toBe('{"attributes":{"type":"Account"},"AI_External_Id__c":"acme"}');
    expect(h.fake.records('Contact')[0]).toMatchObject({ AccountId: h.fake.records('Account')[0]!.Id });
    await sync.close();
  });

  it('fails only the contact whose account does not exist, naming the link, and sets AccountId on a retry once it exists', async () => {
    const sync = await start();
    const lost = contact('c-lost', [to('company', 'ghost')]);
    const outcomes = await sync.applyMany([company('acme'), contact('c-ann', [to('company', 'acme')]), lost, contact('c-bob', [to('company', 'acme')])]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created', 'failed', 'created']);
    const failed = outcomes[2]!;
    expect(failed.error).toMatchObject({ vendorCode: 'LINK_NOT_FOUND' });
    expect(failed.error!.message).toContain('link company "ghost" (Account.AI_External_Id__c) does not exist in Salesforce');
    expect(failed.error!.message).toContain('Foreign key external ID: ghost not found for field AI_External_Id__c in entity Account');
    expect(h.fake.records('Contact').map((c) => c.AI_External_Id__c)).toEqual(['c-ann', 'c-bob']);
    // Not retried within the call: the account would not appear by waiting.
    expect(h.fake.count('Contact')).toBe(1);

    expect(statuses(await sync.applyMany([company('ghost')]))).toEqual({ created: 1 });
    const retried = await sync.applyMany([lost]);
    expect(statuses(retried)).toEqual({ created: 1 });
    const ghost = byExt(h.fake.records('Account'), 'ghost')!;
    expect(byExt(h.fake.records('Contact'), 'c-lost')!.AccountId).toBe(ghost.Id);
    expect(h.fake.count()).toBe(4);
    await sync.close();
  });

  it('links 200 contacts to 20 accounts with no request beyond the two upserts', async () => {
    const sync = await start();
    const accounts = Array.from({ length: 20 }, (_, i) => company(`acct-${i}`));
    const people = Array.from({ length: 200 }, (_, i) => contact(`p-${i}`, [to('company', `acct-${i % 20}`)]));
    expect(statuses(await sync.applyMany([...people, ...accounts]))).toEqual({ created: 220 });
    expect(h.fake.counts()).toEqual({ 'PATCH /composite/sobjects/Account/AI_External_Id__c': 1, 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 1 });
    const idOf = new Map(h.fake.records('Account').map((a) => [a.AI_External_Id__c, a.Id]));
    const rows = h.fake.records('Contact');
    expect(rows).toHaveLength(200);
    for (const [i, row] of rows.entries()) expect(row.AccountId).toBe(idOf.get(`acct-${i % 20}`));
    await sync.close();
  });

  it('gives the contact the later event’s account when two events for it are merged into one write', async () => {
    const sync = await start();
    await sync.applyMany([company('old-co'), company('new-co')]);
    const before = h.fake.count();
    const outcomes = await sync.applyMany([
      contact('c-ann', [to('company', 'new-co')], 'evt-later', '2026-12-04T15:05:00Z'),
      contact('c-ann', [to('company', 'old-co')], 'evt-earlier', '2026-12-04T15:00:00Z'),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['created', 'updated']);
    expect(h.fake.count() - before).toBe(1);
    const sent = h.fake.requests.at(-1)!.body as { records: Array<Record<string, unknown>> };
    expect(sent.records).toHaveLength(1);
    expect(sent.records[0]!.Account).toEqual({ attributes: { type: 'Account' }, AI_External_Id__c: 'new-co' });
    const [ann] = h.fake.records('Contact');
    expect(ann!.AccountId).toBe(byExt(h.fake.records('Account'), 'new-co')!.Id);
    await sync.close();
  });

  it('retries an upsert whose response was lost after commit: no duplicates, lookups right', async () => {
    const sync = await start();
    h.fake.failNext('lost_response', { endpoint: 'composite/sobjects/Contact' });
    h.fake.failNext('lost_response', { endpoint: 'composite/sobjects/Task' });
    const outcomes: Outcome[] = await sync.applyMany([
      company('acme'),
      contact('c-ann', [to('company', 'acme')]),
      deal('d-1', [to('company', 'acme')]),
      callTask('evt-call-1', 'c-ann', [to('deal', 'd-1')]),
    ]);
    expect(outcomes.every((o) => o.status === 'created' || o.status === 'updated')).toBe(true);
    const [acme] = h.fake.records('Account');
    const contacts = h.fake.records('Contact');
    const [opp] = h.fake.records('Opportunity');
    expect(contacts).toHaveLength(1);
    expect(contacts[0]!.AccountId).toBe(acme!.Id);
    expect(h.fake.records('Task')).toEqual([expect.objectContaining({ WhoId: contacts[0]!.Id, WhatId: opp!.Id })]);
    // Each lost response costs one more upsert of the same records, nothing else.
    expect(h.fake.count('PATCH /composite/sobjects/Contact')).toBe(2);
    expect(h.fake.count('PATCH /composite/sobjects/Task')).toBe(2);
    expect(h.fake.count('GET /query')).toBe(0);
    expect(h.fake.count()).toBe(6);
    await sync.close();
  });
});
