import { Connection } from 'jsforce';
import nock from 'nock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { salesforceAdapter, type SalesforceAdapterOptions, type SalesforceConnection } from '../../../adapters/salesforce/index.js';
import { fakeSalesforce, type FakeSalesforce } from '../../../adapters/salesforce/fake/salesforce-fake.js';
import { parentMemoKey, type ActivityWrite, type RecordWrite, type WriteResult } from '../../../src/adapter.js';
import { ConfigError, CrmError } from '../../../src/errors.js';
import type { RateBudget } from '../../../src/rate-budget.js';

const TOKEN = '00DFAKE!ARkAQtokenNeverShown.9f8e7d';
let origins = 0;
const fronts = ['loopback', 'nock'] as const;
const open = (fake: FakeSalesforce, front: (typeof fronts)[number]) =>
  fake.open(front, `https://adapter${++origins}.my.salesforce.com`).then((f) => ({ instanceUrl: f.url, stop: f.stop }));

const objects: SalesforceAdapterOptions['objects'] = {
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'] },
  account: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description'], parents: { contact: 'WhoId', account: 'WhatId' } },
};

const rec = (externalId: string, fields: RecordWrite['fields'] = {}): RecordWrite => ({ key: `k-${externalId}`, object: 'contact', externalId, fields: { LastName: `L-${externalId}`, ...fields } });
const act = (key: string, parent: string, fields: ActivityWrite['fields'] = { Subject: key }, parentObject = 'contact'): ActivityWrite => ({ key, object: 'task', parent: { object: parentObject, externalId: parent }, fields });
const failure = (r: WriteResult | undefined) => (r && !r.ok ? r.error : undefined);

describe.each(fronts)('salesforceAdapter over %s', (kind) => {
  let stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops) await stop();
    stops = [];
  });

  async function setup(extra: Partial<SalesforceAdapterOptions> = {}, fakeOptions: Parameters<typeof fakeSalesforce>[0] = {}) {
    const fake = fakeSalesforce({ accessToken: TOKEN, ...fakeOptions });
    const front = await open(fake, kind);
    stops.push(front.stop);
    const adapter = salesforceAdapter({ instanceUrl: front.instanceUrl, accessToken: TOKEN, objects, ...extra });
    return { fake, adapter, instanceUrl: front.instanceUrl };
  }

  describe('upsertRecords', () => {
    it('writes a batch in one collection call and returns one result per input, in order', async () => {
      const { fake, adapter } = await setup();
      await adapter.upsertRecords('contact', [rec('b')]);
      const res = await adapter.upsertRecords('contact', [rec('a'), rec('b', { FirstName: 'Bo' }), rec('c', { Email: 'nope' }), rec('d')]);
      expect(res.map((r) => (r.ok ? (r.created ? 'created' : 'updated') : r.error.vendorCode))).toEqual(['created', 'updated', 'INVALID_EMAIL_ADDRESS', 'created']);
      expect(failure(res[2])?.message).toContain('INVALID_EMAIL_ADDRESS: Email: invalid email address: nope');
      expect(failure(res[2])?.kind).toBe('permanent');
      const ids = fake.records('Contact').map((r) => r.Id);
      expect(res.filter((r) => r.ok).map((r) => (r.ok ? r.recordId : ''))).toEqual([ids[1], ids[0], ids[2]]);
      expect(fake.counts()).toEqual({ 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 2 });
      expect(adapter.apiCalls()).toBe(2);
    });

    it('sends even one record as an array, so the external id never reaches the URL', async () => {
      const { fake, adapter } = await setup();
      const value = 'x/y?z=1#frag %41 "q" \\ ü';
      const [r] = await adapter.upsertRecords('contact', [rec(value)]);
      expect(r).toMatchObject({ ok: true, created: true });
      expect(fake.records('Contact')[0]!.AI_External_Id__c).toBe(value);
      expect(fake.requests.map((q) => q.path)).toEqual(['/services/data/v60.0/composite/sobjects/Contact/AI_External_Id__c']);
      expect(fake.requests[0]!.body).toMatchObject({ allOrNone: false, records: [{ AI_External_Id__c: value, attributes: { type: 'Contact' } }] });
    });

    it('marks UNABLE_TO_LOCK_ROW retryable and other record errors permanent', async () => {
      const { fake, adapter } = await setup();
      fake.lockRowNext(1);
      const res = await adapter.upsertRecords('contact', [rec('a'), rec('b', { LastName: null })]);
      expect(failure(res[0])).toMatchObject({ kind: 'transient', retryable: true, vendorCode: 'UNABLE_TO_LOCK_ROW' });
      expect(failure(res[1])).toMatchObject({ kind: 'permanent', retryable: false, vendorCode: 'REQUIRED_FIELD_MISSING' });
      expect(await adapter.upsertRecords('contact', [rec('a')])).toEqual([expect.objectContaining({ ok: true, created: true })]);
    });

    it('refuses more than 200 records with a splittable error, before any request', async () => {
      const { fake, adapter } = await setup();
      const err = await adapter.upsertRecords('contact', Array.from({ length: 201 }, (_, i) => rec(`x${i}`))).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'permanent', splittable: true });
      expect(fake.count()).toBe(0);
    });

    it('fails an empty external id per input without sending it', async () => {
      const { fake, adapter } = await setup();
      const res = await adapter.upsertRecords('contact', [rec(''), rec('ok')]);
      expect(failure(res[0])?.vendorCode).toBe('MISSING_EXTERNAL_ID');
      expect(res[1]!.ok).toBe(true);
      expect(fake.records('Contact')).toHaveLength(1);
    });

    it('throws a splittable 400 when a field the org lacks fails the whole batch', async () => {
      const { adapter } = await setup({ objects: { contact: { ...objects.contact!, fields: ['LastName', 'Nope__c'] } as SalesforceAdapterOptions['objects'][string] } });
      const err = await adapter.upsertRecords('contact', [rec('a'), rec('b', { Nope__c: 1 })]).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'permanent', splittable: true, status: 400, vendorCode: 'INVALID_FIELD' });
    });

    it('explains a 404 when the field is not an External ID', async () => {
      const { adapter } = await setup({ objects: { contact: { kind: 'record', sobject: 'Contact', externalIdField: 'Email', fields: ['LastName'] } } });
      const err = (await adapter.upsertRecords('contact', [rec('a@x.io')]).catch((e: unknown) => e)) as CrmError;
      expect(err).toMatchObject({ kind: 'permanent', status: 404, vendorCode: 'NOT_FOUND' });
      expect(err.message).toMatch(/External ID/);
    });

    it('sends the duplicate-rule header only when allowDuplicateSave is set', async () => {
      const { fake, adapter } = await setup({ allowDuplicateSave: true });
      fake.addDuplicateRule('Contact', 'Email');
      const res = await adapter.upsertRecords('contact', [rec('a', { Email: 'same@x.io' })]);
      const again = await adapter.upsertRecords('contact', [rec('b', { Email: 'same@x.io' })]);
      expect([res[0]!.ok, again[0]!.ok]).toEqual([true, true]);
      expect(fake.requests.every((q) => q.headers['sforce-duplicate-rule-header'] === 'allowSave=true')).toBe(true);
      const plain = await setup();
      plain.fake.addDuplicateRule('Contact', 'Email');
      await plain.adapter.upsertRecords('contact', [rec('a', { Email: 'same@x.io' })]);
      const blocked = await plain.adapter.upsertRecords('contact', [rec('b', { Email: 'same@x.io' })]);
      expect(failure(blocked[0])).toMatchObject({ kind: 'permanent', vendorCode: 'DUPLICATES_DETECTED' });
      expect(plain.fake.requests[0]!.headers['sforce-duplicate-rule-header']).toBeUndefined();
    });
  });

  describe('beforeSend', () => {
    it('stops a collection upsert before it leaves: its error propagates unchanged, 0 requests', async () => {
      const { fake, adapter } = await setup();
      const lost = new Error('claim lost');
      const err = await adapter.upsertRecords('contact', [rec('a')], { memo: new Map(), beforeSend: () => Promise.reject(lost) }).catch((e: unknown) => e);
      expect(err).toBe(lost);
      expect(fake.count()).toBe(0);
      expect(adapter.apiCalls()).toBe(0);
      expect(fake.records('Contact')).toHaveLength(0);
    });

    it('stops a Task upsert after the budget was granted, and lets it through once per request when it resolves', async () => {
      const order: string[] = [];
      const rateBudget: RateBudget = { acquire: async () => void order.push('budget') };
      const { fake, adapter } = await setup({ rateBudget });
      await adapter.upsertRecords('contact', [rec('a'), rec('b')], { memo: new Map(), beforeSend: async () => void order.push('beforeSend') });
      const memo = new Map([[parentMemoKey('contact', 'a'), fake.records('Contact')[0]!.Id]]);
      fake.core.resetLog();
      order.length = 0;
      const beforeSend = async () => {
        order.push('beforeSend');
        throw new Error('claim lost');
      };
      await expect(adapter.createActivities('task', [act('t1', 'a')], { memo, beforeSend })).rejects.toThrow('claim lost');
      expect(order).toEqual(['budget', 'beforeSend']);
      expect(fake.count()).toBe(0);
      expect(fake.records('Task')).toHaveLength(0);
      expect(fake.records('Contact')).toHaveLength(2);
    });
  });

  describe('createActivities', () => {
    it('resolves all parents in one query and upserts the Tasks by their key', async () => {
      const { fake, adapter } = await setup();
      await adapter.upsertRecords('contact', [rec("O'Brien \\ ü"), rec('p2')]);
      fake.core.resetLog();
      const writes = [act('t1', "O'Brien \\ ü"), act('t2', 'p2'), act('t3', "O'Brien \\ ü"), act('t4', 'missing')];
      const res = await adapter.createActivities('task', writes);
      expect(res.map((r) => (r.ok ? r.created : r.error.vendorCode))).toEqual([true, true, true, 'PARENT_NOT_FOUND']);
      expect(failure(res[3])?.message).toContain('parent contact "missing" (Contact.AI_External_Id__c) does not exist');
      expect(fake.counts()).toEqual({ 'GET /query': 1, 'PATCH /composite/sobjects/Task/AI_Idempotency_Key__c': 1 });
      const contacts = new Map(fake.records('Contact').map((c) => [c.AI_External_Id__c, c.Id]));
      expect(fake.records('Task').map((t) => [t.AI_Idempotency_Key__c, t.WhoId])).toEqual([
        ['t1', contacts.get("O'Brien \\ ü")],
        ['t2', contacts.get('p2')],
        ['t3', contacts.get("O'Brien \\ ü")],
      ]);
      const again = await adapter.createActivities('task', writes.slice(0, 3));
      expect(again.map((r) => r.ok && r.created)).toEqual([false, false, false]);
      expect(fake.records('Task')).toHaveLength(3);
    });

    it('attaches to the parent whose external id matches exactly, case included', async () => {
      const { fake, adapter } = await setup();
      await adapter.upsertRecords('contact', [rec('abc'), rec('ABC')]);
      await adapter.createActivities('task', [act('t1', 'ABC')]);
      const upper = fake.records('Contact').find((c) => c.AI_External_Id__c === 'ABC')!;
      expect(fake.records('Task')[0]!.WhoId).toBe(upper.Id);
    });

    it('sets the lookup field configured for each parent object', async () => {
      const { fake, adapter } = await setup();
      await adapter.upsertRecords('account', [{ key: 'a', object: 'account', externalId: 'acme', fields: { Name: 'Acme' } }]);
      const [r] = await adapter.createActivities('task', [act('t1', 'acme', { Subject: 'call' }, 'account')]);
      expect(r!.ok).toBe(true);
      expect(fake.records('Task')[0]).toMatchObject({ WhatId: fake.records('Account')[0]!.Id });
      expect(fake.records('Task')[0]!.WhoId).toBeUndefined();
    });
  });

  describe('findActivities', () => {
    it('finds existing activities by key with one query', async () => {
      const { fake, adapter } = await setup();
      await adapter.upsertRecords('contact', [rec('p')]);
      await adapter.createActivities('task', [act('k1', 'p'), act("k'2", 'p')]);
      fake.core.resetLog();
      const found = await adapter.findActivities('task', [act('k1', 'p'), act("k'2", 'p'), act('k3', 'p')]);
      const tasks = fake.records('Task');
      expect(found).toEqual(new Map([['k1', tasks[0]!.Id], ["k'2", tasks[1]!.Id]]));
      expect(fake.count()).toBe(1);
    });
  });

  describe('one HTTP attempt per call', () => {
    it.each([
      ['a 503 on the collection upsert', 'server_error', (a: ReturnType<typeof salesforceAdapter>) => a.upsertRecords('contact', [rec('a')]), { kind: 'transient', ambiguous: true, status: 503 }],
      ['a 503 on a query', 'server_error', (a: ReturnType<typeof salesforceAdapter>) => a.findActivities('task', [act('k', 'p')]), { kind: 'transient', ambiguous: true, status: 503 }],
      ['a reset on a query', 'reset', (a: ReturnType<typeof salesforceAdapter>) => a.findActivities('task', [act('k', 'p')]), { kind: 'transient', ambiguous: true, vendorCode: 'ECONNRESET' }],
      ['a 429 on the parent lookup', 'rate_limit', (a: ReturnType<typeof salesforceAdapter>) => a.createActivities('task', [act('k', 'p')]), { kind: 'rate_limited', retryAfterMs: 0 }],
      ['a lost response on the upsert', 'lost_response', (a: ReturnType<typeof salesforceAdapter>) => a.upsertRecords('contact', [rec('a')]), { kind: 'transient', ambiguous: true }],
    ] as const)('sends exactly one request on %s', async (_name, fault, call, expected) => {
      const { fake, adapter } = await setup({}, { faults: { retryAfterSeconds: 0 } });
      fake.failNext(fault);
      const err = await call(adapter).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(CrmError);
      expect(err).toMatchObject(expected);
      expect(fake.count()).toBe(1);
      expect(adapter.apiCalls()).toBe(1);
    });

    it('differs from plain jsforce, which retries a GET on 503 by itself', async () => {
      const { fake, instanceUrl } = await setup();
      const conn = new Connection({ instanceUrl, accessToken: TOKEN, version: '60.0' });
      fake.failNext('server_error');
      await conn.query('SELECT Id FROM Contact');
      expect(fake.count()).toBe(2);
    });

    it('spends the rate budget once per HTTP request', async () => {
      let acquired = 0;
      const rateBudget: RateBudget = { acquire: async () => void (acquired += 1) };
      const { fake, adapter } = await setup({ rateBudget });
      await adapter.upsertRecords('contact', [rec('p')]);
      await adapter.createActivities('task', [act('t', 'p')]);
      await adapter.findActivities('task', [act('t', 'p')]);
      expect(acquired).toBe(4);
      expect(fake.count()).toBe(4);
      expect(adapter.apiCalls()).toBe(4);
    });
  });

  describe('daily allocation', () => {
    it('stops before the call once usage reaches dailyLimitShare, with the figures', async () => {
      const { fake, adapter } = await setup({}, { apiUsed: 13_498, dailyLimit: 15_000 });
      await adapter.upsertRecords('contact', [rec('a')]);
      await adapter.upsertRecords('contact', [rec('b')]);
      const err = (await adapter.upsertRecords('contact', [rec('c')]).catch((e: unknown) => e)) as CrmError;
      expect(err).toMatchObject({ kind: 'quota', retryable: false });
      expect(err.message).toContain('Salesforce API usage 13,500/15,000 (90%) reached the configured stop at 90%');
      expect(fake.count()).toBe(2);
      expect(fake.records('Contact')).toHaveLength(2);
    });

    it('re-reads the usage with one request once the last figure is 15 minutes old', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        const { fake, adapter } = await setup({}, { apiUsed: 13_499, dailyLimit: 15_000 });
        await adapter.upsertRecords('contact', [rec('a')]);
        await expect(adapter.upsertRecords('contact', [rec('b')])).rejects.toMatchObject({ kind: 'quota' });
        vi.setSystemTime(Date.now() + 14 * 60_000);
        await expect(adapter.upsertRecords('contact', [rec('b')])).rejects.toMatchObject({ kind: 'quota' });
        expect(fake.count()).toBe(1);
        fake.setApiUsage(2_000);
        vi.setSystemTime(Date.now() + 2 * 60_000);
        expect(await adapter.upsertRecords('contact', [rec('b')])).toEqual([expect.objectContaining({ ok: true })]);
        expect(await adapter.upsertRecords('contact', [rec('c')])).toEqual([expect.objectContaining({ ok: true })]);
        expect(fake.count()).toBe(3);
      } finally {
        vi.useRealTimers();
      }
    });

    it('reports a 403 REQUEST_LIMIT_EXCEEDED as quota with the usage', async () => {
      const { adapter } = await setup({ dailyLimitShare: 1 }, { apiUsed: 15_000, dailyLimit: 15_000 });
      const err = (await adapter.upsertRecords('contact', [rec('a')]).catch((e: unknown) => e)) as CrmError;
      expect(err).toMatchObject({ kind: 'quota', status: 403, vendorCode: 'REQUEST_LIMIT_EXCEEDED' });
      expect(err.message).toContain('usage 15,000/15,000');
      expect(err.message).toContain('TotalRequests Limit exceeded.');
    });
  });

  describe('secrets', () => {
    it('classifies a wrong token as auth, with a hint and without the token', async () => {
      const fake = fakeSalesforce({ accessToken: 'the-right-one' });
      const front = await open(fake, kind);
      stops.push(front.stop);
      const adapter = salesforceAdapter({ instanceUrl: front.instanceUrl, accessToken: TOKEN, objects });
      const err = (await adapter.upsertRecords('contact', [rec('a')]).catch((e: unknown) => e)) as CrmError;
      expect(err).toMatchObject({ kind: 'auth', status: 401, vendorCode: 'INVALID_SESSION_ID' });
      expect(err.message).toMatch(/expired/);
      expect(err.message).not.toContain(TOKEN);
      expect(JSON.stringify(err)).not.toContain(TOKEN);
      expect(JSON.stringify(adapter.classifyError(err.cause))).not.toContain(TOKEN);
    });
  });
});

describe('salesforceAdapter with an injected connection', () => {
  const stub = (body: unknown): SalesforceConnection => ({ instanceUrl: 'https://stub.my.salesforce.com', version: '60.0', accessToken: 'stub-token', request: async <R>() => body as R });

  it.each([
    ['an empty array', []],
    ['a result without an id', [{ success: true, errors: [] }]],
    ['a non-array body', { ok: true }],
  ])('treats %s from a 2xx as a failure, never a success', async (_name, body) => {
    const adapter = salesforceAdapter({ connection: stub(body), objects });
    const res = await adapter.upsertRecords('contact', [rec('a')]);
    expect(res).toHaveLength(1);
    expect(failure(res[0])).toMatchObject({ kind: 'transient', ambiguous: true });
    expect(adapter.apiCalls()).toBe(1);
  });

  it('redacts a token the injected connection obtains later by refreshing', () => {
    const conn = new Connection({ instanceUrl: 'https://refresh.my.salesforce.com', accessToken: 'first-token-1234', version: '60.0' });
    const adapter = salesforceAdapter({ connection: conn, objects });
    conn.emit('refresh', 'refreshed-token-5678', {});
    const err = adapter.classifyError(Object.assign(new Error('session refreshed-token-5678 rejected'), { errorCode: 'INVALID_SESSION_ID' }));
    expect(err.message).not.toContain('refreshed-token-5678');
    expect(adapter.classifyError(new Error('first-token-1234')).message).not.toContain('first-token-1234');
  });

  it('turns every retry off, a 420 included', async () => {
    const origin = 'https://retry420.my.salesforce.com';
    let hits = 0;
    nock(origin)
      .get(/\/query/)
      .times(3)
      .reply(() => {
        hits += 1;
        return [420, [{ errorCode: 'ERROR_HTTP_420', message: 'org locked' }], { 'content-type': 'application/json' }];
      });
    try {
      const adapter = salesforceAdapter({ connection: new Connection({ instanceUrl: origin, accessToken: 'x-token', version: '60.0' }), objects });
      await expect(adapter.findActivities('task', [act('k', 'p')])).rejects.toBeInstanceOf(CrmError);
      expect(hits).toBe(1);
      expect(adapter.apiCalls()).toBe(1);
    } finally {
      nock.cleanAll();
    }
  });
});

describe('salesforceAdapter given an object it was not configured with', () => {
  const adapter = salesforceAdapter({ instanceUrl: 'https://unknown-object.my.salesforce.com', accessToken: TOKEN, objects });

  it.each([
    ['upsertRecords', () => adapter.upsertRecords('lead', [{ ...rec('x'), object: 'lead' }])],
    ['createActivities', () => adapter.createActivities('event', [{ ...act('k', 'x'), object: 'event' }])],
    ['findActivities', () => adapter.findActivities('event', [{ ...act('k', 'x'), object: 'event' }])],
    ['upsertRecords of an activity object', () => adapter.upsertRecords('task', [rec('x')])],
  ])('%s throws a ConfigError naming the object and the configured ones, sending nothing', async (_name, call) => {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/"(lead|event|task)" is not a configured (record|activity) object; configured: contact \(record\), account \(record\), task \(activity\)/);
    expect(adapter.apiCalls()).toBe(0);
  });
});
