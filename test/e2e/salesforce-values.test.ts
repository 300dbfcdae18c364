/**
 * Field values on Salesforce, end to end over loopback: what `schema pull` reads from the fake's
 * describe, what the fake refuses (with a real org's bodies), and how the adapter names a refused
 * value when no (or stale) definitions let it through.
 */
import { Connection } from 'jsforce';
import { afterEach, describe, expect, it } from 'vitest';
import { salesforceAdapter } from '../../adapters/salesforce/index.js';
import { salesforceCli } from '../../adapters/salesforce/salesforce-cli.js';
import type { SalesforceConfig } from '../../adapters/salesforce/salesforce-config.js';
import { formatFieldDefinitions } from '../../schemas/field-definitions.js';
import { createSync, openLedger } from '../../src/index.js';
import { harness, objects, statuses, TOKEN, type Harness } from './salesforce-helpers.js';

const fast = { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 };
const STALE = 'the field definitions may be stale or missing: run crm-upsert schema pull';
const task = (eventId: string, fields: Record<string, string | number>) => ({
  source: 'sf-values', eventId, op: 'create', object: 'task', target: { object: 'contact', externalId: 'C-1' }, fields: { Subject: 'Follow up', ...fields },
});
const contact = (n: number, fields: Record<string, string | number> = {}) => ({
  source: 'sf-values', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { LastName: `Person ${n}`, ...fields },
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('salesforceCli.pullFields against fakeSalesforce', () => {
  const section = (url: string): SalesforceConfig => ({
    ...salesforceCli.salesStarter.section,
    instanceUrl: url,
    objects: {
      ...salesforceCli.salesStarter.section.objects,
      company: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name', 'Industry', 'Rating__c', 'Not_In_Org__c'] },
    },
  });

  it('reads one describe per sObject and maps types, lengths and active picklist values', async () => {
    h = await harness('loopback');
    h.fake.defineField('Account', 'Rating__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'Hot' }, { value: 'Warm', label: 'Warm lead' }, { value: 'Cold', active: false }] });
    const env = { SF_ACCESS_TOKEN: TOKEN };
    const before = h.fake.count();
    const file = await salesforceCli.pullFields!(section(h.instanceUrl), env, { now: new Date('2026-12-05T23:59:00Z') });
    // Account, Contact, Opportunity, Task (note and task share it): four describes, nothing else.
    expect(h.fake.count() - before).toBe(4);
    expect(h.fake.count('GET /sobjects/Task/describe')).toBe(1);
    expect(file).toMatchObject({ crm: 'salesforce', apiVersion: '60.0', pulledAt: '2026-12-05' });
    expect(file.objects.company).toEqual({
      Name: { type: 'string', maxLength: 255 },
      Industry: expect.objectContaining({ type: 'enumeration', restricted: false }),
      Rating__c: { type: 'enumeration', restricted: true, options: [{ value: 'Hot', label: 'Hot' }, { value: 'Warm', label: 'Warm lead' }] },
    });
    expect(file.objects.company!.Industry!.options).toHaveLength(32);
    expect(file.objects.contact).toEqual({ Email: { type: 'email', maxLength: 80 }, FirstName: { type: 'string', maxLength: 40 }, LastName: { type: 'string', maxLength: 80 }, Phone: { type: 'phone', maxLength: 40 } });
    expect(file.objects.deal).toMatchObject({ CloseDate: { type: 'date' }, Amount: { type: 'number', precision: 18, scale: 2 }, StageName: { type: 'enumeration', restricted: true } });
    expect((file.objects.deal!.StageName!.options ?? []).map((o) => (typeof o === 'string' ? o : o.value))).toEqual([
      'Prospecting', 'Qualification', 'Needs Analysis', 'Value Proposition', 'Id. Decision Makers', 'Perception Analysis', 'Proposal/Price Quote', 'Negotiation/Review', 'Closed Won', 'Closed Lost',
    ]);
    expect(file.objects.task).toEqual({
      Subject: { type: 'string', maxLength: 255 },
      Description: { type: 'string', maxLength: 32000 },
      ActivityDate: { type: 'date' },
      Status: { type: 'enumeration', restricted: true, options: ['Not Started', 'In Progress', 'Completed', 'Waiting on someone else', 'Deferred'].map((v) => ({ value: v, label: v })) },
      Priority: { type: 'enumeration', restricted: true, options: ['High', 'Normal', 'Low'].map((v) => ({ value: v, label: v })) },
    });
  });

  it('writes the same bytes on a second pull, and marks a field nobody may write read-only', async () => {
    h = await harness('loopback');
    h.fake.defineField('Account', 'Rating__c', { type: 'picklist', picklistValues: [{ value: 'Hot' }] });
    h.fake.defineField('Account', 'Not_In_Org__c', { type: 'int', createable: false, updateable: false });
    const pull = () => salesforceCli.pullFields!(section(h!.instanceUrl), { SF_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T08:00:00Z') });
    const first = formatFieldDefinitions(await pull());
    expect(formatFieldDefinitions(await pull())).toBe(first);
    expect(JSON.parse(first).objects.company.Not_In_Org__c).toEqual({ type: 'integer', readOnly: true });
  });

  it('refuses a token the org refuses, without the token in the error', async () => {
    h = await harness('loopback');
    const error = await salesforceCli.pullFields!(section(h.instanceUrl), { SF_ACCESS_TOKEN: 'wrong-token-9f2c1d' }, { now: new Date() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'auth', status: 401 });
    expect(String((error as Error).message)).not.toContain('wrong-token-9f2c1d');
  });
});

describe('fakeSalesforce refuses values as a real org does (bodies seen by jsforce)', () => {
  const upsertRaw = async (sobject: string, records: Array<Record<string, unknown>>) => {
    h = await harness('loopback');
    const conn = new Connection({ instanceUrl: h.instanceUrl, accessToken: TOKEN, version: '60.0' });
    const key = sobject === 'Task' ? 'AI_Idempotency_Key__c' : 'AI_External_Id__c';
    return conn.requestPatch(`/services/data/v60.0/composite/sobjects/${sobject}/${key}`, { allOrNone: false, records: records.map((r) => ({ ...r, attributes: { type: sobject } })) }).then(
      (body) => ({ status: 200, body }),
      (e: { errorCode?: string; message?: string }) => ({ status: 400, body: [{ errorCode: e.errorCode, message: e.message }] }),
    );
  };

  it('per record: a restricted picklist value, and text over the field length; an unrestricted picklist takes anything', async () => {
    const res = await upsertRaw('Task', [
      { AI_Idempotency_Key__c: 'k1', Status: 'done' },
      { AI_Idempotency_Key__c: 'k2', Priority: 'URGENT!!' },
      { AI_Idempotency_Key__c: 'k3', Status: 'Deferred', Priority: 'Low' },
    ]);
    expect(res.body).toEqual([
      { id: null, success: false, errors: [{ statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', message: 'bad value for restricted picklist field: done', fields: ['Status'] }] },
      { id: null, success: false, errors: [{ statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', message: 'bad value for restricted picklist field: URGENT!!', fields: ['Priority'] }] },
      { id: expect.stringMatching(/^00T/), success: true, errors: [], created: true },
    ]);
    await h!.stop();
    const long = 'x'.repeat(81);
    const people = await upsertRaw('Contact', [{ AI_External_Id__c: 'c1', LastName: long }, { AI_External_Id__c: 'c2', LastName: 'x'.repeat(80) }]);
    expect((people.body as Array<{ errors: unknown[] }>)[0]!.errors).toEqual([{ statusCode: 'STRING_TOO_LONG', message: `Last Name: data value too large: ${long} (max length=80)`, fields: ['LastName'] }]);
    expect((people.body as Array<{ success: boolean }>)[1]!.success).toBe(true);
    await h!.stop();
    const account = await upsertRaw('Account', [{ AI_External_Id__c: 'a1', Name: 'Acme', Industry: 'Space Mining' }]);
    expect((account.body as Array<{ success: boolean }>)[0]!.success).toBe(true);
    expect(h!.fake.records('Account')[0]).toMatchObject({ Industry: 'Space Mining' });
  });

  it.each([
    ['12/01/2026', 'VALUE_STRING value 12/01/2026'],
    [20261201, 'VALUE_NUMBER_INT value 20261201'],
    ['2026-02-30', 'VALUE_STRING value 2026-02-30'],
  ])('fails the whole request on ActivityDate %j with JSON_PARSER_ERROR, writing nothing', async (value, said) => {
    const res = await upsertRaw('Task', [{ AI_Idempotency_Key__c: 'ok', Subject: 'fine' }, { AI_Idempotency_Key__c: 'bad', ActivityDate: value }]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual([{ errorCode: 'JSON_PARSER_ERROR', message: expect.stringMatching(new RegExp(`^Cannot deserialize instance of date from ${said} or request may be missing a required field at \\[line:1, column:\\d+\\]$`)) }]);
    expect(h!.fake.records('Task')).toEqual([]);
  });
});

describe('salesforceAdapter under createSync: values Salesforce still refuses', () => {
  it('fails Status "done", Priority "URGENT!!" and a LastName over 80 characters by field, code and value, in one request each', async () => {
    h = await harness('loopback', {}, { objects: { ...objects, task: { ...objects.task!, fields: [...objects.task!.fields, 'Priority'] } } as typeof objects });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    expect(statuses(await sync.applyMany([contact(1)]))).toEqual({ created: 1 });
    const before = h.fake.count();
    const outcomes = await sync.applyMany([task('evt-t1', { Status: 'done' }), task('evt-t2', { Priority: 'URGENT!!' }), task('evt-t3', { Status: 'Completed' })]);
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'failed', 'created']);
    expect(h.fake.count() - before).toBe(1);
    expect(outcomes[0]!.error).toMatchObject({ vendorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', retryable: false, path: 'fields.Status' });
    expect(outcomes[0]!.error!.message).toBe(`[crm-upsert] [salesforce] Task.Status = "done" refused: INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST: bad value for restricted picklist field: done; ${STALE}`);
    expect(outcomes[1]!.error!.message).toContain('Task.Priority = "URGENT!!" refused');
    const long = 'L'.repeat(81);
    const refused = await sync.applyMany([contact(2, { LastName: long })]);
    expect(refused[0]!.error).toMatchObject({ vendorCode: 'STRING_TOO_LONG', path: 'fields.LastName' });
    expect(refused[0]!.error!.message).toMatch(/Contact\.LastName = "L{81}" refused: STRING_TOO_LONG: Last Name: data value too large: L{81} \(max length=80\); the field definitions may be stale/);
    expect(h.fake.count() - before).toBe(2);
    await sync.close();
  });

  it('writes 199 of 200 contacts when one Birthdate is unreadable: the one fails naming field and value, in 2 requests', async () => {
    h = await harness('loopback', {}, { objects: { ...objects, contact: { ...objects.contact!, fields: ['Email', 'FirstName', 'LastName', 'Birthdate'] } } as typeof objects });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const actions = Array.from({ length: 200 }, (_, i) => contact(i, { Birthdate: i === 137 ? '12/01/1990' : '1990-12-01' }));
    const outcomes = await sync.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 199, failed: 1 });
    expect(h.fake.count('PATCH /composite/sobjects/Contact/AI_External_Id__c')).toBe(2);
    expect(h.fake.count()).toBe(2);
    expect(outcomes[137]).toMatchObject({ status: 'failed', error: { vendorCode: 'JSON_PARSER_ERROR', retryable: false, path: 'fields.Birthdate' } });
    expect(outcomes[137]!.error!.message).toBe(`[crm-upsert] [salesforce] Contact.Birthdate = "12/01/1990" refused: JSON_PARSER_ERROR: Salesforce cannot read it as a date (a date is YYYY-MM-DD); ${STALE}`);
    expect(h.fake.records('Contact')).toHaveLength(199);
    expect(h.fake.records('Contact').some((c) => c.AI_External_Id__c === 'C-137')).toBe(false);
    await sync.close();
  });

  it('fails every record holding the unreadable value (a number for a date too) and re-sends the rest once per value', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.applyMany([contact(1)]);
    const before = h.fake.count();
    const outcomes = await sync.applyMany([
      task('evt-d1', { ActivityDate: 20261201 }),
      task('evt-d2', { ActivityDate: '2026-12-01' }),
      task('evt-d3', { ActivityDate: 20261201 }),
      task('evt-d4', { ActivityDate: '12/01/2026' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'created', 'failed', 'failed']);
    // 1st: names 20261201 (two tasks fail); 2nd: names 12/01/2026; 3rd: the one left is written.
    expect(h.fake.count() - before).toBe(3);
    expect(outcomes[0]!.error!.message).toContain('Task.ActivityDate = 20261201 refused: JSON_PARSER_ERROR');
    expect(outcomes[3]!.error!.message).toContain('Task.ActivityDate = "12/01/2026" refused');
    expect(h.fake.records('Task').map((t) => t.ActivityDate)).toEqual(['2026-12-01']);
    await sync.close();
  });

  it('takes the field from the column Salesforce points at: a Subject that reads like the bad date is written', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.applyMany([contact(1)]);
    const before = h.fake.count();
    const outcomes = await sync.applyMany([
      task('evt-s1', { Subject: '12/01/2026', ActivityDate: '2026-12-01' }),
      task('evt-s2', { ActivityDate: '12/01/2026' }),
      task('evt-s3', { Subject: 'Call', ActivityDate: '12/01/2026' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'failed', 'failed']);
    expect(outcomes[2]!.error!.message).toContain('Task.ActivityDate = "12/01/2026" refused');
    expect(h.fake.count() - before).toBe(2);
    expect(h.fake.records('Task').map((t) => t.Subject)).toEqual(['12/01/2026']);
    await sync.close();
  });

  it('splits the batch as before when a JSON_PARSER_ERROR names no value it sent', async () => {
    h = await harness('loopback');
    const adapter = salesforceAdapter({ instanceUrl: h.instanceUrl, accessToken: TOKEN, objects });
    h.fake.failNext('json_parser_error', { endpoint: 'composite/sobjects/Contact' });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    expect(statuses(await sync.applyMany([contact(1), contact(2)]))).toEqual({ created: 2 });
    // The refused request, then each half on its own.
    expect(h.fake.count()).toBe(3);
    await sync.close();
  });
});

describe('salesforceAdapter with pulled definitions: numbers go out digit for digit', () => {
  const dealObjects = {
    ...objects,
    deal: { kind: 'record', sobject: 'Opportunity', externalIdField: 'AI_External_Id__c', fields: ['Name', 'StageName', 'CloseDate', 'Amount', 'Exact__c'] },
  } as typeof objects;
  const deal = (n: number, fields: Record<string, unknown>) => ({
    source: 'sf-values', eventId: `evt-d${n}`, op: 'upsert', object: 'deal', externalId: `D-${n}`, fields: { Name: `Deal ${n}`, StageName: 'Prospecting', CloseDate: '2027-01-15', ...fields },
  });
  /** The records of every Opportunity upsert body, as the text that reached the org. */
  const sentBodies = () => h!.fake.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/composite/sobjects/Opportunity/AI_External_Id__c')).map((r) => r.raw!);

  it('writes each number\'s exact decimal text as a JSON number, and refuses what the field\'s precision or scale cannot hold with 0 calls', async () => {
    h = await harness('loopback', {}, { objects: dealObjects });
    h.fake.defineField('Opportunity', 'Exact__c', { type: 'double', precision: 18, scale: 17 });
    const section: SalesforceConfig = { ...salesforceCli.salesStarter.section, instanceUrl: h.instanceUrl, objects: dealObjects };
    const fieldDefinitions = await salesforceCli.pullFields!(section, { SF_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
    expect(fieldDefinitions.objects.deal).toMatchObject({ Amount: { type: 'number', precision: 18, scale: 2 }, Exact__c: { type: 'number', precision: 18, scale: 17 } });
    const adapter = salesforceAdapter({ instanceUrl: h.instanceUrl, accessToken: TOKEN, objects: dealObjects, fieldDefinitions });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const before = h.fake.count();

    const outcomes = await sync.applyMany([
      deal(1, { Amount: '1234567890123456.78', Exact__c: '0.12345678901234567' }),
      deal(2, { Amount: 48000, Exact__c: '1.50000000000000000' }),
      deal(3, { Amount: ' 0012.50 ' }),
      deal(4, { Amount: '0.125' }),
      deal(5, { Amount: '12345678901234567890' }),
      deal(6, { Exact__c: '0.10000000000000000555' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created', 'created', 'rejected', 'rejected', 'rejected']);
    expect(outcomes.map((o) => o.normalized)).toEqual([undefined, undefined, [{ field: 'Amount', from: ' 0012.50 ', to: '12.50' }], undefined, undefined, undefined]);
    expect(outcomes[3]!.error!.message).toContain('fields.Amount: 0.125 has 3 decimal places; the CRM keeps 2 and would round it');
    expect(outcomes[4]!.error!.message).toContain('fields.Amount: 12345678901234567890 has 20 digits before the decimal point; the CRM holds 16 (precision 18, scale 2)');
    expect(outcomes[5]!.error!.message).toContain('fields.Exact__c: 0.10000000000000000555 has 20 decimal places; the CRM keeps 17 and would round it');
    // One upsert for the three valid deals, nothing for the three refused.
    expect(h.fake.count() - before).toBe(1);
    const [body] = sentBodies();
    expect(body).toContain('"Amount":1234567890123456.78,"Exact__c":0.12345678901234567,');
    expect(body).toContain('"Amount":48000,"Exact__c":1.50000000000000000,');
    expect(body).toContain('"Amount":12.50,');
    expect(body).not.toMatch(/"Amount":"|"Exact__c":"/);
    expect(JSON.parse(body!).records).toHaveLength(3);
    expect(h.fake.records('Opportunity').map((r) => r.AI_External_Id__c)).toEqual(['D-1', 'D-2', 'D-3']);
    await sync.close();
  });

  it('names an unreadable date by its column in a body whose long numbers are written bare, failing only its record', async () => {
    h = await harness('loopback');
    h.fake.defineField('Opportunity', 'Exact__c', { type: 'double', precision: 18, scale: 17 });
    const section: SalesforceConfig = { ...salesforceCli.salesStarter.section, instanceUrl: h.instanceUrl, objects: dealObjects };
    const pulled = await salesforceCli.pullFields!(section, { SF_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
    // Stale definitions: CloseDate taken for text, so the unreadable date reaches the org.
    const fieldDefinitions = { ...pulled, objects: { ...pulled.objects, deal: { ...pulled.objects.deal!, CloseDate: { type: 'string' as const } } } };
    const adapter = salesforceAdapter({ instanceUrl: h.instanceUrl, accessToken: TOKEN, objects: dealObjects, fieldDefinitions });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    // 0.10000000000000001 is 16 characters wider than the double it parses to (0.1): five of them
    // would move a column counted on re-serialized JSON into the record before, whose Name reads
    // like the bad date.
    const outcomes = await sync.applyMany([
      ...[1, 2, 3, 4].map((n) => deal(n, { Exact__c: '0.10000000000000001' })),
      deal(5, { Exact__c: '0.10000000000000001', Name: '12/01/2026' }),
      deal(6, { CloseDate: '12/01/2026' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created', 'created', 'failed']);
    expect(outcomes[5]!.error).toMatchObject({ vendorCode: 'JSON_PARSER_ERROR', path: 'fields.CloseDate' });
    expect(h.fake.records('Opportunity').map((r) => r.AI_External_Id__c)).toEqual(['D-1', 'D-2', 'D-3', 'D-4', 'D-5']);
    expect(sentBodies()[0]).toContain('"Exact__c":0.10000000000000001,');
    await sync.close();
  });
});
