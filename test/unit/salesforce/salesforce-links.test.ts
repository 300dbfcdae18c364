import { afterEach, describe, expect, it } from 'vitest';
import { salesforceAdapter, type SalesforceAdapterOptions } from '../../../adapters/salesforce/index.js';
import { salesforceCli, salesforcePermissions } from '../../../adapters/salesforce/salesforce-cli.js';
import { missingReference } from '../../../adapters/salesforce/salesforce-errors.js';
import { fakeSalesforce, type FakeSalesforce } from '../../../adapters/salesforce/fake/salesforce-fake.js';
import { activityLookups, linkTargets, recordValues, relationshipName } from '../../../adapters/salesforce/salesforce-requests.js';
import { checkSalesforceSetup } from '../../../adapters/salesforce/salesforce-setup.js';
import { parentMemoKey, type ActivityWrite, type RecordWrite, type WriteResult } from '../../../src/adapter.js';
import { ConfigError } from '../../../src/errors.js';

const TOKEN = '00DLINKS!AQ4AQlinks.token.5e6f';

const objects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'], links: { company: 'AccountId' } },
  deal: { kind: 'record', sobject: 'Opportunity', externalIdField: 'AI_External_Id__c', fields: ['Name', 'StageName', 'CloseDate'], links: { company: 'AccountId' } },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject'], parents: { contact: 'WhoId', company: 'WhatId', deal: 'WhatId' } },
};
const contactSpec = objects.contact as Extract<SalesforceAdapterOptions['objects'][string], { kind: 'record' }>;
const taskSpec = objects.task as Extract<SalesforceAdapterOptions['objects'][string], { kind: 'activity' }>;

const ref = (object: string, externalId: string) => ({ object, externalId });
const failure = (r: WriteResult | undefined) => (r && !r.ok ? r.error : undefined);

describe('Salesforce link requests', () => {
  it.each([
    ['AccountId', 'Account'],
    ['WhoId', 'Who'],
    ['Partner__c', 'Partner__r'],
    ['ns__Region__c', 'ns__Region__r'],
    ['Account', undefined],
    ['Id', undefined],
  ])('names the relationship of lookup %s: %s', (field, name) => {
    expect(relationshipName(field)).toBe(name);
  });

  it('sends each link as an external-id reference typed with attributes on its relationship, the last one winning on one field', () => {
    const values = recordValues(contactSpec, { externalId: 'c-1', fields: { LastName: 'Ann' }, links: [ref('company', 'old'), ref('company', 'new')] }, linkTargets(objects));
    expect(values).toEqual({ LastName: 'Ann', Account: { attributes: { type: 'Account' }, AI_External_Id__c: 'new' }, AI_External_Id__c: 'c-1' });
    expect(JSON.stringify(values.Account)).toBe('{"attributes":{"type":"Account"},"AI_External_Id__c":"new"}');
  });

  it('sets an activity’s target first, then its links, the last one winning on one field', () => {
    const lookups = activityLookups(taskSpec, { parent: ref('contact', 'c-1'), links: [ref('company', 'acme'), ref('deal', 'd-1')] });
    expect([...lookups]).toEqual([['WhoId', ref('contact', 'c-1')], ['WhatId', ref('deal', 'd-1')]]);
  });

  it.each([
    [[{ statusCode: 'INVALID_FIELD', message: 'Foreign key external ID: acme not found for field AI_External_Id__c in entity Account', fields: [] }], { value: 'acme', field: 'AI_External_Id__c', sobject: 'Account' }],
    [[{ errorCode: 'INVALID_FIELD', message: 'Foreign key external ID: 0116 not found for field Invoice_External_Id__c in entity blng__Invoice__c' }], { value: '0116', field: 'Invoice_External_Id__c', sobject: 'blng__Invoice__c' }],
    [[{ statusCode: 'INVALID_FIELD', message: 'Foreign key external ID: big co/1 not found for field Ext__c in entity Account' }], { value: 'big co/1', field: 'Ext__c', sobject: 'Account' }],
    [[{ statusCode: 'INVALID_FIELD', message: "No such column 'Foo' on sobject of type Contact" }], undefined],
    [[{ statusCode: 'REQUIRED_FIELD_MISSING', message: 'Required fields are missing: [LastName]' }], undefined],
    [undefined, undefined],
  ])('reads the missing reference out of %j', (errors, expected) => {
    expect(missingReference(errors)).toEqual(expected);
  });

  it('previews the links exactly as they are sent: a reference on a record, the looked-up Ids on a Task', () => {
    const sf = { objects };
    const base = { source: 's', eventId: 'e', occurredAt: '2026-12-04T15:00:00Z' };
    const record = salesforceCli.previewRequest(sf, { ...base, op: 'upsert', object: 'contact', externalId: 'c-1', fields: { LastName: 'Lee' }, links: [ref('company', 'acme')] }, 'k1');
    expect(record).toEqual({
      request: 'PATCH /services/data/v60.0/composite/sobjects/Contact/AI_External_Id__c',
      body: { LastName: 'Lee', Account: { attributes: { type: 'Account' }, AI_External_Id__c: 'acme' }, AI_External_Id__c: 'c-1', attributes: { type: 'Contact' } },
    });
    const task = salesforceCli.previewRequest(sf, { ...base, op: 'create', object: 'task', target: ref('contact', 'c-1'), fields: { Subject: 'Call' }, links: [ref('deal', 'd-1')] }, 'k2');
    expect(task.body).toEqual({
      Subject: 'Call',
      WhoId: '<Id of Contact where AI_External_Id__c=c-1>',
      WhatId: '<Id of Opportunity where AI_External_Id__c=d-1>',
      AI_Idempotency_Key__c: 'k2',
      attributes: { type: 'Task' },
    });
  });

  it('asks for Read on the linked objects and Edit on the link fields', () => {
    const perms = salesforcePermissions({ objects });
    expect(perms).toContain('Read on Account');
    expect(perms).toContain('Edit on Contact.AccountId');
    expect(perms).toContain('Edit on Opportunity.AccountId');
    expect(perms).toContain('Read on Opportunity');
  });

  it('refuses a link field whose relationship name cannot be derived', () => {
    const bad = { ...objects, contact: { ...contactSpec, links: { company: 'Account' } } };
    expect(() => salesforceAdapter({ instanceUrl: 'https://x.my.salesforce.com', accessToken: TOKEN, objects: bad })).toThrow(ConfigError);
    expect(() => salesforceAdapter({ instanceUrl: 'https://x.my.salesforce.com', accessToken: TOKEN, objects: bad })).toThrow(/links\.company: "Account" is not a lookup field name/);
  });
});

describe('salesforceAdapter links over loopback', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  async function setup(config: SalesforceAdapterOptions['objects'] = objects) {
    const fake = fakeSalesforce({ accessToken: TOKEN });
    const front = await fake.open('loopback', 'https://links.my.salesforce.com');
    stop = front.stop;
    const adapter = salesforceAdapter({ instanceUrl: front.url, accessToken: TOKEN, objects: config });
    return { fake, adapter, instanceUrl: front.url };
  }

  const account = (id: string): RecordWrite => ({ key: `k-${id}`, object: 'company', externalId: id, fields: { Name: id } });
  const person = (id: string, links?: RecordWrite['links']): RecordWrite => ({ key: `k-${id}`, object: 'contact', externalId: id, fields: { LastName: id }, ...(links ? { links } : {}) });
  const opportunity = (id: string): RecordWrite => ({ key: `k-${id}`, object: 'deal', externalId: id, fields: { Name: id, StageName: 'Prospecting', CloseDate: '2027-01-31' } });
  const task = (key: string, who: string, links?: ActivityWrite['links']): ActivityWrite => ({ key, object: 'task', parent: ref('contact', who), fields: { Subject: key }, ...(links ? { links } : {}) });

  it('fails a record whose linked record does not exist with LINK_NOT_FOUND, writing its neighbours in the same request', async () => {
    const { fake, adapter } = await setup();
    await adapter.upsertRecords('company', [account('acme')]);
    const results = await adapter.upsertRecords('contact', [person('c-1', [ref('company', 'acme')]), person('c-2', [ref('company', 'nope')]), person('c-3')]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(failure(results[1])).toMatchObject({ vendorCode: 'LINK_NOT_FOUND', kind: 'permanent' });
    expect(failure(results[1])!.message).toMatch(/\] link company "nope" \(Account\.AI_External_Id__c\) does not exist in Salesforce/);
    expect(fake.records('Contact').map((c) => [c.AI_External_Id__c, c.AccountId])).toEqual([['c-1', fake.records('Account')[0]!.Id], ['c-3', undefined]]);
    expect(fake.count()).toBe(2);
  });

  it('sets a Task’s Who and What from one query per object, and sends none whose link is missing', async () => {
    const { fake, adapter } = await setup();
    await adapter.upsertRecords('contact', [person('c-1'), person('c-2')]);
    await adapter.upsertRecords('deal', [opportunity('d-1')]);
    const before = fake.count();
    const context = { memo: new Map<string, string>(), absent: new Set<string>() };
    const results = await adapter.createActivities('task', [task('t-1', 'c-1', [ref('deal', 'd-1')]), task('t-2', 'c-2', [ref('deal', 'd-404')]), task('t-3', 'c-2')], context);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(failure(results[1])).toMatchObject({ vendorCode: 'LINK_NOT_FOUND' });
    expect(failure(results[1])!.message).toContain('link deal "d-404" (Opportunity.AI_External_Id__c) does not exist in Salesforce');
    const [c1, c2] = fake.records('Contact');
    const [d1] = fake.records('Opportunity');
    expect(fake.records('Task').map((t) => [t.AI_Idempotency_Key__c, t.WhoId, t.WhatId])).toEqual([['t-1', c1!.Id, d1!.Id], ['t-3', c2!.Id, undefined]]);
    expect(fake.count('GET /query')).toBe(2);
    expect(fake.count() - before).toBe(3);
    // A retry of the batch reads nothing again: found ids are in the memo, the missing one is absent.
    expect(context.absent.has(parentMemoKey('deal', 'd-404'))).toBe(true);
    await adapter.createActivities('task', [task('t-2', 'c-2', [ref('deal', 'd-404')])], context);
    expect(fake.count() - before).toBe(3);
  });

  it('queries nothing for a Task whose Who and What the batch memo knows', async () => {
    const { fake, adapter } = await setup();
    const [c] = await adapter.upsertRecords('contact', [person('c-1')]);
    const [d] = await adapter.upsertRecords('deal', [opportunity('d-1')]);
    const memo = new Map([[parentMemoKey('contact', 'c-1'), (c as { recordId: string }).recordId], [parentMemoKey('deal', 'd-1'), (d as { recordId: string }).recordId]]);
    const before = fake.count();
    const [r] = await adapter.createActivities('task', [task('t-1', 'c-1', [ref('deal', 'd-1')])], { memo });
    expect(r!.ok).toBe(true);
    expect(fake.count() - before).toBe(1);
    expect(fake.count('GET /query')).toBe(0);
  });

  it('is refused by the org when a lookup is mapped to the wrong sObject type (a company in WhoId)', async () => {
    const wrong = { ...objects, task: { ...taskSpec, parents: { contact: 'WhoId', company: 'WhoId' } } };
    const { fake, adapter } = await setup(wrong);
    await adapter.upsertRecords('company', [account('acme')]);
    const [r] = await adapter.createActivities('task', [{ key: 't-1', object: 'task', parent: ref('company', 'acme'), fields: { Subject: 'x' } }]);
    expect(failure(r)).toMatchObject({ vendorCode: 'FIELD_INTEGRITY_EXCEPTION', kind: 'permanent' });
    expect(failure(r)!.message).toContain('id value of incorrect type');
    expect(fake.records('Task')).toEqual([]);
  });
});

describe('checkSalesforceSetup lookups', () => {
  let fake: FakeSalesforce;
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  const LOOKUPS = ['Contact.AccountId', 'Opportunity.AccountId', 'Task.WhoId', 'Task.WhatId'];
  async function check(arrange: (fake: FakeSalesforce) => void = () => undefined) {
    fake = fakeSalesforce({ accessToken: TOKEN });
    arrange(fake);
    const front = await fake.open('loopback', 'https://setup.my.salesforce.com');
    stop = front.stop;
    const report = await checkSalesforceSetup({ instanceUrl: front.url, objects }, { SF_ACCESS_TOKEN: TOKEN }, false);
    return report.findings.filter((f) => LOOKUPS.includes(f.target));
  }
  const problems = (findings: Awaited<ReturnType<typeof check>>) => findings.filter((f) => f.status !== 'ok').map((f) => [f.object, f.target, f.status, f.detail]);

  it('passes every link and parent lookup of the standard sales objects, from the describes it reads anyway', async () => {
    const findings = await check();
    expect(findings.map((f) => `${f.status} ${f.object} -> ${f.target} ${f.role}`)).toEqual([
      'ok contact -> Contact.AccountId (lookup to company: Account)',
      'ok deal -> Opportunity.AccountId (lookup to company: Account)',
      'ok task -> Task.WhoId (allowlisted)',
      'ok task -> Task.WhatId (allowlisted)',
    ]);
    expect(fake.count()).toBe(4);
  });

  it('reports a link field that is missing, naming object, field and fix', async () => {
    const findings = await check((f) => f.removeField('Contact', 'AccountId'));
    expect(problems(findings)).toEqual([['contact', 'Contact.AccountId', 'missing', 'field Contact.AccountId does not exist (or this user cannot see it), so every contact linked to company fails with INVALID_FIELD']]);
    expect(findings[0]!.fix).toContain('objects.contact.links.company');
  });

  it('reports a lookup that points at another sObject, and a field that is no lookup at all', async () => {
    const findings = await check((f) => {
      f.defineField('Opportunity', 'AccountId', { type: 'reference', referenceTo: ['Lead'] });
      f.defineField('Task', 'WhatId', { type: 'string' });
    });
    expect(problems(findings)).toEqual([
      ['deal', 'Opportunity.AccountId', 'problem', 'Opportunity.AccountId does not point at Account (it points at Lead)'],
      ['task', 'Task.WhatId', 'problem', 'Task.WhatId is not a lookup (type string, not reference)'],
    ]);
    expect(findings.find((f) => f.target === 'Task.WhatId')!.fix).toBe('set objects.task.parents.company and objects.task.parents.deal to the lookup field from Task to Account / Opportunity, or remove them');
  });

  it('reports an activity lookup that cannot hold one of its parents', async () => {
    const findings = await check((f) => f.defineField('Task', 'WhatId', { type: 'reference', referenceTo: ['Account', 'Case'] }));
    expect(problems(findings)).toEqual([['task', 'Task.WhatId', 'problem', 'Task.WhatId does not point at Opportunity (it points at Account, Case)']]);
  });

  it('reports a link field the integration user cannot update', async () => {
    const findings = await check((f) => f.defineField('Contact', 'AccountId', { type: 'reference', referenceTo: ['Account'], updateable: false }));
    expect(problems(findings)).toEqual([['contact', 'Contact.AccountId', 'problem', 'Contact.AccountId is read-only for this user (cannot update it)']]);
    expect(findings[0]!.fix).toContain('field-level security');
  });
});
