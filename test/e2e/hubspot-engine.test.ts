import { afterEach, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { fronts, harness, objects, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const upsert = (n: number, fields: Record<string, string> = { email: `c${n}@example.test` }) => ({
  source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields,
});
const noteOn = (eventId: string, contact: string, body = `note for ${eventId}`) => ({
  source: 'crm-test', eventId, op: 'create', object: 'note', target: { object: 'contact', externalId: contact },
  fields: { hs_note_body: body, hs_timestamp: '2026-11-29T10:00:00Z' },
});
const statuses = (outcomes: Outcome[]) => {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
};

describe.each(fronts)('createSync with hubspotAdapter over %s', (front) => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('writes 1,000 distinct contacts in exactly 10 batch upserts, then replays them with 0 calls', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), dedupeWindowMs: 600_000, retry: fast });
    const actions = Array.from({ length: 1000 }, (_, i) => upsert(i));
    expect(statuses(await sync.applyMany(actions))).toEqual({ created: 1000 });
    expect(h.fake.count('batch/upsert')).toBe(10);
    expect(h.fake.count()).toBe(10);
    const again = await sync.applyMany(actions);
    expect(statuses(again)).toEqual({ replayed: 1000 });
    expect(h.fake.count()).toBe(10);
    expect(h.adapter.apiCalls()).toBe(10);
    expect(h.fake.records('contacts')).toHaveLength(1000);
    await sync.close();
  });

  it('isolates one unknown property in a batch of 100: 99 written, 1 failed with HubSpot message', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const actions = Array.from({ length: 100 }, (_, i) => (i === 37 ? upsert(i, { email: 'bad@example.test', favorite_color: 'teal' }) : upsert(i)));
    const outcomes = await sync.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 99, failed: 1 });
    expect(outcomes[37]!.status).toBe('failed');
    expect(outcomes[37]!.error?.message).toMatch(/Property .*favorite_color.* does not exist/);
    expect(outcomes[37]!.error?.retryable).toBe(false);
    expect(h.fake.records('contacts')).toHaveLength(99);
    expect(h.fake.records('contacts').map((c) => c.properties.ai_external_id)).not.toContain('C-37');
    // Halving isolates it in about 2·log2(100) calls, not 100.
    expect(h.fake.count('batch/upsert')).toBeLessThanOrEqual(16);
    await sync.close();
  });

  it('creates notes on contacts upserted in the same call without reading the contacts back', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany([noteOn('evt-s1', 'C-1'), upsert(1), noteOn('evt-s2', 'C-2'), upsert(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created']);
    expect(h.fake.count('contacts/batch/read')).toBe(0);
    const contactIds = h.fake.records('contacts').map((c) => c.id);
    expect(h.fake.records('notes').map((n) => n.associations.contacts?.[0]?.id)).toEqual(contactIds);
    await sync.close();
  });

  it('reads the parents of a note batch once across its retries', async () => {
    h = await harness(front);
    // counts the reads of the failure path alone (a durable ledger's setting)
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    // Contacts another process wrote: this Sync must read them.
    await createSync({ adapter: h.adapter, ledger: openLedger('memory:') }).applyMany([upsert(1), upsert(2)]);
    h.fake.failNext('server_error', { endpoint: 'notes/batch/create' });
    h.fake.failNext('lost_response', { endpoint: 'notes/batch/create' });
    const outcomes = await sync.applyMany([noteOn('evt-p1', 'C-1'), noteOn('evt-p2', 'C-2')]);
    expect(statuses(outcomes)).toEqual({ created: 2 });
    expect(h.fake.count('notes/batch/create')).toBe(2);
    expect(h.fake.count('associations')).toBe(2);
    expect(h.fake.count('contacts/batch/read')).toBe(1);
    expect(h.fake.records('notes')).toHaveLength(2);
    await sync.close();
  });

  it('recovers a note whose create response was lost through the association, with search lagging 30 s', async () => {
    h = await harness(front, { searchLagMs: 30_000 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    expect((await sync.apply(upsert(1))).status).toBe('created');
    h.fake.failNext('lost_response', { endpoint: 'notes/batch/create' });
    const outcome = await sync.apply(noteOn('evt-n1', 'C-1'));
    expect(outcome.status).toBe('created');
    const notes = h.fake.records('notes');
    expect(notes).toHaveLength(1);
    expect(outcome.recordId).toBe(notes[0]!.id);
    expect(h.fake.count('notes/batch/create')).toBe(1);
    expect(h.fake.count('/search')).toBe(0);
    expect(h.fake.count('associations/contacts/notes/batch/read')).toBe(1);
    expect((await sync.apply(noteOn('evt-n1', 'C-1', 'a rewritten summary'))).status).toBe('replayed');
    expect(h.fake.records('notes')).toHaveLength(1);
    await sync.close();
  });

  it('looks the notes up before creating again when a 201 left one result out: one note per key, no second create', async () => {
    h = await harness(front);
    // a durable ledger's setting: the only lookup is the one the missing result calls for
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    // Contacts another process wrote: this Sync must read them.
    await createSync({ adapter: h.adapter, ledger: openLedger('memory:') }).applyMany([upsert(1), upsert(2), upsert(3)]);
    h.fake.core.resetLog();
    h.fake.failNext('missing_result', { endpoint: 'notes/batch/create' });
    const outcomes = await sync.applyMany([noteOn('evt-m1', 'C-1'), noteOn('evt-m2', 'C-2'), noteOn('evt-m3', 'C-3')]);
    expect(statuses(outcomes)).toEqual({ created: 3 });
    const keys = h.fake.records('notes').map((n) => n.properties.crm_upsert_key);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    expect(outcomes.map((o) => o.recordId).sort()).toEqual(h.fake.records('notes').map((n) => n.id).sort());
    expect(h.fake.core.log.map((e) => e.endpoint)).toEqual([
      'POST /crm/v3/objects/contacts/batch/read',
      'POST /crm/v3/objects/notes/batch/create',
      'POST /crm/v4/associations/contacts/notes/batch/read',
      'POST /crm/v3/objects/notes/batch/read',
    ]);
    await sync.close();
  });

  it('isolates the input behind a whole-batch 409 CONFLICT: 7 of 8 contacts written, 1 failed with HubSpot message', async () => {
    h = await harness(front);
    h.fake.defineProperty('contacts', 'email', { unique: true });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const taken = await sync.apply(upsert(100, { email: 'taken@example.test' }));
    h.fake.core.resetLog();
    const outcomes = await sync.applyMany(Array.from({ length: 8 }, (_, i) => (i === 5 ? upsert(i, { email: 'taken@example.test' }) : upsert(i))));
    expect(statuses(outcomes)).toEqual({ created: 7, failed: 1 });
    expect(outcomes[5]!.error?.message).toContain(`Contact already exists. Existing ID: ${taken.recordId}`);
    expect(outcomes[5]!.error?.retryable).toBe(false);
    expect(h.fake.records('contacts').map((c) => c.properties.ai_external_id).sort()).toEqual(['C-0', 'C-1', 'C-100', 'C-2', 'C-3', 'C-4', 'C-6', 'C-7']);
    // Halving: 8 -> 4 + 4 -> 2 + 2 -> 1 + 1.
    expect(h.fake.count('batch/upsert')).toBe(7);
    await sync.close();
  });

  it.each([
    ['a non-unique idProperty', { contact: { ...objects.contact, idProperty: 'email' } as (typeof objects)['contact'] }, {}, /non-unique email property/],
    ['a property every input sends and HubSpot lacks', objects, { favorite_color: 'teal' }, /property "favorite_color" does not exist/],
  ])('fails a batch on %s once, without splitting: 8 inputs, 1 call', async (_label, adapterObjects, extra, message) => {
    h = await harness(front, {}, { objects: { ...objects, ...adapterObjects } });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany(Array.from({ length: 8 }, (_, i) => upsert(i, { email: `c${i}@example.test`, ...extra })));
    expect(statuses(outcomes)).toEqual({ failed: 8 });
    expect(outcomes[0]!.error?.message).toMatch(message);
    expect(outcomes[0]!.error?.message).toContain('crm-upsert check-setup');
    expect(outcomes[0]!.error?.retryable).toBe(false);
    expect(h.fake.count()).toBe(1);
    expect(h.fake.records('contacts')).toHaveLength(0);
    await sync.close();
  });

  it('retries a 502 whose body is an HTML page served as JSON, and writes once', async () => {
    h = await harness(front);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    h.fake.failNext('html_error', { endpoint: 'contacts/batch/upsert' });
    const outcomes = await sync.applyMany([upsert(1), upsert(2)]);
    expect(statuses(outcomes)).toEqual({ created: 2 });
    expect(h.fake.count('contacts/batch/upsert')).toBe(2);
    expect(h.fake.records('contacts')).toHaveLength(2);
    await sync.close();
  });

  it('stops at the DAILY limit without a retry storm and leaves the rest failed, retryable later', async () => {
    h = await harness(front, { dailyLimit: 3 });
    const ledger = openLedger('memory:');
    const actions = Array.from({ length: 1000 }, (_, i) => upsert(i));
    const first = await createSync({ adapter: h.adapter, ledger, retry: fast }).applyMany(actions);
    expect(statuses(first)).toEqual({ created: 300, failed: 700 });
    expect(h.fake.count()).toBe(4);
    const failed = first.find((o) => o.status === 'failed')!;
    expect(failed.error?.message).toMatch(/daily API limit reached/);
    expect(failed.error?.retryable).toBe(false);
    expect(await ledger.list({ status: 'failed' })).toHaveLength(700);

    h.fake.resetDaily(1000);
    const later = createSync({ adapter: h.adapter, ledger, retry: fast });
    expect(statuses(await later.applyMany(actions))).toEqual({ replayed: 300, created: 700 });
    expect(h.fake.count()).toBe(4 + 7);
    expect(h.fake.records('contacts')).toHaveLength(1000);
    await later.close();
  });

  it('keeps the token out of every outcome and ledger row (401, 400, network errors)', async () => {
    h = await harness(front);
    const ledger = openLedger('memory:');
    const outcomes: Outcome[] = [];
    const wrongToken = 'pat-na1-revoked-token-7d1e2f3a';
    const wrong = hubspotAdapter({ accessToken: wrongToken, basePath: h.basePath, objects });
    outcomes.push(await createSync({ adapter: wrong, ledger, retry: fast }).apply(upsert(1)));
    const sync = createSync({ adapter: h.adapter, ledger, retry: { ...fast, retries: 1 } });
    outcomes.push(await sync.apply(upsert(2, { favorite_color: 'teal' })));
    h.fake.failNext('reset', { times: 10 });
    outcomes.push(await sync.apply(upsert(3)));
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'failed', 'failed']);
    expect(outcomes[0]!.error?.message).toMatch(/HUBSPOT_ACCESS_TOKEN/);
    expect(outcomes[2]!.error?.message).toMatch(/ECONNRESET|socket hang up/);
    const everything = JSON.stringify({ outcomes, rows: await ledger.list() });
    for (const secret of [TOKEN, wrongToken]) expect(everything).not.toContain(secret);
    await sync.close();
  });
});
