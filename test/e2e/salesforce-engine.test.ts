import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { fronts, harness, statuses, TOKEN, type Harness } from './salesforce-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const upsert = (n: number | string, fields: Record<string, string | null> = { LastName: `Person ${n}`, Email: `c${n}@example.test` }) => ({
  source: 'sf-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields,
});
const taskOn = (eventId: string, contact: string, subject = `follow up ${eventId}`) => ({
  source: 'sf-test', eventId, op: 'create', object: 'task', target: { object: 'contact', externalId: contact },
  fields: { Subject: subject, Description: `AI summary for ${eventId}`, ActivityDate: '2026-12-01' },
});

describe.each(fronts)('createSync with salesforceAdapter (jsforce 3.10.16) over %s', (front) => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('writes 1,000 distinct contacts in exactly 5 collection calls, then replays them with 0 calls', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), dedupeWindowMs: 600_000, retry: fast });
    const actions = Array.from({ length: 1000 }, (_, i) => upsert(i));
    expect(statuses(await sync.applyMany(actions))).toEqual({ created: 1000 });
    expect(h.fake.count('PATCH /composite/sobjects/Contact/AI_External_Id__c')).toBe(5);
    expect(h.fake.count()).toBe(5);
    const again = await sync.applyMany(actions);
    expect(statuses(again)).toEqual({ replayed: 1000 });
    expect(h.fake.count()).toBe(5);
    expect(h.adapter.apiCalls()).toBe(5);
    expect(h.fake.records('Contact')).toHaveLength(1000);
    await sync.close();
  });

  it('upserts tasks on contacts written in the same call without querying the contacts', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany([taskOn('evt-s1', 'C-1'), upsert(1), upsert(2), taskOn('evt-s2', 'C-2')]);
    expect(statuses(outcomes)).toEqual({ created: 4 });
    expect(h.fake.count('GET /query')).toBe(0);
    expect(h.fake.records('Task').map((t) => t.WhoId)).toEqual(h.fake.records('Contact').map((c) => c.Id));
    await sync.close();
  });

  it('queries the parents of a task batch once across its retries', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    // Contacts another process wrote: this Sync must query them.
    await createSync({ adapter: h.adapter, ledger: openLedger('memory:') }).applyMany([upsert(1), upsert(2)]);
    const queries = h.fake.count('GET /query');
    h.fake.failNext('server_error', { endpoint: 'composite/sobjects/Task' });
    h.fake.failNext('lost_response', { endpoint: 'composite/sobjects/Task' });
    const outcomes = await sync.applyMany([taskOn('evt-p1', 'C-1'), taskOn('evt-p2', 'C-2')]);
    expect(statuses(outcomes)).toEqual({ created: 2 });
    expect(h.fake.count('composite/sobjects/Task')).toBe(3);
    expect(h.fake.count('GET /query') - queries).toBe(1);
    expect(h.fake.records('Task')).toHaveLength(2);
    await sync.close();
  });

  const awkward = [
    'slash/inside',
    'query?x=1&y=2',
    'hash#fragment',
    'percent%2Fencoded%',
    'with  spaces ',
    "O'Brien",
    'say "hi"',
    'back\\slash\\',
    "\\'",
    'ünïcødé-東京-😀',
    '+plus+',
    'ends.inc',
    'caseSensitive',
    'CASESENSITIVE',
  ];

  it('round-trips external ids with / ? # % spaces quotes backslashes and non-ASCII: one record each, exact value', async () => {
    h = await harness(front);
    const write = (round: number) =>
      createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).applyMany(
        awkward.flatMap((ext, i) => [
          { source: 'sf-test', eventId: `r${round}-c${i}`, op: 'upsert', object: 'contact', externalId: ext, fields: { LastName: `round ${round}` } },
          { source: 'sf-test', eventId: `t${i}`, op: 'create', object: 'task', target: { object: 'contact', externalId: ext }, fields: { Subject: `task ${i}` } },
        ]),
      );
    const first = await write(1);
    expect(statuses(first)).toEqual({ created: awkward.length * 2 });
    const second = await write(2);
    expect(second.filter((_, i) => i % 2 === 0).map((o) => o.status)).toEqual(awkward.map(() => 'updated'));
    // The task upsert finds the record its key already made (a fresh ledger): no second Task.
    expect(second.filter((_, i) => i % 2 === 1).every((o) => o.status === 'created' || o.status === 'updated')).toBe(true);

    const contacts = h.fake.records('Contact');
    expect(contacts.map((c) => c.AI_External_Id__c)).toEqual(awkward);
    expect(contacts.every((c) => c.LastName === 'round 2')).toBe(true);
    const idByExt = new Map(contacts.map((c) => [c.AI_External_Id__c, c.Id]));
    const tasks = h.fake.records('Task');
    expect(tasks).toHaveLength(awkward.length);
    tasks.forEach((t, i) => expect(t.WhoId).toBe(idByExt.get(awkward[i]!)));
    expect(h.fake.requests.some((r) => r.path.includes('/sobjects/Contact/AI_External_Id__c/'))).toBe(false);
    expect(h.fake.core.log.every((e) => e.status === 200)).toBe(true);
  });

  it('writes 199 of a 200-record batch and fails the invalid one with Salesforce message, in one call', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const actions = Array.from({ length: 200 }, (_, i) => (i === 123 ? upsert(i, { LastName: 'Bad', Email: 'not-an-email' }) : upsert(i)));
    const outcomes = await sync.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 199, failed: 1 });
    expect(outcomes[123]!.error).toMatchObject({ retryable: false, message: expect.stringContaining('INVALID_EMAIL_ADDRESS: Email: invalid email address: not-an-email') });
    expect(h.fake.records('Contact')).toHaveLength(199);
    expect(h.fake.count()).toBe(1);
    await sync.close();
  });

  it('retries records that hit UNABLE_TO_LOCK_ROW until they are written', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    h.fake.lockRowNext(3);
    const outcomes = await sync.applyMany(Array.from({ length: 10 }, (_, i) => upsert(i)));
    expect(statuses(outcomes)).toEqual({ created: 10 });
    expect(h.fake.records('Contact')).toHaveLength(10);
    expect(h.fake.count()).toBe(2);
    await sync.close();
  });

  it('keeps one Task when the Task upsert response is lost after commit', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    h.fake.failNext('lost_response', { endpoint: 'PATCH /composite/sobjects/Task/' });
    const outcomes = await sync.applyMany([upsert(1), taskOn('evt-t1', 'C-1')]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created']);
    expect(outcomes[1]!.attempts).toBe(2);
    expect(h.fake.records('Task')).toHaveLength(1);
    expect(h.fake.core.faultCounts().lost_response).toBe(1);
    expect(statuses(await sync.applyMany([upsert(1), taskOn('evt-t1', 'C-1')]))).toEqual({ replayed: 2 });
    expect(h.fake.records('Task')).toHaveLength(1);
    await sync.close();
  });

  it.each([
    ['Contact', () => [upsert(1), upsert(2), upsert(3)]],
    ['Task', () => [taskOn('evt-m1', 'C-1'), taskOn('evt-m2', 'C-2'), taskOn('evt-m3', 'C-3')]],
  ] as const)('writes again when the %s collection answer leaves a result out: one record per key', async (sobject, actions) => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    if (sobject === 'Task') await sync.applyMany([upsert(1), upsert(2), upsert(3)]);
    h.fake.failNext('missing_result', { endpoint: `PATCH /composite/sobjects/${sobject}/` });
    const outcomes = await sync.applyMany([...actions()]);
    expect(outcomes.every((o) => o.status === 'created' || o.status === 'updated')).toBe(true);
    const field = sobject === 'Task' ? 'AI_Idempotency_Key__c' : 'AI_External_Id__c';
    const values = h.fake.records(sobject).map((r) => r[field]);
    expect(values).toHaveLength(3);
    expect(new Set(values).size).toBe(3);
    // The upsert by key is the lookup: the retry re-sends only the input whose result was missing.
    expect(h.fake.count(`PATCH /composite/sobjects/${sobject}/`)).toBe(2);
    expect((h.fake.requests.at(-1)!.body as { records: unknown[] }).records).toHaveLength(1);
    await sync.close();
  });

  it('retries a 503 HTML page, and keeps its message and ledger row short when it does not clear', async () => {
    h = await harness(front);
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 2 } });
    h.fake.failNext('html_error', { endpoint: 'PATCH /composite/sobjects/Contact/' });
    expect((await sync.apply(upsert(1))).status).toBe('created');
    expect(h.fake.count('PATCH /composite/sobjects/Contact/')).toBe(2);

    h.fake.failNext('html_error', { times: 3 });
    const failed = await sync.apply(upsert(2));
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ status: 503, retryable: true });
    expect(failed.error!.message).toContain('Service Unavailable');
    expect(failed.error!.message.length).toBeLessThan(500);
    const row = (await ledger.list({ status: 'failed' }))[0];
    expect(JSON.stringify(row).length).toBeLessThan(1500);
    await sync.close();
  });

  it('fails a task whose parent contact does not exist, naming the parent', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const [contact, ok, orphan] = await sync.applyMany([upsert(1), taskOn('evt-t1', 'C-1'), taskOn('evt-t2', 'C-404')]);
    expect([contact!.status, ok!.status, orphan!.status]).toEqual(['created', 'created', 'failed']);
    expect(orphan!.error?.message).toContain('parent contact "C-404"');
    expect(h.fake.records('Task')).toHaveLength(1);
    await sync.close();
  });

  it('stops cleanly at the daily allocation share with the figure in the error, without a request storm', async () => {
    h = await harness(front, { apiUsed: 13_497, dailyLimit: 15_000 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany(Array.from({ length: 1000 }, (_, i) => upsert(i)));
    expect(statuses(outcomes)).toEqual({ created: 600, failed: 400 });
    expect(outcomes[999]!.error?.message).toContain('Salesforce API usage 13,500/15,000 (90%) reached the configured stop at 90%');
    expect(outcomes[999]!.error?.retryable).toBe(false);
    expect(h.fake.count()).toBe(3);
    const later = await sync.applyMany(Array.from({ length: 200 }, (_, i) => upsert(2000 + i)));
    expect(statuses(later)).toEqual({ failed: 200 });
    const fresh = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    expect(statuses(await fresh.applyMany([upsert(5000)]))).toEqual({ failed: 1 });
    expect(h.fake.count()).toBe(3);
    expect(h.fake.apiUsage().used).toBe(13_500);
    await sync.close();
    await fresh.close();
  });

  it('stops on a 403 REQUEST_LIMIT_EXCEEDED after one request', async () => {
    h = await harness(front, { apiUsed: 15_000, dailyLimit: 15_000 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany(Array.from({ length: 400 }, (_, i) => upsert(i)));
    expect(statuses(outcomes)).toEqual({ failed: 400 });
    expect(outcomes[0]!.error?.message).toContain('daily API request allocation is spent (usage 15,000/15,000)');
    expect(h.fake.count()).toBe(1);
    await sync.close();
  });

  it('sends exactly one request per adapter call on a 503: the engine retries, jsforce does not', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    h.fake.failNext('server_error');
    // A contact another process wrote: this Sync must query it.
    const contact = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply(upsert(1));
    expect(contact).toMatchObject({ status: 'created', attempts: 2 });
    expect(h.fake.count()).toBe(2);
    h.fake.failNext('server_error', { match: (r) => r.method === 'GET' });
    const task = await sync.apply(taskOn('evt-t1', 'C-1'));
    expect(task).toMatchObject({ status: 'created', attempts: 2 });
    expect(h.fake.counts()).toEqual({ 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 2, 'GET /query': 2, 'PATCH /composite/sobjects/Task/AI_Idempotency_Key__c': 1 });
    expect(h.adapter.apiCalls()).toBe(h.fake.count());
    await sync.close();
  });

  it('keeps the token out of every error message, outcome and ledger row', async () => {
    h = await harness(front, { accessToken: 'a-different-token', faults: { retryAfterSeconds: 0 } });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: { retries: 1, minTimeoutMs: 1, maxTimeoutMs: 2 } });
    const auth = await sync.applyMany([upsert(1), taskOn('evt-t1', 'C-1')]);
    expect(auth.map((o) => o.status)).toEqual(['failed', 'failed']);
    expect(auth[0]!.error?.message).toMatch(/rejected the access token/);

    const h2 = await harness(front, { faults: { retryAfterSeconds: 0 } });
    const sync2 = createSync({ adapter: h2.adapter, ledger, retry: { retries: 1, minTimeoutMs: 1, maxTimeoutMs: 2 } });
    h2.fake.failNext('server_error', { times: 2 });
    h2.fake.failNext('reset', { times: 2 });
    const more = await sync2.applyMany([upsert(2)]);
    const more2 = await sync2.applyMany([upsert(3)]);
    h2.fake.setApiUsage(15_000, 15_000);
    const more3 = await sync2.applyMany([upsert(4)]);
    expect([...more, ...more2, ...more3].map((o) => o.status)).toEqual(['failed', 'failed', 'failed']);

    const everything = JSON.stringify({ auth, more, more2, more3, rows: await ledger.list() });
    expect(everything).toContain('SERVER_UNAVAILABLE');
    expect(everything).toContain('ECONNRESET');
    expect(everything).toContain('REQUEST_LIMIT_EXCEEDED');
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain(TOKEN.slice(0, 15));
    await h2.stop();
    await sync.close();
    await sync2.close();
  });
});
