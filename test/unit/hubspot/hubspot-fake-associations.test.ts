import { Client } from '@hubspot/api-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../../adapters/testing/index.js';
import { ASSOCIATION_TYPES, associationTypesBetween, checkAssociationSpec } from '../../../adapters/hubspot/fake/hubspot-fake-associations.js';

/** The association rules of fakeHubSpot, driven through the real @hubspot/api-client on loopback. */
const TOKEN = 'pat-na1-assoc-test';
let fake: FakeHubSpot;
let client: Client;
let close: () => Promise<void>;

interface Reply { status: number; body: Record<string, unknown> }
async function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await client.apiRequest({ method, path, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const spec = (associationTypeId: number, associationCategory = 'HUBSPOT_DEFINED') => ({ associationCategory, associationTypeId });
const link = (from: string, to: string, ...typeIds: number[]) => ({ from: { id: from }, to: { id: to }, types: typeIds.map((t) => spec(t)) });
const assocCreate = (from: string, to: string, inputs: unknown[]) => call('POST', `/crm/v4/associations/${from}/${to}/batch/create`, { inputs });

beforeEach(async () => {
  fake = fakeHubSpot({ token: TOKEN });
  const server = await fake.listen();
  close = server.close;
  client = new Client({ accessToken: TOKEN, basePath: server.basePath });
});
afterEach(() => close());

const seed = () => ({
  contact: fake.state.seed('contacts', { ai_external_id: 'c-1' }),
  company: fake.state.seed('companies', { ai_external_id: 'acme', name: 'Acme' }),
  otherCompany: fake.state.seed('companies', { ai_external_id: 'globex', name: 'Globex' }),
  deal: fake.state.seed('deals', { ai_external_id: 'd-1', dealname: 'Renewal' }),
  note: fake.state.seed('notes', { hs_timestamp: '2026-12-01T10:00:00Z' }),
  task: fake.state.seed('tasks', { hs_timestamp: '2026-12-01T10:00:00Z' }),
});

describe('fakeHubSpot association types (table)', () => {
  it.each([
    ['notes', 'contacts', 202], ['notes', 'companies', 190], ['notes', 'deals', 214],
    ['tasks', 'contacts', 204], ['tasks', 'companies', 192], ['tasks', 'deals', 216],
    ['contacts', 'companies', 279], ['contacts', 'companies', 1], ['companies', 'contacts', 280], ['companies', 'contacts', 2],
    ['deals', 'companies', 341], ['deals', 'companies', 5], ['companies', 'deals', 342], ['companies', 'deals', 6],
    ['deals', 'contacts', 3], ['contacts', 'deals', 4], ['contacts', 'notes', 201], ['deals', 'tasks', 215],
  ])('accepts %s -> %s type %i', (from, to, typeId) => {
    expect(checkAssociationSpec(from, to, spec(typeId))).toBeNull();
  });

  it.each([
    // deal->company is 341 (5 is primary); 279 is contact->company.
    ['deals', 'companies', 279, 'invalid from object type 0-3 for associations to be created. expected: 0-1'],
    ['notes', 'contacts', 204, 'invalid from object type 0-46 for associations to be created. expected: 0-27'],
    ['notes', 'contacts', 190, 'invalid to object type 0-1 for associations to be created. expected: 0-2'],
    ['contacts', 'companies', 341, 'invalid from object type 0-1 for associations to be created. expected: 0-3'],
  ])('refuses %s -> %s type %i: %s', (from, to, typeId, message) => {
    expect(checkAssociationSpec(from, to, spec(typeId))).toEqual({ message });
  });

  it.each([[99999, 'HUBSPOT_DEFINED'], [3, 'USER_DEFINED']])('refuses type %i %s no pair defines, with HubSpot\'s INVALID_ASSOCIATION_TYPE_ID body', (typeId, category) => {
    expect(checkAssociationSpec('contacts', 'companies', spec(typeId, category))).toEqual({
      message: 'One or more associations are invalid',
      context: { associationSpec: [`${category}=${typeId}`], INVALID_ASSOCIATION_TYPE_ID: [`${category}=${typeId} is not a valid association definition id`] },
    });
  });

  it('defines every type with its inverse', () => {
    for (const t of ASSOCIATION_TYPES) {
      expect(ASSOCIATION_TYPES.find((u) => u.from === t.to && u.to === t.from && u.typeId === t.inverse && u.inverse === t.typeId)).toBeDefined();
    }
  });
});

describe('fakeHubSpot v4 associations over @hubspot/api-client', () => {
  it('lists the labels of a pair as HubSpot does: unlabeled first with label null, then Primary', async () => {
    expect(await call('GET', '/crm/v4/associations/contacts/companies/labels')).toEqual({
      status: 200,
      body: { results: [{ category: 'HUBSPOT_DEFINED', typeId: 279, label: null }, { category: 'HUBSPOT_DEFINED', typeId: 1, label: 'Primary' }] },
    });
    const deals = await client.crm.associations.v4.schema.definitionsApi.getAll('deals', 'companies');
    expect(deals.results.map((r) => [r.typeId, r.label ?? null])).toEqual([[341, null], [5, 'Primary']]);
    expect((await call('GET', '/crm/v4/associations/0-46/0-1/labels')).body).toEqual({ results: [{ category: 'HUBSPOT_DEFINED', typeId: 202, label: null }] });
    expect(associationTypesBetween('notes', 'tasks')).toEqual([]);
  });

  it('answers a batch create 201 with the pair\'s object type ids and labels', async () => {
    const r = seed();
    const res = await assocCreate('deals', 'companies', [link(r.deal, r.company, 341), link(r.deal, r.otherCompany, 5)]);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'COMPLETE',
      results: [
        { fromObjectTypeId: '0-3', fromObjectId: Number(r.deal), toObjectTypeId: '0-2', toObjectId: Number(r.company), labels: [] },
        { fromObjectTypeId: '0-3', fromObjectId: Number(r.deal), toObjectTypeId: '0-2', toObjectId: Number(r.otherCompany), labels: ['Primary'] },
      ],
    });
    expect(res.body).not.toHaveProperty('errors');
    expect(fake.associations('deals', r.deal)).toEqual([
      { toObjectType: 'companies', toId: r.company, typeId: 341, label: null },
      { toObjectType: 'companies', toId: r.otherCompany, typeId: 341, label: null },
      { toObjectType: 'companies', toId: r.otherCompany, typeId: 5, label: 'Primary' },
    ]);
    expect(fake.associations('companies', r.otherCompany)).toEqual([
      { toObjectType: 'deals', toId: r.deal, typeId: 342, label: null },
      { toObjectType: 'deals', toId: r.deal, typeId: 6, label: 'Primary' },
    ]);
  });

  it('moves a contact\'s primary company instead of keeping two', async () => {
    const r = seed();
    await assocCreate('contacts', 'companies', [link(r.contact, r.company, 1)]);
    await assocCreate('companies', 'contacts', [link(r.otherCompany, r.contact, 2)]);
    expect(fake.associations('contacts', r.contact)).toEqual([
      { toObjectType: 'companies', toId: r.company, typeId: 279, label: null },
      { toObjectType: 'companies', toId: r.otherCompany, typeId: 279, label: null },
      { toObjectType: 'companies', toId: r.otherCompany, typeId: 1, label: 'Primary' },
    ]);
    expect(fake.associations('companies', r.company)).toEqual([{ toObjectType: 'contacts', toId: r.contact, typeId: 280, label: null }]);
  });

  it('refuses a whole batch with a type id of another pair, committing nothing', async () => {
    const r = seed();
    const res = await assocCreate('deals', 'companies', [link(r.deal, r.company, 341), link(r.deal, r.otherCompany, 279)]);
    expect(res).toMatchObject({ status: 400, body: { status: 'error', category: 'VALIDATION_ERROR', message: 'invalid from object type 0-3 for associations to be created. expected: 0-1' } });
    expect(fake.associations('deals', r.deal)).toEqual([]);
  });

  it('refuses a whole batch with an undefined type id with HubSpot\'s INVALID_ASSOCIATION_TYPE_ID body', async () => {
    const r = seed();
    const res = await assocCreate('contacts', 'companies', [link(r.contact, r.company, 12345)]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: 'error', message: 'One or more associations are invalid', correlationId: expect.any(String), category: 'VALIDATION_ERROR',
      context: { associationSpec: ['HUBSPOT_DEFINED=12345'], INVALID_ASSOCIATION_TYPE_ID: ['HUBSPOT_DEFINED=12345 is not a valid association definition id'] },
    });
  });

  it('refuses a batch that repeats an association, committing nothing', async () => {
    const r = seed();
    const res = await assocCreate('notes', 'contacts', [link(r.note, r.contact, 202), link(r.note, r.contact, 202)]);
    expect(res).toMatchObject({ status: 400, body: { category: 'VALIDATION_ERROR', message: `Duplicate associations found in batch input: [${r.note}->${r.contact}:HUBSPOT_DEFINED=202]. Associations must be unique` } });
    expect(fake.associations('notes', r.note)).toEqual([]);
  });

  it('accepts the same pair under two types in one batch (unlabeled and primary)', async () => {
    const r = seed();
    const res = await assocCreate('contacts', 'companies', [link(r.contact, r.company, 279), link(r.contact, r.company, 1)]);
    expect(res.status).toBe(201);
    expect(fake.associations('contacts', r.contact).map((a) => a.typeId)).toEqual([279, 1]);
  });

  it('answers an association that already exists as created and leaves it as it is', async () => {
    const r = seed();
    expect((await assocCreate('notes', 'deals', [link(r.note, r.deal, 214)])).status).toBe(201);
    const again = await assocCreate('notes', 'deals', [link(r.note, r.deal, 214)]);
    expect(again).toMatchObject({ status: 201, body: { results: [{ fromObjectId: Number(r.note), toObjectId: Number(r.deal) }] } });
    expect(fake.associations('notes', r.note)).toEqual([{ toObjectType: 'deals', toId: r.deal, typeId: 214, label: null }]);
  });

  it('fails the input naming a record that does not exist with HubSpot\'s INVALID_OBJECT_IDS body, in a 207', async () => {
    const r = seed();
    const res = await assocCreate('tasks', 'contacts', [link(r.task, r.contact, 204), link(r.task, '424242', 204)]);
    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({
      numErrors: 1,
      results: [{ fromObjectId: Number(r.task), toObjectId: Number(r.contact) }],
      errors: [{ status: 'error', category: 'VALIDATION_ERROR', message: 'One or more associations are invalid', context: { INVALID_OBJECT_IDS: ['CONTACT=424242 is not valid'], objectId: ['424242'], objectType: ['CONTACT'] } }],
    });
  });

  it('reads associations back with their types and labels in a v4 batch read', async () => {
    const r = seed();
    await assocCreate('contacts', 'companies', [link(r.contact, r.company, 1)]);
    const page = await client.crm.associations.v4.batchApi.getPage('contacts', 'companies', { inputs: [{ id: r.contact }] });
    expect(page.results[0]!.to).toEqual([
      expect.objectContaining({ toObjectId: Number(r.company), associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 279, label: null }, { category: 'HUBSPOT_DEFINED', typeId: 1, label: 'Primary' }] }),
    ]);
  });

  it('answers the SDK\'s v4 batchApi.create with the 201 it maps: the results come back', async () => {
    const r = seed();
    const res = await client.crm.associations.v4.batchApi.create('deals', 'contacts', { inputs: [{ _from: { id: r.deal }, to: { id: r.contact }, types: [{ associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 3 }] }] });
    expect(res.results.map((x) => [String(x.fromObjectId), String(x.toObjectId)])).toEqual([[r.deal, r.contact]]);
    expect(fake.associations('contacts', r.contact)).toEqual([{ toObjectType: 'deals', toId: r.deal, typeId: 4, label: null }]);
  });

  it('answers 200 with associationCreateStatus: 200, on which the SDK\'s batchApi.create throws with the associations committed', async () => {
    await close();
    fake = fakeHubSpot({ token: TOKEN, associationCreateStatus: 200 });
    const server = await fake.listen();
    close = server.close;
    client = new Client({ accessToken: TOKEN, basePath: server.basePath });
    const r = seed();
    const call = client.crm.associations.v4.batchApi.create('deals', 'contacts', { inputs: [{ _from: { id: r.deal }, to: { id: r.contact }, types: [{ associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 3 }] }] });
    await expect(call).rejects.toMatchObject({ code: 200 });
    expect(fake.associations('contacts', r.contact)).toEqual([{ toObjectType: 'deals', toId: r.deal, typeId: 4, label: null }]);
    // Errors still make it a 207.
    expect((await assocCreate('tasks', 'contacts', [link(r.task, '424242', 204)])).status).toBe(207);
  });
});

describe('fakeHubSpot inline associations on batch/create of notes and tasks', () => {
  const create = (type: string, inputs: unknown[]) => call('POST', `/crm/v3/objects/${type}/batch/create`, { inputs });
  const activity = (toId: string, typeId: number, extra: Record<string, unknown> = {}) => ({
    properties: { hs_timestamp: '2026-12-01T10:00:00Z', crm_upsert_key: `k-${toId}-${typeId}` },
    associations: [{ to: { id: toId }, types: [spec(typeId)] }],
    ...extra,
  });

  it('creates a note on a contact, a company and a deal at once', async () => {
    const r = seed();
    const res = await create('notes', [{
      properties: { hs_timestamp: '2026-12-01T10:00:00Z' },
      associations: [{ to: { id: r.contact }, types: [spec(202)] }, { to: { id: r.company }, types: [spec(190)] }, { to: { id: r.deal }, types: [spec(214)] }],
    }]);
    expect(res.status).toBe(201);
    const id = (res.body.results as { id: string }[])[0]!.id;
    expect(fake.associations('notes', id).map((a) => [a.toObjectType, a.typeId])).toEqual([['contacts', 202], ['companies', 190], ['deals', 214]]);
    expect(fake.associations('deals', r.deal)).toEqual([{ toObjectType: 'notes', toId: id, typeId: 213, label: null }]);
  });

  it.each([
    ['notes', 204, 'contact', 'invalid from object type 0-46 for associations to be created. expected: 0-27'],
    ['tasks', 202, 'contact', 'invalid from object type 0-27 for associations to be created. expected: 0-46'],
    ['tasks', 341, 'company', 'invalid from object type 0-27 for associations to be created. expected: 0-3'],
  ] as const)('refuses a %s create with type %i to a %s: %s', async (type, typeId, target, message) => {
    const r = seed();
    const res = await create(type, [activity(target === 'contact' ? r.contact : r.company, typeId)]);
    expect(res).toMatchObject({ status: 400, body: { status: 'error', category: 'VALIDATION_ERROR', message } });
    expect(fake.records(type)).toHaveLength(1);
  });

  it('refuses a note whose target id is not of the type id\'s object, with the INVALID_OBJECT_IDS body', async () => {
    const r = seed();
    const res = await create('notes', [activity(r.company, 202)]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: 'One or more associations are invalid', context: { INVALID_OBJECT_IDS: [`CONTACT=${r.company} is not valid`] } });
  });

  it('fails only the traced input with a bad association in a 207', async () => {
    const r = seed();
    const res = await create('tasks', [activity(r.contact, 204, { objectWriteTraceId: 't1' }), activity(r.contact, 202, { objectWriteTraceId: 't2' })]);
    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({
      results: [{ objectWriteTraceId: 't1' }],
      errors: [{ category: 'VALIDATION_ERROR', message: 'invalid from object type 0-27 for associations to be created. expected: 0-46', context: { objectWriteTraceId: ['t2'] } }],
    });
  });

  it('names the primary and unlabeled associations as v3 reads do', async () => {
    const r = seed();
    await assocCreate('deals', 'companies', [link(r.deal, r.company, 5)]);
    const deal = await client.crm.objects.basicApi.getById('deals', r.deal, undefined, undefined, ['companies']);
    expect(deal.associations?.companies?.results).toEqual([{ id: r.company, type: 'deal_to_company_unlabeled' }, { id: r.company, type: 'deal_to_company' }]);
  });
});

describe('fakeHubSpot sales objects', () => {
  it.each(['contacts', 'companies', 'deals'])('upserts %s by the unique ai_external_id', async (type) => {
    const input = { idProperty: 'ai_external_id', id: `${type}-1`, properties: {} };
    const first = await client.crm.objects.batchApi.upsert(type, { inputs: [input] });
    const second = await client.crm.objects.batchApi.upsert(type, { inputs: [input] });
    expect(second.results[0]!.id).toBe(first.results[0]!.id);
    expect(fake.records(type)).toHaveLength(1);
  });
});
