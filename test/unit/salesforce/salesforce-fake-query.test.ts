import { describe, expect, it } from 'vitest';
import { MAX_URI_BYTES, QUERY_PAGE_SIZE, requestTarget } from '../../../adapters/salesforce/fake/salesforce-fake-query.js';
import { FakeSalesforceState } from '../../../adapters/salesforce/fake/salesforce-fake.js';
import type { FakeRequest } from '../../../adapters/testing/index.js';

const get = (path: string, query: Record<string, string> = {}, headers: Record<string, string> = {}): FakeRequest => ({
  method: 'GET',
  path,
  query: new URLSearchParams(query),
  headers: { authorization: 'Bearer t', ...headers },
  body: undefined,
});
const soql = (q: string, headers?: Record<string, string>) => get('/services/data/v60.0/query', { q }, headers);
const body = (r: { body?: unknown }) => r.body as { totalSize: number; done: boolean; nextRecordsUrl?: string; records: Array<Record<string, unknown>> };

function org() {
  const state = new FakeSalesforceState();
  const acme = state.seed('Account', { Name: 'Acme', AI_External_Id__c: 'acme' });
  state.seed('Contact', { LastName: 'Smith', AI_External_Id__c: 'c-1', AccountId: acme });
  state.seed('Contact', { LastName: 'Jones', AI_External_Id__c: 'c-2' });
  return { state, acme };
}

describe('fakeSalesforce query resource', () => {
  it('answers parent fields through a lookup as a nested record, null when the lookup is empty', () => {
    const { state, acme } = org();
    const r = state.handle(soql("SELECT Id, LastName, Account.AI_External_Id__c, Account.Name FROM Contact WHERE AI_External_Id__c IN ('c-1','c-2')"));
    expect(r.status).toBe(200);
    const [smith, jones] = body(r).records;
    expect(smith).toEqual({
      attributes: { type: 'Contact', url: `/services/data/v60.0/sobjects/Contact/${String(smith!.Id)}` },
      Id: smith!.Id,
      LastName: 'Smith',
      Account: { attributes: { type: 'Account', url: `/services/data/v60.0/sobjects/Account/${acme}` }, AI_External_Id__c: 'acme', Name: 'Acme' },
    });
    expect(jones).toMatchObject({ LastName: 'Jones', Account: null });
    expect(body(r)).toMatchObject({ totalSize: 2, done: true });
  });

  it('compares text in an IN list on any field ignoring case, as SOQL does', () => {
    const { state } = org();
    const r = state.handle(soql("SELECT Id, LastName FROM Contact WHERE LastName IN ('SMITH','jOnEs','nobody')"));
    expect(body(r).records.map((x) => x.LastName)).toEqual(['Smith', 'Jones']);
  });

  it('reads field names in any case and answers under each field\'s API name', () => {
    const { state } = org();
    const [row] = body(state.handle(soql("select id, lastname, account.ai_external_id__c from Contact where ai_external_id__c in ('C-1')"))).records;
    expect(Object.keys(row!)).toEqual(['attributes', 'Id', 'LastName', 'Account']);
    expect(row).toMatchObject({ LastName: 'Smith', Account: { AI_External_Id__c: 'acme' } });
  });

  it.each([
    [
      'SELECT Id, Foo__c FROM Contact',
      "\nSELECT Id, Foo__c FROM Contact\n           ^\nERROR at Row:1:Column:12\nNo such column 'Foo__c' on entity 'Contact'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.",
    ],
    [
      'SELECT Id, Acount.Name FROM Contact',
      "\nSELECT Id, Acount.Name FROM Contact\n           ^\nERROR at Row:1:Column:12\nDidn't understand relationship 'Acount' in field path. If you are attempting to use a custom relationship, be sure to append the '__r' after the custom relationship name. Please reference your WSDL or the describe call for the appropriate names.",
    ],
    [
      'SELECT Id, Account.Nope__c FROM Contact',
      "\nSELECT Id, Account.Nope__c FROM Contact\n           ^\nERROR at Row:1:Column:12\nNo such column 'Nope__c' on entity 'Account'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.",
    ],
  ])('refuses %j with the 400 INVALID_FIELD Salesforce words', (q, message) => {
    const { state } = org();
    expect(state.handle(soql(q))).toMatchObject({ status: 400, body: [{ errorCode: 'INVALID_FIELD', message }] });
  });

  it.each([
    ['SELECT Id, LastName, Id FROM Contact', 'Id'],
    ['SELECT Id, Email, email FROM Contact', 'email'],
    ['SELECT Id, Account.Name, account.name FROM Contact', 'account.name'],
  ])('refuses %j, a field selected twice, with 400 INVALID_FIELD "duplicate field selected"', (q, field) => {
    const { state } = org();
    const r = state.handle(soql(q));
    expect(r.status).toBe(400);
    expect(r.body).toEqual([{ errorCode: 'INVALID_FIELD', message: `duplicate field selected: ${field}` }]);
  });

  it('pages past 2,000 rows through nextRecordsUrl, totalSize counting every page', () => {
    const state = new FakeSalesforceState();
    for (let i = 0; i < 4100; i++) state.seed('Contact', { LastName: `L${i}`, Email: 'same@example.test' });
    const first = body(state.handle(soql("SELECT Id, LastName FROM Contact WHERE Email IN ('same@example.test')")));
    expect(first).toMatchObject({ totalSize: 4100, done: false });
    expect(first.records).toHaveLength(QUERY_PAGE_SIZE);
    expect(first.nextRecordsUrl).toMatch(/^\/services\/data\/v60\.0\/query\/01g\w{15}-2000$/);
    const second = body(state.handle(get(first.nextRecordsUrl!)));
    expect(second).toMatchObject({ totalSize: 4100, done: false });
    const third = body(state.handle(get(second.nextRecordsUrl!)));
    expect(third).toMatchObject({ totalSize: 4100, done: true, records: expect.any(Array) });
    expect(third).not.toHaveProperty('nextRecordsUrl');
    expect([...first.records, ...second.records, ...third.records].map((r) => r.LastName)).toEqual(Array.from({ length: 4100 }, (_, i) => `L${i}`));
    // A finished cursor is gone.
    expect(state.handle(get(second.nextRecordsUrl!))).toMatchObject({ status: 400, body: [{ errorCode: 'INVALID_QUERY_LOCATOR' }] });
  });

  it('refuses a URI over 16,384 bytes with the 414 page, spending no allocation; URI plus headers over it with 431', () => {
    const { state } = org();
    const values = (n: number) => Array.from({ length: n }, (_, i) => `'id-${String(i).padStart(6, '0')}'`).join(',');
    const q = (n: number) => `SELECT Id FROM Contact WHERE AI_External_Id__c IN (${values(n)})`;
    // The largest list whose URI alone fits, then one more value.
    let n = 1;
    while (requestTarget(soql(q(n + 1))).length <= MAX_URI_BYTES) n += 1;
    const used = state.apiUsage().used;
    expect(state.handle(soql(q(n + 1)))).toEqual({ status: 414, headers: { 'content-type': 'text/html;charset=iso-8859-1' }, rawBody: '<h1>Bad Message 414</h1><pre>reason: URI Too Long</pre>' });
    expect(state.handle(soql(q(n)))).toMatchObject({ status: 431, rawBody: '<h1>Bad Message 431</h1><pre>reason: Request Header Fields Too Large</pre>' });
    expect(state.apiUsage().used).toBe(used);
    expect(state.handle(soql(q(n - 2)))).toMatchObject({ status: 200 });
    expect(state.apiUsage().used).toBe(used + 1);
  });

  it('counts the URI in bytes as sent: 1,900 CJK characters (17,100 bytes encoded) are refused with 414 though 1,900 characters would fit', () => {
    const { state } = org();
    const q = (id: string) => `SELECT Id FROM Contact WHERE AI_External_Id__c = '${id}'`;
    const cjk = '\u4e2d'.repeat(1_900);
    expect(q(cjk).length).toBeLessThan(2_000);
    expect(Buffer.byteLength(requestTarget(soql(q(cjk))))).toBeGreaterThan(MAX_URI_BYTES);
    const used = state.apiUsage().used;
    expect(state.handle(soql(q(cjk)))).toMatchObject({ status: 414, rawBody: '<h1>Bad Message 414</h1><pre>reason: URI Too Long</pre>' });
    expect(state.apiUsage().used).toBe(used);
    // An emoji is 12 bytes on the wire: 1,300 of them fit alone, 1,400 do not.
    expect(state.handle(soql(q('\u{1F600}'.repeat(1_300))))).toMatchObject({ status: 200 });
    expect(state.handle(soql(q('\u{1F600}'.repeat(1_400))))).toMatchObject({ status: 414 });
  });

  it('measures the request target as fetch sends it: a quote as %27', () => {
    expect(requestTarget(soql("SELECT Id FROM Contact WHERE Name IN ('a b')"))).toBe('/services/data/v60.0/query?q=SELECT%20Id%20FROM%20Contact%20WHERE%20Name%20IN%20(%27a%20b%27)');
  });
});
