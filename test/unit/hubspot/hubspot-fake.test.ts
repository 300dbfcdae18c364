import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot, type FakeHubSpotOptions } from '../../../adapters/testing/index.js';

interface Reply { status: number; body: Record<string, unknown>; headers: Headers }
type Results = { id: string; new?: boolean; objectWriteTraceId?: string; properties: Record<string, string | null> }[];

let fake: FakeHubSpot;
let close: () => Promise<void> = async () => undefined;
let base = '';

async function open(options: FakeHubSpotOptions = {}) {
  await close();
  fake = fakeHubSpot(options);
  const server = await fake.listen();
  base = server.basePath;
  close = server.close;
}

async function call(method: string, path: string, body?: unknown, token: string | null = 'pat-test'): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const upsert = (inputs: unknown[]) => call('POST', '/crm/v3/objects/contacts/batch/upsert', { inputs });
const contact = (id: string, properties: Record<string, string> = {}, trace?: string) => ({ idProperty: 'ai_external_id', id, properties, ...(trace ? { objectWriteTraceId: trace } : {}) });
const note = (contactId: string, properties: Record<string, string>, trace?: string) => ({
  properties, associations: [{ to: { id: contactId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] }], ...(trace ? { objectWriteTraceId: trace } : {}),
});

beforeEach(() => open());
afterEach(async () => {
  await close();
  close = async () => undefined;
});

describe('fakeHubSpot', () => {
  it('answers 401 INVALID_AUTHENTICATION without a bearer token or with the wrong one', async () => {
    expect(await call('POST', '/crm/v3/objects/contacts/batch/upsert', { inputs: [contact('A')] }, null)).toMatchObject({ status: 401, body: { category: 'INVALID_AUTHENTICATION' } });
    await open({ token: 'pat-right' });
    const r = await call('POST', '/crm/v3/objects/contacts/batch/upsert', { inputs: [contact('A')] }, 'pat-wrong');
    expect(r).toMatchObject({ status: 401, body: { category: 'INVALID_AUTHENTICATION' } });
    expect(JSON.stringify(r.body)).not.toContain('pat-wrong');
  });

  it('upserts by the unique idProperty with 200 and new true, then false', async () => {
    const first = await upsert([contact('A-1', { email: 'a@x.test' }, '0')]);
    expect(first.status).toBe(200);
    expect(first.body.results).toMatchObject([{ new: true, objectWriteTraceId: '0', properties: { ai_external_id: 'A-1', email: 'a@x.test' } }]);
    const second = await upsert([contact('A-1', { firstname: 'Ann' })]);
    expect(second.status).toBe(200);
    expect((second.body.results as Results)[0]).toMatchObject({ id: (first.body.results as Results)[0]!.id, new: false });
    expect(fake.records('contacts')).toHaveLength(1);
    expect(fake.records('contacts')[0]!.properties).toMatchObject({ email: 'a@x.test', firstname: 'Ann' });
  });

  it('fails the whole upsert batch with 400 VALIDATION_ERROR on one unknown property', async () => {
    const r = await upsert([contact('A'), contact('B', { bogus: 'x' })]);
    expect(r).toMatchObject({ status: 400, body: { status: 'error', category: 'VALIDATION_ERROR' } });
    expect(r.body.message).toContain('Property values were not valid');
    expect(r.body.message).toContain('bogus');
    expect(typeof r.body.correlationId).toBe('string');
    expect(fake.records('contacts')).toHaveLength(0);
  });

  it('rejects duplicate ids in one upsert batch by default and can let the last one win', async () => {
    expect((await upsert([contact('A', { firstname: '1' }), contact('A', { firstname: '2' })])).body.message).toMatch(/Duplicate IDs found in batch input/);
    await open({ duplicateIdsInBatch: 'last-wins' });
    expect((await upsert([contact('A', { firstname: '1' }), contact('A', { firstname: '2' })])).status).toBe(200);
    expect(fake.records('contacts').map((r) => r.properties.firstname)).toEqual(['2']);
  });

  it('refuses an idProperty without unique values and more than 100 inputs', async () => {
    const r = await upsert([{ idProperty: 'email', id: 'a@x.test', properties: {} }]);
    expect(r).toMatchObject({ status: 400, body: { category: 'VALIDATION_ERROR' } });
    fake.defineProperty('contacts', 'email', { unique: true });
    expect((await upsert([{ idProperty: 'email', id: 'a@x.test', properties: {} }])).status).toBe(200);
    const many = Array.from({ length: 101 }, (_, i) => contact(`C-${i}`));
    expect((await upsert(many)).status).toBe(400);
  });

  it('creates notes with associations: 201, or 207 per input when traced, or 400 when untraced', async () => {
    const c = (await upsert([contact('A')])).body.results as Results;
    const contactId = c[0]!.id;
    const ok = await call('POST', '/crm/v3/objects/notes/batch/create', { inputs: [note(contactId, { hs_note_body: 'hi', hs_timestamp: '2026-01-01T00:00:00Z', crm_upsert_key: 'k1' }, '0')] });
    expect(ok.status).toBe(201);
    const partial = await call('POST', '/crm/v3/objects/notes/batch/create', {
      inputs: [note(contactId, { hs_note_body: 'no timestamp' }, '0'), note(contactId, { hs_timestamp: '1', hs_note_body: 'ok' }, '1')],
    });
    expect(partial.status).toBe(207);
    expect(partial.body).toMatchObject({ numErrors: 1, errors: [{ category: 'VALIDATION_ERROR', context: { objectWriteTraceId: ['0'] } }], results: [{ objectWriteTraceId: '1' }] });
    expect((partial.body.errors as { message: string }[])[0]!.message).toContain('hs_timestamp');
    const untraced = await call('POST', '/crm/v3/objects/notes/batch/create', { inputs: [note(contactId, { hs_note_body: 'x' }), note(contactId, { hs_timestamp: '1' })] });
    expect(untraced.status).toBe(400);
    expect(fake.records('notes')).toHaveLength(2);
    expect(fake.records('notes')[0]!.associations).toEqual({ contacts: [{ id: contactId, typeId: 202 }] });
    expect(fake.records('contacts')[0]!.associations).toMatchObject({ notes: [{ typeId: 201 }, { typeId: 201 }] });
  });

  it('reads a batch by idProperty with 207 for missing ids', async () => {
    await upsert([contact('A', { email: 'a@x.test' })]);
    const r = await call('POST', '/crm/v3/objects/contacts/batch/read', { idProperty: 'ai_external_id', inputs: [{ id: 'A' }, { id: 'Z' }], properties: ['email'] });
    expect(r.status).toBe(207);
    expect(r.body).toMatchObject({ results: [{ properties: { email: 'a@x.test' } }], errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['Z'] } }] });
    const one = await call('GET', '/crm/v3/objects/contacts/A?idProperty=ai_external_id&properties=email');
    expect(one).toMatchObject({ status: 200, body: { properties: { email: 'a@x.test' } } });
    expect((await call('GET', '/crm/v3/objects/contacts/999')).status).toBe(404);
  });

  it('shows records to search only after the index lag', async () => {
    let t = 1_000_000;
    await open({ searchLagMs: 30_000, now: () => t });
    await upsert([contact('A', { email: 'a@x.test' })]);
    const search = () => call('POST', '/crm/v3/objects/contacts/search', { filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: 'a@x.test' }] }] });
    expect((await search()).body).toMatchObject({ total: 0, results: [] });
    t += 30_000;
    expect((await search()).body).toMatchObject({ total: 1 });
  });

  it('limits search to 4 requests per second with the secondly-limit message', async () => {
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 5; i++) {
      last = await call('POST', '/crm/v3/objects/contacts/search', { filterGroups: [] });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect(last!.body).toMatchObject({ message: 'You have reached your secondly limit.', errorType: 'RATE_LIMIT' });
  });

  it('answers 429 TEN_SECONDLY_ROLLING with Retry-After and rate-limit headers past tenSecondLimit', async () => {
    await open({ tenSecondLimit: 2 });
    await upsert([contact('A')]);
    await upsert([contact('B')]);
    const r = await upsert([contact('C')]);
    expect(r).toMatchObject({ status: 429, body: { policyName: 'TEN_SECONDLY_ROLLING', message: 'You have reached your ten_secondly_rolling limit.' } });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.headers.get('x-hubspot-ratelimit-interval-milliseconds')).toBe('10000');
    expect(r.headers.get('x-hubspot-ratelimit-remaining')).toBe('0');
    expect(fake.records('contacts')).toHaveLength(2);
  });

  it('answers 429 DAILY once dailyLimit requests were served', async () => {
    await open({ dailyLimit: 1 });
    expect((await upsert([contact('A')])).status).toBe(200);
    const r = await upsert([contact('B')]);
    expect(r).toMatchObject({ status: 429, body: { policyName: 'DAILY', message: 'You have reached your daily limit.' } });
    expect(r.headers.get('x-hubspot-ratelimit-daily-remaining')).toBe('0');
  });

  it('reads associations in v4 batches, paging long lists and 207 for none', async () => {
    await open({ associationPageSize: 2 });
    const [a, b] = (await upsert([contact('A'), contact('B')])).body.results as Results;
    await call('POST', '/crm/v3/objects/notes/batch/create', { inputs: [1, 2, 3].map((n) => note(a!.id, { hs_timestamp: String(n) })) });
    const first = await call('POST', '/crm/v4/associations/contacts/notes/batch/read', { inputs: [{ id: a!.id }, { id: b!.id }] });
    expect(first.status).toBe(207);
    expect(first.body).toMatchObject({
      results: [{ from: { id: a!.id }, to: [{ associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 201 }] }, {}], paging: { next: { after: '2' } } }],
      errors: [{ subCategory: 'crm.associations.NO_ASSOCIATIONS_FOUND' }],
    });
    const rest = await call('POST', '/crm/v4/associations/contacts/notes/batch/read', { inputs: [{ id: a!.id, after: '2' }] });
    expect(rest.status).toBe(200);
    expect((rest.body.results as { to: unknown[] }[])[0]!.to).toHaveLength(1);
  });

  it('creates associations in a v4 batch with 201, as the v4 reference specifies', async () => {
    const [a] = (await upsert([contact('A')])).body.results as Results;
    const n = await call('POST', '/crm/v3/objects/notes', { properties: { hs_timestamp: '1' } });
    expect(n.status).toBe(201);
    const r = await call('POST', '/crm/v4/associations/notes/contacts/batch/create', {
      inputs: [{ from: { id: n.body.id }, to: { id: a!.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] }],
    });
    expect(r.status).toBe(201);
    expect(fake.records('notes')[0]!.associations).toEqual({ contacts: [{ id: a!.id, typeId: 202 }] });
  });

  it('serves the properties API so setup can be checked and created', async () => {
    const list = await call('GET', '/crm/v3/properties/contacts');
    expect(list.body.results).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'ai_external_id', hasUniqueValue: true })]));
    const def = { name: 'ext_id', label: 'Ext id', type: 'string', fieldType: 'text', groupName: 'contactinformation', hasUniqueValue: true };
    expect((await call('POST', '/crm/v3/properties/companies', def)).status).toBe(201);
    expect((await call('POST', '/crm/v3/properties/companies', def)).status).toBe(409);
    expect((await call('GET', '/crm/v3/properties/companies/ext_id')).body).toMatchObject({ hasUniqueValue: true });
    expect((await call('POST', '/crm/v3/properties/notes', { ...def, name: 'k' })).status).toBe(400);
  });

  it('counts requests by endpoint and injects faults on matching endpoints only', async () => {
    fake.failNext('server_error', { endpoint: 'batch/read' });
    expect((await upsert([contact('A')])).status).toBe(200);
    expect((await call('POST', '/crm/v3/objects/contacts/batch/read', { inputs: [], properties: [] })).status).toBe(503);
    expect(fake.count('batch/upsert')).toBe(1);
    expect(fake.counts()).toEqual({ 'POST /crm/v3/objects/contacts/batch/upsert': 1, 'POST /crm/v3/objects/contacts/batch/read': 1 });
  });

  it('fails a batch upsert whole on a unique-value conflict, naming the first, unless batchConflicts is per-input', async () => {
    fake.defineProperty('contacts', 'email', { unique: true });
    const taken = ((await upsert([contact('T', { email: 't@x.test' })])).body.results as Results)[0]!.id;
    const whole = await upsert([contact('A'), contact('B', { email: 't@x.test' })]);
    expect(whole).toMatchObject({ status: 409, body: { status: 'error', category: 'CONFLICT', message: `Contact already exists. Existing ID: ${taken}` } });
    expect(fake.records('contacts')).toHaveLength(1);
    await open({ batchConflicts: 'per-input' });
    fake.defineProperty('contacts', 'email', { unique: true });
    await upsert([contact('T', { email: 't@x.test' })]);
    expect((await upsert([contact('A'), contact('B', { email: 't@x.test' })])).status).toBe(207);
  });

  it('refuses writes to read-only and calculated properties, reports them in the properties API, and can remove a property', async () => {
    fake.defineProperty('contacts', 'ai_score', { calculated: true });
    fake.defineProperty('contacts', 'ai_locked', { readOnly: true });
    const refused = await upsert([contact('A', { ai_score: '3' })]);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('READ_ONLY_VALUE');
    const score = await call('GET', '/crm/v3/properties/contacts/ai_score');
    const locked = await call('GET', '/crm/v3/properties/contacts/ai_locked');
    expect(score.body).toMatchObject({ calculated: true, hasUniqueValue: false });
    expect(locked.body).toMatchObject({ modificationMetadata: { readOnlyValue: true } });
    fake.removeProperty('contacts', 'firstname');
    expect((await call('GET', '/crm/v3/properties/contacts/firstname')).status).toBe(404);
    expect((await upsert([contact('A', { firstname: 'Ann' })])).body.message).toContain('PROPERTY_DOESNT_EXIST');
  });

  it('answers a non-unique idProperty with HubSpot exact message', async () => {
    const r = await upsert([{ idProperty: 'email', id: 'a@x.test', properties: {} }]);
    expect(r).toMatchObject({ status: 400, body: { category: 'VALIDATION_ERROR', message: 'Unable to perform update/upsert by non-unique email property' } });
  });

  it('injects HubSpot shapes from its fault menu without committing, and a 2xx missing one result after committing', async () => {
    fake.failNext('conflict');
    expect((await upsert([contact('A')])).body).toMatchObject({ category: 'CONFLICT', message: 'Contact already exists. Existing ID: 37765128953' });
    fake.failNext('non_unique_id_property');
    expect((await upsert([contact('A')])).body.message).toBe('Unable to perform update/upsert by non-unique ai_external_id property');
    fake.failNext('unknown_property');
    const unknown = await upsert([contact('A', { lastname: 'x' }), contact('B', { lastname: 'y', email: 'b@x.test' })]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe(`Property values were not valid: ${JSON.stringify([{ isValid: false, message: 'Property "lastname" does not exist', error: 'PROPERTY_DOESNT_EXIST', name: 'lastname', localizedErrorMessage: 'Property "lastname" does not exist' }])}`);
    fake.failNext('secondly_limit');
    expect(await upsert([contact('A')])).toMatchObject({ status: 429, body: { policyName: 'SECONDLY', message: 'You have reached your secondly limit.' } });
    expect(fake.records('contacts')).toHaveLength(0);
    fake.failNext('missing_result');
    const partial = await upsert([contact('A'), contact('B')]);
    expect(partial.status).toBe(200);
    expect((partial.body.results as Results).map((r) => r.properties.ai_external_id)).toEqual(['A']);
    expect(fake.records('contacts')).toHaveLength(2);
    expect(fake.core.faultKinds()).toEqual(['rate_limit', 'server_error', 'reset', 'lost_response', 'missing_result', 'html_error', 'conflict', 'non_unique_id_property', 'unknown_property', 'secondly_limit']);
    expect(() => fake.failNext('nonsense' as 'conflict')).toThrow(/unknown fault "nonsense"/);
  });

  it('serves an injected html_error as a 502 HTML page with a JSON content type', async () => {
    fake.failNext('html_error');
    const res = await fetch(`${base}/crm/v3/objects/contacts/batch/upsert`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: '{"inputs":[]}' });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).toMatch(/^<!DOCTYPE html>/);
    expect(text.length).toBeGreaterThan(4000);
  });
});

describe('merges', () => {
  const seeded = (ext: string, props: Record<string, string> = {}) => fake.state.seed('contacts', { ai_external_id: ext, ...props });

  it('refuses a missing id (404 OBJECT_NOT_FOUND) and a record merged with itself (400 VALIDATION_ERROR), changing nothing', async () => {
    const a = seeded('a');
    expect(await call('POST', '/crm/v3/objects/contacts/merge', { primaryObjectId: a, objectIdToMerge: '999999' })).toMatchObject({ status: 404, body: { category: 'OBJECT_NOT_FOUND' } });
    expect(await call('POST', '/crm/v3/objects/contacts/merge', { primaryObjectId: a, objectIdToMerge: a })).toMatchObject({ status: 400, body: { category: 'VALIDATION_ERROR' } });
    expect(fake.records('contacts').map((c) => c.id)).toEqual([a]);
    expect(() => fake.merge('contacts', a, '999999')).toThrow(/cannot merge/);
  });

  it('chains: ids merged before keep reaching the record of the latest merge, whose hs_merged_object_ids lists them all', async () => {
    const [a, b, c] = [seeded('a', { firstname: 'A' }), seeded('b'), seeded('c')];
    const ab = fake.merge('contacts', a, b);
    const abc = fake.merge('contacts', c, ab);
    expect(fake.records('contacts').map((r) => [r.id, r.properties.ai_external_id, r.properties.firstname, r.properties.hs_merged_object_ids])).toEqual([
      [abc, 'c', 'A', `${c};${a};${b};${ab}`],
    ]);
    for (const old of [a, b, c, ab]) expect((await call('GET', `/crm/v3/objects/contacts/${old}`)).body).toMatchObject({ id: abc });
    // A batch update by an old id updates the merged record; by the lost unique value, nothing.
    const updated = await call('POST', '/crm/v3/objects/contacts/batch/update', { inputs: [{ id: a, properties: { lastname: 'Merged' }, objectWriteTraceId: '0' }, { idProperty: 'ai_external_id', id: 'a', properties: { lastname: 'Lost' }, objectWriteTraceId: '1' }] });
    expect(updated).toMatchObject({ status: 207, body: { results: [{ id: abc, objectWriteTraceId: '0' }], errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['a'], objectWriteTraceId: ['1'] } }] } });
    expect(fake.records('contacts')[0]!.properties.lastname).toBe('Merged');
  });
});
