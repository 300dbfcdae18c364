import { afterEach, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import type { ActivityWrite, RecordWrite } from '../../src/adapter.js';
import type { RateBudget } from '../../src/rate-budget.js';
import { fronts, harness, objects, TOKEN, type Harness } from './hubspot-helpers.js';

const contact = (n: number | string, fields: RecordWrite['fields'] = { email: `c${n}@example.test` }): RecordWrite => ({ key: `k-c${n}`, object: 'contact', externalId: `C-${n}`, fields });
const note = (key: string, parent: string, fields: ActivityWrite['fields'] = { hs_note_body: `note ${key}`, hs_timestamp: '2026-11-29T10:00:00Z' }): ActivityWrite => ({
  key, object: 'note', parent: { object: 'contact', externalId: parent }, fields,
});

describe.each(fronts)('hubspotAdapter over %s (real @hubspot/api-client)', (front) => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('upserts 1,000 contacts in 10 batch calls and reports created, then updated', async () => {
    h = await harness(front);
    const writes = Array.from({ length: 1000 }, (_, i) => contact(i));
    const results = [];
    for (let i = 0; i < writes.length; i += 100) results.push(...(await h.adapter.upsertRecords('contact', writes.slice(i, i + 100))));
    expect(results.every((r) => r.ok && r.created)).toBe(true);
    expect(h.fake.count('batch/upsert')).toBe(10);
    expect(h.adapter.apiCalls()).toBe(10);
    expect(h.fake.records('contacts')).toHaveLength(1000);
    const again = await h.adapter.upsertRecords('contact', writes.slice(0, 100));
    expect(again.every((r) => r.ok && !r.created)).toBe(true);
    expect(h.fake.records('contacts')).toHaveLength(1000);
  });

  it('stringifies values and clears with an empty string', async () => {
    h = await harness(front);
    await h.adapter.upsertRecords('contact', [contact(1, { firstname: 42, lastname: true, email: 'a@x.test' })]);
    await h.adapter.upsertRecords('contact', [contact(1, { email: null })]);
    expect(h.fake.records('contacts')[0]!.properties).toMatchObject({ ai_external_id: 'C-1', firstname: '42', lastname: 'true', email: '' });
  });

  it('maps a 207 per-input failure back to its input and writes the rest', async () => {
    h = await harness(front, { batchConflicts: 'per-input' });
    h.fake.defineProperty('contacts', 'email', { unique: true });
    await h.adapter.upsertRecords('contact', [contact('taken', { email: 'dup@x.test' })]);
    const results = await h.adapter.upsertRecords('contact', [contact(1), contact(2, { email: 'dup@x.test' }), contact(3)]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    const failed = results[1]!;
    expect(!failed.ok && failed.error).toMatchObject({ kind: 'permanent', vendorCode: 'CONFLICT' });
    expect(!failed.ok && failed.error.message).toContain('Contact already exists. Existing ID:');
    expect(h.fake.records('contacts')).toHaveLength(3);
  });

  it('throws a splittable validation error when one input has an unknown property', async () => {
    h = await harness(front);
    const err = await h.adapter.upsertRecords('contact', [contact(1), contact(2, { favorite_color: 'teal' })]).catch((e: unknown) => e);
    const crm = h.adapter.classifyError(err);
    expect(crm).toMatchObject({ kind: 'permanent', splittable: true, status: 400 });
    expect(crm.message).toMatch(/Property .*favorite_color.* does not exist/);
    expect(h.fake.records('contacts')).toHaveLength(0);
  });

  it('creates notes on resolved parents with one parent read and fails missing parents by name', async () => {
    h = await harness(front);
    await h.adapter.upsertRecords('contact', [contact(1), contact(2)]);
    const results = await h.adapter.createActivities('note', [note('n1', 'C-1'), note('n2', 'C-404'), note('n3', 'C-2'), note('n4', 'C-1', { hs_note_body: 'no timestamp' })]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true, false]);
    expect(!results[1]!.ok && results[1]!.error.message).toContain('parent contact with ai_external_id=C-404 does not exist in HubSpot');
    expect(!results[3]!.ok && results[3]!.error.message).toContain('hs_timestamp');
    expect(h.fake.count('contacts/batch/read')).toBe(1);
    expect(h.fake.count('notes/batch/create')).toBe(1);
    const notes = h.fake.records('notes');
    expect(notes.map((n) => n.properties.crm_upsert_key).sort()).toEqual(['n1', 'n3']);
    const contacts = new Map(h.fake.records('contacts').map((c) => [c.properties.ai_external_id, c.id]));
    expect(notes.find((n) => n.properties.crm_upsert_key === 'n1')!.associations).toEqual({ contacts: [{ id: contacts.get('C-1'), typeId: 202 }] });
  });

  it('fails an input whose parent object is not configured for it, and writes the rest', async () => {
    h = await harness(front);
    await h.adapter.upsertRecords('contact', [contact(1)]);
    const results = await h.adapter.createActivities('note', [note('n1', 'C-1'), { ...note('n2', 'C-1'), parent: { object: 'company', externalId: 'X' } }]);
    expect(results.map((r) => r.ok)).toEqual([true, false]);
    expect(!results[1]!.ok && results[1]!.error.message).toContain('company is not a configured parent of note');
    expect(h.fake.records('notes')).toHaveLength(1);
  });

  it('skips the create call when no parent exists', async () => {
    h = await harness(front);
    const results = await h.adapter.createActivities('note', [note('n1', 'C-404')]);
    expect(results[0]!.ok).toBe(false);
    expect(h.fake.count('batch/create')).toBe(0);
  });

  it('finds notes after a lost response through the parent associations, not search', async () => {
    h = await harness(front, { searchLagMs: 30_000, associationPageSize: 2 });
    await h.adapter.upsertRecords('contact', [contact(1), contact(2)]);
    await h.adapter.createActivities('note', [note('old-1', 'C-1'), note('old-2', 'C-1')]);
    h.fake.failNext('lost_response', { endpoint: 'notes/batch/create' });
    const lost = await h.adapter.createActivities('note', [note('n1', 'C-1'), note('n2', 'C-2')]).catch((e: unknown) => e);
    expect(h.adapter.classifyError(lost)).toMatchObject({ kind: 'transient', ambiguous: true });
    const found = await h.adapter.findActivities('note', [note('n1', 'C-1'), note('n2', 'C-2'), note('n9', 'C-2')]);
    const ids = new Map(h.fake.records('notes').map((n) => [n.properties.crm_upsert_key, n.id]));
    expect(found).toEqual(new Map([['n1', ids.get('n1')], ['n2', ids.get('n2')]]));
    expect(h.fake.count('/search')).toBe(0);
    expect(h.fake.count('associations/contacts/notes/batch/read')).toBe(2);
  });

  it('makes exactly one HTTP attempt per call: the SDK does not retry a 503', async () => {
    h = await harness(front);
    h.fake.failNext('server_error');
    const err = await h.adapter.upsertRecords('contact', [contact(1)]).catch((e: unknown) => e);
    expect(h.adapter.classifyError(err)).toMatchObject({ kind: 'transient', status: 503 });
    expect(h.fake.count()).toBe(1);
    expect(h.adapter.apiCalls()).toBe(1);
  });

  it('classifies 429s from the wire: ten-second with Retry-After, and DAILY as quota', async () => {
    h = await harness(front, { faults: { retryAfterSeconds: 1 }, dailyLimit: 1 });
    h.fake.failNext('rate_limit');
    const limited = await h.adapter.upsertRecords('contact', [contact(1)]).catch((e: unknown) => e);
    expect(h.adapter.classifyError(limited)).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000 });
    await h.adapter.upsertRecords('contact', [contact(1)]);
    const daily = await h.adapter.upsertRecords('contact', [contact(2)]).catch((e: unknown) => e);
    expect(h.adapter.classifyError(daily)).toMatchObject({ kind: 'quota', retryable: false });
  });

  it('spends the rate budget before every HTTP request', async () => {
    let acquired = 0;
    const budget: RateBudget = { acquire: async () => void (acquired += 1) };
    h = await harness(front, {}, { rateBudget: budget });
    await h.adapter.upsertRecords('contact', [contact(1)]);
    await h.adapter.createActivities('note', [note('n1', 'C-1')]);
    await h.adapter.findActivities('note', [note('n1', 'C-1')]);
    expect(h.fake.count()).toBe(6);
    expect(acquired).toBe(6);
    expect(h.adapter.apiCalls()).toBe(6);
  });

  it('never lets the token reach an error message', async () => {
    h = await harness(front);
    const wrong = hubspotAdapter({ accessToken: 'pat-na1-wrong-token-0c0ffee', basePath: h.basePath, objects });
    const messages: string[] = [];
    const collect = async (p: Promise<unknown>, adapter = h.adapter) => {
      const err = await p.then(() => undefined, (e: unknown) => e);
      if (err) messages.push(JSON.stringify(adapter.classifyError(err)), adapter.classifyError(err).message, String(adapter.classifyError(err).stack));
    };
    await collect(wrong.upsertRecords('contact', [contact(1)]), wrong);
    await collect(h.adapter.upsertRecords('contact', [contact(1, { favorite_color: TOKEN })]));
    h.fake.failNext('reset');
    await collect(h.adapter.upsertRecords('contact', [contact(1)]));
    expect(messages.length).toBe(9);
    expect(messages.join('\n')).toContain('HUBSPOT_ACCESS_TOKEN');
    for (const secret of [TOKEN, 'pat-na1-wrong-token-0c0ffee']) expect(messages.join('\n')).not.toContain(secret);
  });
});
