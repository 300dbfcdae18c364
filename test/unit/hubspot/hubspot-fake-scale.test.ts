import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeHubSpotState, fakeHubSpotFromState, type FakeHubSpot } from '../../../adapters/hubspot/fake/hubspot-fake.js';

const N = 50_000;
let clock = 1_000_000;
let fake: FakeHubSpot;
let base = '';
let stop: () => Promise<void> = async () => undefined;
const ids: string[] = [];
const noteIds: string[] = [];

async function call(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer pat-test' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
type Results = { id: string; new?: boolean; properties: Record<string, string | null> }[];

beforeAll(async () => {
  const state = new FakeHubSpotState({ now: () => clock, searchLagMs: 1_000, batchConflicts: 'per-input' });
  state.defineProperty('contacts', 'customer_number', { unique: true });
  for (let i = 0; i < N; i++) ids.push(state.seed('contacts', { ai_external_id: `c-${i}`, customer_number: `n-${i}`, email: `c${i}@x.test` }));
  for (let i = 0; i < N; i++) noteIds.push(state.seed('notes', { crm_upsert_key: `k-${i}`, hs_timestamp: '2026-11-29T10:00:00Z' }));
  fake = fakeHubSpotFromState(state);
  const front = await fake.open('loopback');
  base = front.url;
  stop = front.stop;
});
afterAll(() => stop());

describe('fakeHubSpot seeded with 50,000 records', () => {
  it('reads records by a unique idProperty through the index', async () => {
    const r = await call('/crm/v3/objects/contacts/batch/read', { idProperty: 'ai_external_id', inputs: [{ id: 'c-31337' }, { id: 'c-0' }, { id: 'nope' }], properties: ['ai_external_id'] });
    expect(r.status).toBe(207);
    expect((r.body.results as Results).map((x) => [x.id, x.properties.ai_external_id])).toEqual([[ids[31337], 'c-31337'], [ids[0], 'c-0']]);
  });

  it('updates a seeded record in place and keeps the order of records()', async () => {
    const r = await call('/crm/v3/objects/contacts/batch/upsert', { inputs: [{ idProperty: 'ai_external_id', id: 'c-25000', properties: { firstname: 'Mid' } }] });
    expect((r.body.results as Results)[0]).toMatchObject({ id: ids[25000], new: false });
    const records = fake.records('contacts');
    expect(records).toHaveLength(N);
    expect([records[0]!.id, records[25000]!.id, records[N - 1]!.id]).toEqual([ids[0], ids[25000], ids[N - 1]]);
    expect(records[25000]!.properties.firstname).toBe('Mid');
  });

  it('still refuses a value another record holds in a unique property, naming that record', async () => {
    const r = await call('/crm/v3/objects/contacts/batch/upsert', { inputs: [{ idProperty: 'ai_external_id', id: 'fresh-1', properties: { customer_number: 'n-4242' } }, { idProperty: 'ai_external_id', id: 'fresh-2', properties: { customer_number: 'n-new' } }] });
    expect(r.status).toBe(207);
    expect((r.body.errors as { message: string }[])[0]!.message).toBe(`Contact already exists. Existing ID: ${ids[4242]}`);
    expect((r.body.results as Results).map((x) => x.properties.ai_external_id)).toEqual(['fresh-2']);
    // The index follows writes: the new holder of n-new is found too.
    const again = await call('/crm/v3/objects/contacts/batch/upsert', { inputs: [{ idProperty: 'ai_external_id', id: 'fresh-3', properties: { customer_number: 'n-new' } }] });
    expect((again.body.errors as { message: string }[])[0]!.message).toBe(`Contact already exists. Existing ID: ${(r.body.results as Results)[0]!.id}`);
  });

  it('finds a note by its key property, only once the search index has caught up', async () => {
    const search = () => call('/crm/v3/objects/notes/search', { filterGroups: [{ filters: [{ propertyName: 'crm_upsert_key', operator: 'EQ', value: 'k-777' }] }], properties: ['crm_upsert_key'] });
    clock += 500;
    expect((await search()).body.total).toBe(0);
    clock += 1_000;
    const r = await search();
    expect(r.body).toMatchObject({ total: 1, results: [{ properties: { crm_upsert_key: 'k-777' } }] });
  });

  it('pages a search on a value every record shares in the order of the records', async () => {
    const r = await call('/crm/v3/objects/notes/search', { filterGroups: [{ filters: [{ propertyName: 'hs_timestamp', operator: 'EQ', value: '2026-11-29T10:00:00Z' }] }], limit: 3, after: '49998' });
    expect(r.body.total).toBe(N);
    expect((r.body.results as Results).map((x) => x.id)).toEqual(noteIds.slice(49998));
  });
});
