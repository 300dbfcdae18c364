import { Connection } from 'jsforce';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeSalesforce, type FakeSalesforce } from '../../../adapters/testing/index.js';
import { lookupFieldOf } from '../../../adapters/salesforce/fake/salesforce-fake-references.js';

/** The sales objects and lookup rules of fakeSalesforce, driven by jsforce 3.10.16 on loopback. */
interface SaveResult {
  id: string | null;
  success: boolean;
  created?: boolean;
  errors: Array<{ statusCode?: string; message: string; fields?: string[] }>;
}

let fake: FakeSalesforce;
let conn: Connection;
let close: () => Promise<void>;

beforeEach(async () => {
  fake = fakeSalesforce({ accessToken: 'test-token' });
  const server = await fake.listen();
  close = server.close;
  conn = new Connection({ instanceUrl: server.instanceUrl, accessToken: 'test-token', version: '60.0' });
});
afterEach(() => close());

const upsert = async (sobject: string, records: Record<string, unknown>[], allOrNone = false) =>
  (await conn.sobject(sobject).upsert(records, 'AI_External_Id__c', { allOrNone })) as SaveResult[];
const ok = (r: SaveResult) => expect(r).toMatchObject({ success: true, errors: [] });
const seedAccount = (ext: string) => upsert('Account', [{ AI_External_Id__c: ext, Name: ext.toUpperCase() }]);

describe('fakeSalesforce sales objects', () => {
  it.each([
    ['Account', { Name: 'Acme' }],
    ['Contact', { LastName: 'Lee' }],
    ['Opportunity', { Name: 'Renewal', StageName: 'Prospecting', CloseDate: '2027-01-31' }],
    ['Lead', { LastName: 'Lee', Company: 'Acme' }],
    ['Task', { Subject: 'Call' }],
  ])('upserts %s by AI_External_Id__c', async (sobject, fields) => {
    const [first] = await upsert(sobject, [{ AI_External_Id__c: 'x-1', ...fields }]);
    const [second] = await upsert(sobject, [{ AI_External_Id__c: 'x-1', ...fields }]);
    expect(first).toMatchObject({ success: true, created: true });
    expect(second).toMatchObject({ success: true, created: false, id: first!.id });
    expect(fake.records(sobject)).toHaveLength(1);
  });

  it.each([
    [{}, ['Name', 'StageName', 'CloseDate']],
    [{ Name: 'Renewal' }, ['StageName', 'CloseDate']],
    [{ Name: 'Renewal', StageName: 'Prospecting' }, ['CloseDate']],
  ])('refuses an Opportunity create without its required fields (%j)', async (fields, missing) => {
    const [res] = await upsert('Opportunity', [{ AI_External_Id__c: 'o-1', ...fields }]);
    expect(res).toEqual({ id: null, success: false, errors: [{ statusCode: 'REQUIRED_FIELD_MISSING', message: `Required fields are missing: [${missing.join(', ')}]`, fields: missing }] });
    expect(fake.records('Opportunity')).toEqual([]);
  });

  it('answers a single-record upsert missing required fields with Salesforce\'s 400 array', async () => {
    const res = await fetch(`${conn.instanceUrl}/services/data/v60.0/sobjects/Lead/AI_External_Id__c/l-1`, {
      method: 'PATCH', headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' }, body: JSON.stringify({ FirstName: 'Ann' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual([{ message: 'Required fields are missing: [LastName, Company]', errorCode: 'REQUIRED_FIELD_MISSING', fields: ['LastName', 'Company'] }]);
  });
});

describe('fakeSalesforce references by External ID in sObject Collections upserts', () => {
  it.each([['AccountId', 'Account'], ['Partner__c', 'Partner__r']])('maps lookup %s to relationship name %s', (field, name) => {
    expect(lookupFieldOf(name)).toBe(field);
  });

  it('resolves a Contact\'s and an Opportunity\'s Account by its External ID', async () => {
    await seedAccount('acme');
    const accountId = fake.records('Account')[0]!.Id;
    ok((await upsert('Contact', [{ AI_External_Id__c: 'c-1', LastName: 'Lee', Account: { AI_External_Id__c: 'acme' } }]))[0]!);
    ok((await upsert('Opportunity', [{ AI_External_Id__c: 'o-1', Name: 'Renewal', StageName: 'Prospecting', CloseDate: '2027-01-31', Account: { AI_External_Id__c: 'acme' } }]))[0]!);
    expect(fake.records('Contact')[0]).toMatchObject({ AccountId: accountId });
    expect(fake.records('Contact')[0]).not.toHaveProperty('Account');
    expect(fake.records('Opportunity')[0]).toMatchObject({ AccountId: accountId });
  });

  it('resolves a reference typed with attributes, as the Data Loader sends it', async () => {
    await seedAccount('acme');
    const accountId = fake.records('Account')[0]!.Id;
    const res = await upsert('Contact', [
      { AI_External_Id__c: 'c-1', LastName: 'Lee', Account: { attributes: { type: 'Account' }, AI_External_Id__c: 'acme' } },
      { AI_External_Id__c: 'c-3', LastName: 'Ray', Account: { attributes: { type: 'Account' }, AI_External_Id__c: 'nope' } },
    ]);
    ok(res[0]!);
    expect(res[1]!.errors).toEqual([{ statusCode: 'INVALID_FIELD', message: 'Foreign key external ID: nope not found for field AI_External_Id__c in entity Account', fields: [] }]);
    expect(fake.records('Contact').map((c) => [c.AI_External_Id__c, c.AccountId])).toEqual([['c-1', accountId]]);
    expect(fake.records('Contact')[0]).not.toHaveProperty('Account');
  });

  it('fails only the record whose parent is missing, with Salesforce\'s foreign key message', async () => {
    await seedAccount('acme');
    const res = await upsert('Contact', [
      { AI_External_Id__c: 'c-1', LastName: 'Lee', Account: { AI_External_Id__c: 'acme' } },
      { AI_External_Id__c: 'c-2', LastName: 'Kim', Account: { AI_External_Id__c: 'nope' } },
    ]);
    ok(res[0]!);
    expect(res[1]).toEqual({ id: null, success: false, errors: [{ statusCode: 'INVALID_FIELD', message: 'Foreign key external ID: nope not found for field AI_External_Id__c in entity Account', fields: [] }] });
    expect(fake.records('Contact').map((c) => c.AI_External_Id__c)).toEqual(['c-1']);
  });

  it('rolls the whole batch back on a missing parent with allOrNone', async () => {
    await seedAccount('acme');
    const res = await upsert('Contact', [
      { AI_External_Id__c: 'c-1', LastName: 'Lee', Account: { AI_External_Id__c: 'acme' } },
      { AI_External_Id__c: 'c-2', LastName: 'Kim', Account: { AI_External_Id__c: 'nope' } },
    ], true);
    expect(res.map((r) => r.errors[0]?.statusCode)).toEqual(['ALL_OR_NONE_OPERATION_ROLLED_BACK', 'INVALID_FIELD']);
    expect(fake.records('Contact')).toEqual([]);
  });

  it('refuses a reference naming two key fields', async () => {
    const [res] = await upsert('Contact', [{ AI_External_Id__c: 'c-1', LastName: 'Lee', Account: { AI_External_Id__c: 'acme', Name: 'Acme' } }]);
    expect(res!.errors).toEqual([{ statusCode: 'INVALID_FIELD', message: 'More than 1 field provided in an external foreign key reference in entity: Account', fields: [] }]);
  });

  it('resolves a Task\'s Who and What by External ID with attributes.type', async () => {
    await seedAccount('acme');
    ok((await upsert('Lead', [{ AI_External_Id__c: 'l-1', LastName: 'Lee', Company: 'Acme' }]))[0]!);
    const [res] = await upsert('Task', [{
      AI_External_Id__c: 't-1', Subject: 'Call',
      Who: { attributes: { type: 'Lead' }, AI_External_Id__c: 'l-1' },
      What: { attributes: { type: 'Account' }, AI_External_Id__c: 'acme' },
    }]);
    ok(res!);
    expect(fake.records('Task')[0]).toMatchObject({ WhoId: fake.records('Lead')[0]!.Id, WhatId: fake.records('Account')[0]!.Id });
  });

  it('refuses a polymorphic reference without attributes.type', async () => {
    const [res] = await upsert('Task', [{ AI_External_Id__c: 't-1', Who: { AI_External_Id__c: 'c-1' } }]);
    expect(res!.errors[0]).toMatchObject({ statusCode: 'INVALID_FIELD' });
    expect(fake.records('Task')).toEqual([]);
  });
});

describe('fakeSalesforce polymorphic Task lookups', () => {
  const ids = async () => {
    await seedAccount('acme');
    await upsert('Contact', [{ AI_External_Id__c: 'c-1', LastName: 'Lee' }]);
    await upsert('Opportunity', [{ AI_External_Id__c: 'o-1', Name: 'Renewal', StageName: 'Prospecting', CloseDate: '2027-01-31' }]);
    return { account: fake.records('Account')[0]!.Id, contact: fake.records('Contact')[0]!.Id, opportunity: fake.records('Opportunity')[0]!.Id };
  };

  it.each([
    ['WhoId', 'account', 'Name ID'],
    ['WhoId', 'opportunity', 'Name ID'],
    ['WhatId', 'contact', 'Related To ID'],
  ] as const)('refuses a %s pointing at an %s with FIELD_INTEGRITY_EXCEPTION', async (field, target, label) => {
    const id = (await ids())[target];
    const [res] = await upsert('Task', [{ AI_External_Id__c: 't-1', [field]: id }]);
    expect(res!.errors).toEqual([{ statusCode: 'FIELD_INTEGRITY_EXCEPTION', message: `${label}: id value of incorrect type: ${id}`, fields: [field] }]);
  });

  it.each([['WhoId', 'contact'], ['WhatId', 'account'], ['WhatId', 'opportunity']] as const)('accepts a %s pointing at a %s', async (field, target) => {
    const id = (await ids())[target];
    ok((await upsert('Task', [{ AI_External_Id__c: 't-1', [field]: id }]))[0]!);
    expect(fake.records('Task')[0]![field]).toBe(id);
  });

  it('refuses a Who by External ID of the wrong type with FIELD_INTEGRITY_EXCEPTION', async () => {
    await seedAccount('acme');
    const [res] = await upsert('Task', [{ AI_External_Id__c: 't-1', Who: { attributes: { type: 'Account' }, AI_External_Id__c: 'acme' } }]);
    expect(res!.errors[0]).toMatchObject({ statusCode: 'FIELD_INTEGRITY_EXCEPTION', fields: ['WhoId'] });
  });
});
