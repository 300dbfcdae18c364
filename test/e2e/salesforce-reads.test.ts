/** sync.read on Salesforce: the real jsforce 3.10.16 against fakeSalesforce over loopback. */
import http from 'node:http';
import { inspect } from 'node:util';
import { Connection } from 'jsforce';
import { afterEach, describe, expect, it } from 'vitest';
import { salesforceAdapter, type SalesforceAdapter, type SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import { MAX_QUERY_URL_BYTES } from '../../adapters/salesforce/salesforce-adapter.js';
import { FakeSalesforceState, fakeSalesforceFromState, type FakeSalesforce } from '../../adapters/salesforce/fake/salesforce-fake.js';
import { queryUrlBytes } from '../../adapters/salesforce/soql.js';
import type { FakeRequest } from '../../adapters/testing/index.js';
import { createSync, CrmError, openLedger, type Sync } from '../../src/index.js';
import type { LedgerBackend } from '../../src/ledger/types.js';
import { TOKEN } from './salesforce-helpers.js';

const OWNER = '005E2E000000001AAA';
const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 50 };

const objects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
  contact: {
    kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'],
    links: { company: 'AccountId' }, readFields: ['OwnerId'], lookupBy: ['Email'],
  },
  deal: { kind: 'record', sobject: 'Opportunity', externalIdField: 'AI_External_Id__c', fields: ['Name', 'StageName', 'CloseDate', 'Amount'], links: { company: 'AccountId' } },
};

interface Org {
  fake: FakeSalesforce;
  state: FakeSalesforceState;
  adapter: SalesforceAdapter;
  ledger: LedgerBackend;
  sync: Sync;
  sleeps: number[];
  url: string;
  close(): Promise<void>;
}

let open: Org | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** A fake org on loopback (every record owned by the API user, as Salesforce sets OwnerId), an adapter and a Sync. */
async function org(adapterToken = TOKEN): Promise<Org> {
  const state = new FakeSalesforceState({ accessToken: TOKEN });
  for (const sobject of ['Account', 'Contact', 'Opportunity']) state.defineField(sobject, 'OwnerId', { type: 'reference', referenceTo: ['User'], createable: false, updateable: false, defaultValue: OWNER });
  const fake = fakeSalesforceFromState(state);
  const front = await fake.open('loopback');
  const adapter = salesforceAdapter({ instanceUrl: front.url, accessToken: adapterToken, objects });
  const ledger = openLedger('memory:');
  const sleeps: number[] = [];
  const sync = createSync({ adapter, ledger, retry: fast, sleep: async (ms) => void sleeps.push(ms) });
  open = { fake, state, adapter, ledger, sync, sleeps, url: front.url, close: async () => { await sync.close(); await front.close(); } };
  return open;
}

const contact = (externalId: string, fields: Record<string, string>, company?: string) => ({
  source: 'sf-read', eventId: `evt-${externalId}`, op: 'upsert', object: 'contact', externalId, fields,
  ...(company ? { links: [{ object: 'company', externalId: company }] } : {}),
});
const company = (externalId: string, name = `Company ${externalId}`) => ({ source: 'sf-read', eventId: `evt-co-${externalId}`, op: 'upsert', object: 'company', externalId, fields: { Name: name } });

const queries = (fake: FakeSalesforce): FakeRequest[] => fake.requests.filter((r) => r.method === 'GET' && r.path.includes('/query'));
/** The query's request target as fetch puts it on the wire (WHATWG URL serialisation), measured independently of the adapter. */
const wireUrl = (r: FakeRequest) => {
  const url = new URL(`http://127.0.0.1${r.path}?q=${encodeURIComponent(r.query.get('q')!)}`);
  return `${url.pathname}${url.search}`;
};
const inList = (r: FakeRequest) => {
  const q = r.query.get('q')!;
  return q.slice(q.indexOf(' IN (') + 5, -1);
};
const ledgerRows = async (ledger: LedgerBackend) => (await ledger.list()).length;

describe('sync.read with salesforceAdapter over loopback', () => {
  it('reads 250 contacts by external id in the fewest queries whose URLs stay under the limit, each answered in order', async () => {
    const { fake, adapter, sync, ledger } = await org();
    // Long ids with characters that grow when encoded (/ as %2F, ' as \' then %5C%27): 183 fit in one query URL.
    const ids = Array.from({ length: 250 }, (_, i) => `intake/2026-12/${i % 10 === 0 ? "o'brien" : 'lead'}-${String(i).padStart(4, '0')}/7f1c9a2e-41d3-4b8e-9a55-${String(i).padStart(12, '0')}/a`);
    const written = await sync.applyMany(ids.map((id, i) => contact(id, { LastName: `Person ${i}`, Email: `p${i}@example.test` })));
    expect(written.every((o) => o.status === 'created')).toBe(true);
    const entries = await ledgerRows(ledger);
    fake.requests.length = 0;
    fake.core.resetLog();
    const before = adapter.apiCalls();

    const answers = await sync.read('contact', ids);

    const sent = queries(fake);
    expect(sent).toHaveLength(2);
    expect(adapter.apiCalls() - before).toBe(2);
    expect(fake.count()).toBe(2);
    const byId = new Map(fake.records('Contact').map((r) => [r.AI_External_Id__c, r]));
    expect(answers.map((a) => a.id)).toEqual(ids);
    answers.forEach((a, i) => {
      expect(a).toEqual({ id: ids[i], found: true, recordId: byId.get(ids[i])!.Id, externalId: ids[i], fields: { Email: `p${i}@example.test`, FirstName: null, LastName: `Person ${i}`, OwnerId: OWNER } });
    });
    // Every id in exactly one query, in order; every URL under the limit, and each query but the
    // last as full as it can be: one more id would have crossed it.
    const perQuery = sent.map((r) => inList(r).split("','").length);
    expect(perQuery.reduce((a, b) => a + b, 0)).toBe(250);
    let next = 0;
    for (const [k, r] of sent.entries()) {
      const url = wireUrl(r);
      expect(url.length).toBeLessThanOrEqual(MAX_QUERY_URL_BYTES);
      expect(r.query.get('q')).toMatch(/^SELECT Id, AI_External_Id__c, Email, FirstName, LastName, OwnerId FROM Contact WHERE AI_External_Id__c IN \(/);
      next += perQuery[k]!;
      if (k < sent.length - 1) {
        const oneMore = encodeURIComponent(`,'${ids[next]!.replace(/'/g, "\\'")}'`).replace(/'/g, '%27');
        expect(url.length + oneMore.length).toBeGreaterThan(MAX_QUERY_URL_BYTES);
      }
    }
    expect(await ledgerRows(ledger)).toBe(entries);
  });

  it('reads 1,000 contacts with 36-character external ids in 4 queries of up to 329', async () => {
    const { fake, state, sync } = await org();
    const ids = Array.from({ length: 1_000 }, (_, i) => `7f1c9a2e-41d3-4b8e-9a55-${String(i).padStart(12, '0')}`);
    for (const id of ids) state.seed('Contact', { LastName: id.slice(-4), AI_External_Id__c: id, OwnerId: OWNER });
    const answers = await sync.read('contact', ids);
    expect(answers.every((a) => a.found)).toBe(true);
    expect(fake.count()).toBe(4);
    expect(queries(fake).map((r) => inList(r).split("','").length)).toEqual([329, 329, 329, 13]);
  });

  it('fails without retrying when a field it reads is not visible to the user (INVALID_FIELD)', async () => {
    const { fake, sync } = await org();
    fake.removeField('Contact', 'FirstName');
    await expect(sync.read('contact', ['C-1'])).rejects.toMatchObject({ kind: 'permanent', vendorCode: 'INVALID_FIELD', message: expect.stringContaining("No such column 'FirstName' on entity 'Contact'") });
    expect(fake.count()).toBe(1);
  });

  it('answers found and not found per id in the order asked, repeats included, in one query', async () => {
    const { fake, sync } = await org();
    await sync.applyMany([contact('C-1', { LastName: 'One', Email: 'one@example.test' }), contact('C-2', { LastName: 'Two', FirstName: 'Ada' })]);
    fake.requests.length = 0;
    const answers = await sync.read('contact', ['C-2', 'nobody', 'C-1', 'C-2']);
    expect(answers.map((a) => [a.id, a.found])).toEqual([['C-2', true], ['nobody', false], ['C-1', true], ['C-2', true]]);
    expect(answers[1]).toEqual({ id: 'nobody', found: false });
    expect(answers[0]).toMatchObject({ fields: { FirstName: 'Ada', LastName: 'Two', Email: null } });
    expect(queries(fake)).toHaveLength(1);
    // Asked once though named twice.
    expect(inList(queries(fake)[0]!)).toBe("'C-2','nobody','C-1'");
  });

  it('answers an id longer than the 4,000 characters a WHERE string may hold as not found, without sending it', async () => {
    const { fake, sync } = await org();
    await sync.applyMany([contact('C-1', { LastName: 'One' })]);
    const huge = 'h'.repeat(4_001);
    fake.core.resetLog();
    expect(await sync.read('contact', [huge])).toEqual([{ id: huge, found: false, reason: 'not sent: 4,001 characters, over the 4,000 Salesforce allows in a WHERE string' }]);
    expect(fake.count()).toBe(0);
    const answers = await sync.read('contact', [huge, 'C-1']);
    expect(answers.map((a) => a.found)).toEqual([false, true]);
    expect(fake.count()).toBe(1);
    expect(inList(queries(fake).at(-1)!)).toBe("'C-1'");
  });

  it('answers ids whose query alone is over the URL limit in bytes (2,000 CJK characters, 1,600 emoji) not found with the reason, unsent, and reads the id beside them', async () => {
    const { fake, url, sync } = await org();
    await sync.applyMany([contact('C-1', { LastName: 'One', Email: 'one@example.test' })]);
    // Under 4,000 characters each, but 9 bytes (CJK) and 12 bytes (emoji) per character once sent.
    const cjk = Array.from({ length: 2_000 }, (_, i) => String.fromCodePoint(0x4e00 + (i % 500))).join('');
    const emoji = Array.from({ length: 1_600 }, (_, i) => String.fromCodePoint(0x1f600 + (i % 64))).join('');
    const head = 'SELECT Id, AI_External_Id__c, Email, FirstName, LastName, OwnerId FROM Contact WHERE AI_External_Id__c IN (';
    const alone = (id: string) => Buffer.byteLength(wireUrl({ path: '/services/data/v60.0/query', query: new Map([['q', `${head}'${id}')`]]) } as unknown as FakeRequest));
    expect([alone(cjk), alone(emoji)]).toEqual([18_177, 19_377]);
    // What Salesforce, and so the fake, answers such a query: the front's 414 page.
    const direct = await fetch(`${url}/services/data/v60.0/query?q=${encodeURIComponent(`${head}'${cjk}')`)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect([direct.status, await direct.text()]).toEqual([414, '<h1>Bad Message 414</h1><pre>reason: URI Too Long</pre>']);
    fake.requests.length = 0;
    fake.core.resetLog();

    const answers = await sync.read('contact', [cjk, 'C-1', emoji]);

    expect(answers[1]).toMatchObject({ id: 'C-1', found: true, fields: { LastName: 'One', Email: 'one@example.test' } });
    expect(answers[0]).toEqual({ id: cjk, found: false, reason: `not sent: a query for this id alone is a URL of 18,177 bytes (UTF-8, percent-encoded), over the 15,000 one query may use (Salesforce refuses a URI over 16,384 bytes with 414 URI Too Long)` });
    expect(answers[2]).toEqual({ id: emoji, found: false, reason: expect.stringContaining('a URL of 19,377 bytes') });
    expect(fake.count()).toBe(1);
    expect(queries(fake).map(inList)).toEqual(["'C-1'"]);
    // Alone, they cost no request at all.
    expect(await sync.read('contact', [emoji, cjk])).toEqual([expect.objectContaining({ found: false, reason: expect.any(String) }), expect.objectContaining({ found: false, reason: expect.any(String) })]);
    expect(fake.count()).toBe(1);
  });

  it('measures the very bytes jsforce puts on the wire: its own query() sends the same request target for the same SOQL', async () => {
    const targets: string[] = [];
    const server = http.createServer((req, res) => {
      targets.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ totalSize: 0, done: true, records: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const instanceUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const adapter = salesforceAdapter({ instanceUrl, accessToken: TOKEN, objects });
      const ids = ["中文-1", '😀 ok', "o'brien/#?&=+%", 'a,b (c) ~!*'];
      const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
      expect((await sync.read('contact', ids)).every((a) => !a.found)).toBe(true);
      await sync.close();
      const soql = new URL(`http://x${targets[0]!}`).searchParams.get('q')!;
      await new Connection({ instanceUrl, accessToken: TOKEN, version: '60.0' }).query(soql);
      expect(targets).toHaveLength(2);
      expect(targets[1]).toBe(targets[0]);
      expect(Buffer.byteLength(targets[0]!)).toBe(queryUrlBytes('/services/data/v60.0', soql));
      expect(targets[0]).toContain('%E4%B8%AD%E6%96%87-1%27%2C%27%F0%9F%98%80%20ok');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('splits 400 multibyte ids into queries each under the limit in bytes as sent, each as full as it can be', async () => {
    const { fake, state, sync } = await org();
    // 12 CJK characters and an emoji: 25 characters of id, 141 bytes once percent-encoded.
    const ids = Array.from({ length: 400 }, (_, i) => `顧客番号東京支店営業部第${String.fromCodePoint(0x1f600 + (i % 64))}${String(i).padStart(10, '0')}`);
    for (const id of ids) state.seed('Contact', { LastName: 'Multi', AI_External_Id__c: id, OwnerId: OWNER });
    fake.requests.length = 0;
    fake.core.resetLog();

    const answers = await sync.read('contact', ids);

    expect(answers.every((a, i) => a.found && a.externalId === ids[i])).toBe(true);
    const sent = queries(fake);
    expect(fake.count()).toBe(sent.length);
    const perQuery = sent.map((r) => inList(r).split("','").length);
    expect(perQuery.reduce((a, b) => a + b, 0)).toBe(400);
    // 15,000 bytes hold about 105 of these ids; counted in characters, one query would take all 400.
    expect(perQuery).toEqual([106, 106, 106, 82]);
    let next = 0;
    for (const [k, r] of sent.entries()) {
      const bytes = Buffer.byteLength(wireUrl(r));
      expect(bytes).toBeLessThanOrEqual(MAX_QUERY_URL_BYTES);
      next += perQuery[k]!;
      if (k < sent.length - 1) expect(bytes + Buffer.byteLength(encodeURIComponent(`,'${ids[next]!}'`).replace(/'/g, '%27'))).toBeGreaterThan(MAX_QUERY_URL_BYTES);
    }
  });

  it('finds a contact written a moment earlier (no search index in between)', async () => {
    const { sync } = await org();
    const [outcome] = await sync.applyMany([contact('fresh-1', { LastName: 'Fresh', Email: 'fresh@example.test' })]);
    const [answer] = await sync.read('contact', ['fresh-1']);
    expect(answer).toMatchObject({ found: true, recordId: (outcome as { recordId: string }).recordId, fields: { LastName: 'Fresh', Email: 'fresh@example.test' } });
  });

  it('does not answer a case variant of an external id, though SOQL matches it', async () => {
    const { fake, sync } = await org();
    await sync.applyMany([contact('Acme-7', { LastName: 'Mixed' }), contact('ACME-8', { LastName: 'Upper' }), contact('acme-8', { LastName: 'Lower' })]);
    fake.requests.length = 0;
    const answers = await sync.read('contact', ['ACME-7', 'acme-7', 'Acme-7', 'acme-8', 'Acme-8']);
    expect(answers.map((a) => a.found)).toEqual([false, false, true, true, false]);
    expect(answers[3]).toMatchObject({ externalId: 'acme-8', fields: { LastName: 'Lower' } });
    expect(queries(fake)).toHaveLength(1);
  });

  it('answers the linked Account and its external id with links: true in the same single query', async () => {
    const { fake, state, sync } = await org();
    await sync.applyMany([company('acme'), contact('C-L1', { LastName: 'Linked' }, 'acme'), contact('C-L2', { LastName: 'Alone' })]);
    await sync.apply({ source: 'sf-read', eventId: 'evt-deal', op: 'upsert', object: 'deal', externalId: 'D-1', fields: { Name: 'Big deal', StageName: 'Prospecting', CloseDate: '2026-12-31' }, links: [{ object: 'company', externalId: 'acme' }] });
    // An Account made in Salesforce's own screens: no external id.
    const handMade = state.seed('Account', { Name: 'Typed in by hand' });
    state.seed('Contact', { LastName: 'Hand linked', AI_External_Id__c: 'C-L3', AccountId: handMade });
    const acme = fake.records('Account').find((a) => a.AI_External_Id__c === 'acme')!;

    fake.requests.length = 0;
    const plain = await sync.read('contact', ['C-L1', 'C-L2', 'C-L3']);
    const plainQueries = queries(fake).length;
    fake.requests.length = 0;
    const linked = await sync.read('contact', ['C-L1', 'C-L2', 'C-L3'], { links: true });
    const deals = await sync.read('deal', ['D-1'], { links: true });

    expect(plainQueries).toBe(1);
    expect(fake.requests).toHaveLength(2);
    expect(plain[0]).not.toHaveProperty('links');
    expect(linked.map((a) => (a.found ? a.links : undefined))).toEqual([
      [{ object: 'company', recordId: acme.Id, externalId: 'acme' }],
      [],
      [{ object: 'company', recordId: handMade }],
    ]);
    expect(deals[0]).toMatchObject({ found: true, fields: { Name: 'Big deal', StageName: 'Prospecting', CloseDate: '2026-12-31', Amount: null }, links: [{ object: 'company', recordId: acme.Id, externalId: 'acme' }] });
    expect(queries(fake)[0]!.query.get('q')).toContain('AccountId, Account.AI_External_Id__c FROM Contact');
  });

  it('answers readFields (OwnerId) and never a field outside the allowlist and readFields', async () => {
    const { fake, state, sync } = await org();
    state.seed('Contact', { LastName: 'Seeded', AI_External_Id__c: 'C-S', Phone: '+1 555 0100', Birthdate: '1990-01-01', OwnerId: OWNER });
    fake.requests.length = 0;
    const [all] = await sync.read('contact', ['C-S']);
    const [owner] = await sync.read('contact', ['C-S'], { fields: ['OwnerId'] });
    expect(all).toMatchObject({ found: true, fields: { Email: null, FirstName: null, LastName: 'Seeded', OwnerId: OWNER } });
    expect(Object.keys((all as { fields: object }).fields).sort()).toEqual(['Email', 'FirstName', 'LastName', 'OwnerId']);
    expect(owner).toMatchObject({ fields: { OwnerId: OWNER } });
    expect(Object.keys((owner as { fields: object }).fields)).toEqual(['OwnerId']);
    for (const r of queries(fake)) expect(r.query.get('q')).not.toMatch(/Phone|Birthdate/);
    await expect(sync.read('contact', ['C-S'], { fields: ['Phone'] })).rejects.toThrow(/"Phone" is not readable on "contact"/);
  });

  it('reads by Email case-insensitively and answers an Email several contacts share as not found with matches', async () => {
    const { fake, sync } = await org();
    await sync.applyMany([
      contact('E-1', { LastName: 'Ada', Email: 'ada@example.test' }),
      contact('E-2', { LastName: 'Bob', Email: 'shared@example.test' }),
      contact('E-3', { LastName: 'Cy', Email: 'Shared@Example.test' }),
    ]);
    fake.requests.length = 0;
    const answers = await sync.read('contact', ['ADA@example.TEST', 'shared@example.test', 'none@example.test'], { by: 'Email' });
    expect(answers).toEqual([
      expect.objectContaining({ id: 'ADA@example.TEST', found: true, externalId: 'E-1', fields: expect.objectContaining({ Email: 'ada@example.test' }) }),
      { id: 'shared@example.test', found: false, matches: 2 },
      { id: 'none@example.test', found: false },
    ]);
    expect(queries(fake)).toHaveLength(1);
    expect(queries(fake)[0]!.query.get('q')).toMatch(/ FROM Contact WHERE Email IN \('ADA@example\.TEST','shared@example\.test','none@example\.test'\)$/);
  });

  it('follows nextRecordsUrl past 2,000 rows: an Email on 2,500 contacts is 2 requests and matches: 2500', async () => {
    const { fake, state, sync } = await org();
    for (let i = 0; i < 2500; i++) state.seed('Contact', { LastName: `Dup ${i}`, Email: 'info@example.test', AI_External_Id__c: `dup-${i}` });
    state.seed('Contact', { LastName: 'Solo', Email: 'solo@example.test', AI_External_Id__c: 'solo' });
    fake.requests.length = 0;
    const answers = await sync.read('contact', ['info@example.test', 'solo@example.test'], { by: 'Email' });
    expect(answers).toEqual([{ id: 'info@example.test', found: false, matches: 2500 }, expect.objectContaining({ found: true, externalId: 'solo' })]);
    expect(fake.requests.map((r) => r.path.replace(/01g\w+/, '<locator>'))).toEqual(['/services/data/v60.0/query', '/services/data/v60.0/query/<locator>-2000']);
  });

  it('answers fields and by fields the config spells in another case (SOQL names are case-insensitive; rows use the API name)', async () => {
    const { fake, state, url } = await org();
    state.seed('Contact', { LastName: 'Lee', Email: 'lee@example.test', AI_External_Id__c: 'K-1' });
    const adapter = salesforceAdapter({ instanceUrl: url, accessToken: TOKEN, objects: { contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['email', 'lastname'], lookupBy: ['EMAIL'] } } });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    fake.core.resetLog();
    expect(await sync.read('contact', ['K-1'])).toEqual([{ id: 'K-1', found: true, recordId: expect.any(String), externalId: 'K-1', fields: { email: 'lee@example.test', lastname: 'Lee' } }]);
    expect(await sync.read('contact', ['LEE@example.test'], { by: 'EMAIL' })).toEqual([expect.objectContaining({ found: true, externalId: 'K-1' })]);
    expect(fake.count()).toBe(2);
    await sync.close();
  });

  it.each([
    ['rate_limit', 'a 429 REQUEST_LIMIT_EXCEEDED', 3_000],
    ['server_error', 'a 503 SERVER_UNAVAILABLE', undefined],
    ['html_error', 'a 503 HTML maintenance page', undefined],
    ['reset', 'a connection reset', undefined],
    ['lost_response', 'a response lost on the way back', undefined],
  ] as const)('retries a query refused with %s (%s), waiting any Retry-After', async (fault, _what, waitMs) => {
    const { fake, sync, sleeps } = await org();
    await sync.applyMany([contact('R-1', { LastName: 'Retry' })]);
    fake.setFaults({ retryAfterSeconds: 3 });
    fake.core.resetLog();
    fake.failNext(fault, { endpoint: 'GET /query' });
    const [answer] = await sync.read('contact', ['R-1']);
    expect(answer).toMatchObject({ found: true, externalId: 'R-1' });
    expect(fake.counts()).toEqual({ 'GET /query': 2 });
    expect(fake.core.faultCounts()[fault]).toBe(1);
    if (waitMs !== undefined) expect(sleeps).toContain(waitMs);
  });

  it('fails with an auth CrmError naming no token when Salesforce answers 401 INVALID_SESSION_ID, without retrying', async () => {
    const wrong = '00D5g00000WRONG!AQ4AQE2E.expired.b00b1e5';
    const { fake, sync } = await org(wrong);
    const error = await sync.read('contact', ['C-1']).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'auth', vendor: 'salesforce' });
    expect((error as Error).message).toMatch(/INVALID_SESSION_ID/);
    const printed = inspect(error, { depth: 10 });
    for (const secret of [wrong, TOKEN]) expect(printed).not.toContain(secret);
    expect(JSON.stringify(error)).not.toContain(wrong);
    expect(queries(fake)).toHaveLength(1);
  });

  it('stops at the daily allocation share before sending a query once usage is known to be past it', async () => {
    const { fake, sync } = await org();
    await sync.applyMany([contact('Q-1', { LastName: 'Quota' })]);
    fake.setApiUsage(14_000, 15_000);
    await sync.read('contact', ['Q-1']);
    fake.requests.length = 0;
    await expect(sync.read('contact', ['Q-1'])).rejects.toMatchObject({ kind: 'quota', vendorCode: 'DAILY_LIMIT_SHARE' });
    expect(fake.requests).toHaveLength(0);
  });

  it('writes no ledger entry', async () => {
    const { sync, ledger } = await org();
    await sync.read('contact', ['nobody', 'no-one']);
    await sync.read('contact', ['x@example.test'], { by: 'Email', links: true });
    expect(await ledgerRows(ledger)).toBe(0);
  });
});
