import http from 'node:http';
import { Connection } from 'jsforce';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeSalesforce, fakeSalesforceFromState, FakeSalesforceState, type FakeSalesforce } from '../../../adapters/salesforce/fake/salesforce-fake.js';

let origins = 0;
const fronts = ['loopback', 'nock'] as const;
const open = (fake: FakeSalesforce, front: (typeof fronts)[number]) =>
  fake.open(front, `https://fake${++origins}.my.salesforce.com`).then((f) => ({ instanceUrl: f.url, stop: f.stop }));

interface SaveResult {
  id: string | null;
  success: boolean;
  created?: boolean;
  errors: Array<{ statusCode?: string; errorCode?: string; message: string }>;
}

describe.each(fronts)('fakeSalesforce over %s (driven by jsforce 3.10.16)', (kind) => {
  let stop: () => Promise<void> = async () => undefined;
  afterEach(() => stop());

  async function org(version = '60.0', options: Parameters<typeof fakeSalesforce>[0] = {}) {
    const fake = fakeSalesforce(options);
    const front = await open(fake, kind);
    stop = front.stop;
    const conn = new Connection({ instanceUrl: front.instanceUrl, accessToken: 'test-token', version });
    return { fake, conn, instanceUrl: front.instanceUrl };
  }
  const contact = (ext: string, extra: Record<string, unknown> = {}) => ({ AI_External_Id__c: ext, LastName: `L-${ext}`, ...extra });

  it('creates, then updates, through the collection upsert, results in order', async () => {
    const { fake, conn } = await org();
    const first = (await conn.sobject('Contact').upsert([contact('a'), contact('b')], 'AI_External_Id__c')) as SaveResult[];
    expect(first.map((r) => [r.success, r.created])).toEqual([[true, true], [true, true]]);
    const second = (await conn.sobject('Contact').upsert([contact('b', { FirstName: 'Bo' }), contact('c')], 'AI_External_Id__c')) as SaveResult[];
    expect(second.map((r) => r.created)).toEqual([false, true]);
    expect(second[0]!.id).toBe(first[1]!.id);
    expect(fake.records('Contact').map((r) => r.AI_External_Id__c)).toEqual(['a', 'b', 'c']);
    expect(fake.records('Contact')[1]).toMatchObject({ FirstName: 'Bo', LastName: 'L-b' });
    expect(fake.count('PATCH /composite/sobjects/Contact/AI_External_Id__c')).toBe(2);
  });

  it('reports per-record errors with statusCode inside an HTTP 200 and commits the rest', async () => {
    const { fake, conn } = await org();
    fake.defineField('Contact', 'Badge__c', { unique: true });
    await conn.sobject('Contact').upsert([contact('a', { Badge__c: 'B1' })], 'AI_External_Id__c');
    const res = (await conn.sobject('Contact').upsert(
      [contact('b', { Badge__c: 'B1' }), contact('c', { Email: 'not-an-email' }), { AI_External_Id__c: 'd' }, contact('e')],
      'AI_External_Id__c',
    )) as SaveResult[];
    expect(res.map((r) => r.success)).toEqual([false, false, false, true]);
    expect(res.map((r) => r.errors[0]?.statusCode)).toEqual(['DUPLICATE_VALUE', 'INVALID_EMAIL_ADDRESS', 'REQUIRED_FIELD_MISSING', undefined]);
    expect(res[0]!.errors[0]!.message).toMatch(/^duplicate value found: Badge__c duplicates value on record with id: 003/);
    expect(fake.records('Contact').map((r) => r.AI_External_Id__c)).toEqual(['a', 'e']);
  });

  it('rolls everything back with allOrNone', async () => {
    const { fake, conn } = await org();
    await conn.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c');
    const res = (await conn.sobject('Contact').upsert([contact('a', { FirstName: 'Changed' }), contact('b', { Email: 'bad' })], 'AI_External_Id__c', { allOrNone: true })) as SaveResult[];
    expect(res.map((r) => r.errors[0]?.statusCode)).toEqual(['ALL_OR_NONE_OPERATION_ROLLED_BACK', 'INVALID_EMAIL_ADDRESS']);
    expect(fake.records('Contact')).toHaveLength(1);
    expect(fake.records('Contact')[0]!.FirstName).toBeUndefined();
  });

  it('rejects more than 200 records and an unknown field with a 400', async () => {
    const { fake, conn } = await org();
    const many = Array.from({ length: 201 }, (_, i) => contact(`x${i}`));
    await expect(conn.sobject('Contact').upsert(many, 'AI_External_Id__c')).rejects.toMatchObject({ errorCode: 'EXCEEDED_ID_LIMIT' });
    await expect(conn.sobject('Contact').upsert([contact('a', { Nope__c: 1 })], 'AI_External_Id__c')).rejects.toMatchObject({ errorCode: 'INVALID_FIELD' });
    expect(fake.records('Contact')).toHaveLength(0);
  });

  it('answers the single-record upsert with 201, then 200 and created:false', async () => {
    const { conn } = await org();
    expect(await conn.sobject('Contact').upsert(contact('s1'), 'AI_External_Id__c')).toMatchObject({ success: true, created: true });
    expect(await conn.sobject('Contact').upsert(contact('s1'), 'AI_External_Id__c')).toMatchObject({ success: true, created: false });
  });

  it('answers an update with 204 on API versions up to 45.0', async () => {
    const { conn } = await org('45.0');
    expect(await conn.sobject('Contact').upsert(contact('s1'), 'AI_External_Id__c')).toMatchObject({ success: true, created: true });
    expect(await conn.sobject('Contact').upsert(contact('s1'), 'AI_External_Id__c')).toEqual({ success: true, errors: [] });
  });

  it('answers 300 when a non-unique external id matches two records', async () => {
    const { fake, conn } = await org();
    fake.defineField('Contact', 'Legacy_Id__c', { externalId: true, unique: false });
    await conn.sobject('Contact').upsert([contact('a', { Legacy_Id__c: 'L' }), contact('b', { Legacy_Id__c: 'L' })], 'AI_External_Id__c');
    await expect(conn.sobject('Contact').upsert({ Legacy_Id__c: 'L', LastName: 'X' }, 'Legacy_Id__c')).rejects.toMatchObject({ errorCode: 'MULTIPLE_CHOICES' });
  });

  it.each([['Email'], ['Missing__c']])('answers 404 NOT_FOUND when upserting by %s (not an External ID)', async (field) => {
    const { conn } = await org();
    await expect(conn.sobject('Contact').upsert({ [field]: 'v@x.io', LastName: 'X' }, field)).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
    await expect(conn.sobject('Contact').upsert([{ [field]: 'v@x.io', LastName: 'X' }], field)).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
  });

  it('shows why arrays are used: the single-record path puts the unencoded id in the URL (jsforce #1069)', async () => {
    const { fake, conn } = await org();
    await conn.sobject('Contact').upsert(contact('a b/c?d#e'), 'AI_External_Id__c');
    expect(fake.records('Contact')[0]!.AI_External_Id__c).toBe('a b/c');
    await conn.sobject('Contact').upsert([contact('a b/c?d#e')], 'AI_External_Id__c');
    expect(fake.records('Contact').map((r) => r.AI_External_Id__c)).toEqual(['a b/c', 'a b/c?d#e']);
  });

  it('answers the SOQL subset with unescaped literals and case-insensitive matching', async () => {
    const { conn } = await org();
    await conn.sobject('Contact').upsert([contact("O'Brien"), contact('back\\slash'), contact('ÜNI'), contact('other')], 'AI_External_Id__c');
    const inList = await conn.query<{ AI_External_Id__c: string }>("SELECT Id, AI_External_Id__c FROM Contact WHERE AI_External_Id__c IN ('O\\'Brien', 'back\\\\slash','üni')");
    expect(inList.records.map((r) => r.AI_External_Id__c).sort()).toEqual(["O'Brien", 'back\\slash', 'ÜNI'].sort());
    const eq = await conn.query<{ Id: string }>("SELECT Id FROM Contact WHERE AI_External_Id__c = 'other' LIMIT 1");
    expect(eq.totalSize).toBe(1);
    expect(eq.records[0]!.Id).toMatch(/^003/);
  });

  it.each([
    ['SELECT FROM Contact', 'MALFORMED_QUERY'],
    ["SELECT Id FROM Contact WHERE AI_External_Id__c LIKE 'a%'", 'MALFORMED_QUERY'],
    ["SELECT Id FROM Contact WHERE AI_External_Id__c IN ('a'", 'MALFORMED_QUERY'],
    ["SELECT Id FROM Contact WHERE AI_External_Id__c = 'a' OR Id != null", 'MALFORMED_QUERY'],
    ['SELECT Id, Nope__c FROM Contact', 'INVALID_FIELD'],
    ['SELECT Id FROM Contactt', 'INVALID_TYPE'],
  ])('rejects %j with %s', async (soql, code) => {
    const { conn } = await org();
    await expect(conn.query(soql)).rejects.toMatchObject({ errorCode: code });
  });

  it('describes fields with their External ID and Unique flags', async () => {
    const { conn } = await org();
    const d = (await conn.sobject('Task').describe()) as unknown as { fields: Array<{ name: string; externalId: boolean; unique: boolean; caseSensitive: boolean }> };
    expect(d.fields.find((f) => f.name === 'AI_Idempotency_Key__c')).toMatchObject({ externalId: true, unique: true, caseSensitive: true });
    expect(d.fields.find((f) => f.name === 'Subject')).toMatchObject({ externalId: false, unique: false });
  });

  it('matches a Unique case-insensitive external id regardless of case, as a real org does', async () => {
    const { fake, conn } = await org();
    fake.defineField('Contact', 'AI_External_Id__c', { externalId: true, unique: true, caseSensitive: false });
    const first = (await conn.sobject('Contact').upsert([contact('ACME-1')], 'AI_External_Id__c')) as SaveResult[];
    const second = (await conn.sobject('Contact').upsert([contact('acme-1', { FirstName: 'merged' })], 'AI_External_Id__c')) as SaveResult[];
    expect(second[0]).toMatchObject({ success: true, created: false, id: first[0]!.id });
    expect(fake.records('Contact')).toHaveLength(1);
    fake.defineField('Contact', 'AI_External_Id__c', { externalId: true, unique: true });
    await conn.sobject('Contact').upsert([contact('Acme-1')], 'AI_External_Id__c');
    expect(fake.records('Contact')).toHaveLength(2);
  });

  it('refuses fields the user may not create or update, describes them so, and can remove a field', async () => {
    const { fake, conn } = await org();
    fake.defineField('Contact', 'Score__c', { createable: false, updateable: false });
    fake.defineField('Contact', 'Tier__c', { updateable: false });
    const created = (await conn.sobject('Contact').upsert([contact('a', { Score__c: '1' }), contact('b', { Tier__c: 'gold' })], 'AI_External_Id__c')) as SaveResult[];
    expect(created[0]!.errors[0]).toMatchObject({ statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE' });
    expect(created[0]!.errors[0]!.message).toContain('Unable to create/update fields: Score__c');
    expect(created[1]).toMatchObject({ success: true, created: true });
    const updated = (await conn.sobject('Contact').upsert([contact('b', { Tier__c: 'silver' })], 'AI_External_Id__c')) as SaveResult[];
    expect(updated[0]!.errors[0]).toMatchObject({ statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE' });
    const d = (await conn.sobject('Contact').describe()) as unknown as { fields: Array<{ name: string; createable: boolean; updateable: boolean }> };
    expect(d.fields.find((f) => f.name === 'Score__c')).toMatchObject({ createable: false, updateable: false });
    fake.removeField('Contact', 'Phone');
    await expect(conn.sobject('Contact').upsert([contact('c', { Phone: '1' })], 'AI_External_Id__c')).rejects.toMatchObject({ errorCode: 'INVALID_FIELD' });
  });

  it('serves an injected html_error as a 503 text/html page, which jsforce turns into ERROR_HTTP_503 with the raw text', async () => {
    const { fake, conn } = await org();
    fake.failNext('html_error');
    const err = (await conn.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c').catch((e: unknown) => e)) as { errorCode: string; message: string };
    expect(err.errorCode).toBe('ERROR_HTTP_503');
    expect(err.message).toMatch(/^<!DOCTYPE html>/);
    expect(err.message.length).toBeGreaterThan(4000);
    expect(fake.records('Contact')).toHaveLength(0);
  });

  it('commits every record of an injected missing_result, then leaves the last result out', async () => {
    const { fake, conn } = await org();
    fake.failNext('missing_result');
    const results = (await conn.sobject('Contact').upsert([contact('a'), contact('b')], 'AI_External_Id__c')) as SaveResult[];
    expect(results).toHaveLength(1);
    expect(fake.records('Contact')).toHaveLength(2);
  });

  it('requires Task.WhoId to reference an existing Contact', async () => {
    const { fake, conn } = await org();
    const [c] = (await conn.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c')) as SaveResult[];
    await conn.sobject('Account').upsert([{ AI_External_Id__c: 'acc', Name: 'Acme' }], 'AI_External_Id__c');
    const accountId = fake.records('Account')[0]!.Id;
    const res = (await conn.sobject('Task').upsert(
      [
        { AI_Idempotency_Key__c: 'k1', WhoId: c!.id, Subject: 'ok' },
        { AI_Idempotency_Key__c: 'k2', WhoId: '003000000000ZZZAAA', Subject: 'gone' },
        { AI_Idempotency_Key__c: 'k3', WhoId: accountId, Subject: 'wrong type' },
      ],
      'AI_Idempotency_Key__c',
    )) as SaveResult[];
    expect(res.map((r) => r.errors[0]?.statusCode ?? 'ok')).toEqual(['ok', 'INVALID_CROSS_REFERENCE_KEY', 'FIELD_INTEGRITY_EXCEPTION']);
    expect(fake.records('Task')).toEqual([expect.objectContaining({ AI_Idempotency_Key__c: 'k1', WhoId: c!.id, Status: 'Not Started' })]);
  });

  it('fails the next records with UNABLE_TO_LOCK_ROW without committing them', async () => {
    const { fake, conn } = await org();
    fake.lockRowNext(1);
    const res = (await conn.sobject('Contact').upsert([contact('a'), contact('b')], 'AI_External_Id__c')) as SaveResult[];
    expect(res.map((r) => r.errors[0]?.statusCode ?? 'ok')).toEqual(['UNABLE_TO_LOCK_ROW', 'ok']);
    expect(fake.records('Contact').map((r) => r.AI_External_Id__c)).toEqual(['b']);
  });

  it('blocks a duplicate-rule match unless the request sends allowSave', async () => {
    const { fake, conn } = await org();
    fake.addDuplicateRule('Contact', 'Email');
    await conn.sobject('Contact').upsert([contact('a', { Email: 'same@x.io' })], 'AI_External_Id__c');
    const blocked = (await conn.sobject('Contact').upsert([contact('b', { Email: 'same@x.io' })], 'AI_External_Id__c')) as SaveResult[];
    expect(blocked[0]!.errors[0]!.statusCode).toBe('DUPLICATES_DETECTED');
    const allowed = (await conn.sobject('Contact').upsert([contact('b', { Email: 'same@x.io' })], 'AI_External_Id__c', { headers: { 'Sforce-Duplicate-Rule-Header': 'allowSave=true' } })) as SaveResult[];
    expect(allowed[0]!.success).toBe(true);
  });

  it('sends Sforce-Limit-Info on every response and refuses requests past the daily allocation', async () => {
    const { fake, conn } = await org('60.0', { dailyLimit: 100, apiUsed: 98 });
    await conn.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c');
    expect(conn.limitInfo.apiUsage).toEqual({ used: 99, limit: 100 });
    await conn.sobject('Contact').upsert([contact('b')], 'AI_External_Id__c');
    await expect(conn.sobject('Contact').upsert([contact('c')], 'AI_External_Id__c')).rejects.toMatchObject({ errorCode: 'REQUEST_LIMIT_EXCEEDED', message: 'TotalRequests Limit exceeded.' });
    expect(fake.records('Contact')).toHaveLength(2);
    fake.setApiUsage(0);
    await conn.sobject('Contact').upsert([contact('c')], 'AI_External_Id__c');
    expect(fake.apiUsage()).toEqual({ used: 1, limit: 100 });
  });

  it('answers 401 INVALID_SESSION_ID without a Bearer token or with the wrong one', async () => {
    const { instanceUrl } = await org('60.0', { accessToken: 'right-token' });
    const wrong = new Connection({ instanceUrl, accessToken: 'wrong-token', version: '60.0' });
    await expect(wrong.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c')).rejects.toMatchObject({ errorCode: 'INVALID_SESSION_ID' });
    const none = new Connection({ instanceUrl, version: '60.0' });
    await expect(none.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c')).rejects.toMatchObject({ errorCode: 'INVALID_SESSION_ID' });
    const right = new Connection({ instanceUrl, accessToken: 'right-token', version: '60.0' });
    await expect(right.sobject('Contact').upsert([contact('a')], 'AI_External_Id__c')).resolves.toHaveLength(1);
  });
});

describe('fakeSalesforce wire format', () => {
  it('answers with application/json, errors included', async () => {
    const fake = fakeSalesforce();
    const server = await fake.listen();
    try {
      const res = await new Promise<{ status: number; type: string | undefined; limit: string | undefined; body: string }>((resolve, reject) => {
        http.get(`${server.instanceUrl}/services/data/v60.0/query?q=SELECT`, (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, type: r.headers['content-type'], limit: r.headers['sforce-limit-info'] as string | undefined, body }));
        }).on('error', reject);
      });
      expect(res.status).toBe(401);
      expect(res.type).toMatch(/^application\/json/);
      expect(res.limit).toBe('api-usage=0/15000');
      expect(JSON.parse(res.body)).toEqual([{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }]);
    } finally {
      await server.close();
    }
  });
});

describe('fakeSalesforce merges', () => {
  it('merges two Accounts into a master: their Contacts move to it, they are deleted with MasterRecordId, and a lookup to one is ENTITY_IS_DELETED', async () => {
    const state = new FakeSalesforceState();
    const fake = fakeSalesforceFromState(state);
    const [master, b, c] = ['A', 'B', 'C'].map((ext) => state.seed('Account', { Name: `Acct ${ext}`, AI_External_Id__c: ext }));
    const kids = [b, c, master].map((accountId, i) => state.seed('Contact', { LastName: `K${i}`, AI_External_Id__c: `k-${i}`, AccountId: accountId }));
    fake.merge('Account', master!, b!, c!);
    expect(fake.records('Account').map((a) => [a.Id, a.Name])).toEqual([[master, 'Acct A']]);
    expect(fake.records('Contact').map((k) => [k.Id, k.AccountId])).toEqual(kids.map((id) => [id, master]));
    expect(fake.mergedRecords('Account').map((a) => [a.Id, a.AI_External_Id__c, a.IsDeleted, a.MasterRecordId])).toEqual([[b, 'B', true, master], [c, 'C', true, master]]);

    const front = await fake.open('loopback');
    try {
      const conn = new Connection({ instanceUrl: front.url, accessToken: 'test-token', version: '60.0' });
      const [r] = (await conn.sobject('Contact').upsert([{ AI_External_Id__c: 'k-9', LastName: 'K9', AccountId: b }], 'AI_External_Id__c')) as { success: boolean; errors: { statusCode?: string }[] }[];
      expect(r).toMatchObject({ success: false, errors: [{ statusCode: 'ENTITY_IS_DELETED' }] });
    } finally {
      await front.stop();
    }
  });

  it('refuses what Salesforce refuses: more than two records besides the master, the master among them, or a record it does not have', () => {
    const state = new FakeSalesforceState();
    const fake = fakeSalesforceFromState(state);
    const ids = ['A', 'B', 'C', 'D'].map((ext) => state.seed('Contact', { LastName: ext, AI_External_Id__c: ext }));
    expect(() => fake.merge('Contact', ids[0]!, ids[1]!, ids[2]!, ids[3]!)).toThrow(/one or two records/);
    expect(() => fake.merge('Contact', ids[0]!, ids[0]!)).toThrow(/cannot merge/);
    expect(() => fake.merge('Contact', ids[0]!, '003000000000000AAA')).toThrow(/cannot merge/);
    expect(fake.records('Contact')).toHaveLength(4);
  });
});
