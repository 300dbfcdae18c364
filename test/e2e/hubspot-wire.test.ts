import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { objects, TOKEN } from './hubspot-helpers.js';

const ORIGIN = 'https://api.hubapi.com';
const at = '2026-11-29T10:00:00.000Z';
const envelope = (results: unknown[]) => ({ status: 'COMPLETE', results, requestedAt: at, startedAt: at, completedAt: at });
const adapter = () => hubspotAdapter({ accessToken: TOKEN, objects, rateBudget: unlimitedRateBudget });

/** Intercept one POST and keep its body and headers. */
function capture(path: string, status: number, reply: unknown) {
  const seen: { body?: unknown; headers?: Record<string, unknown> } = {};
  nock(ORIGIN)
    .post(path)
    .reply(status, function (_uri, body) {
      seen.body = body;
      seen.headers = this.req.headers;
      return reply;
    });
  return seen;
}

afterEach(() => nock.cleanAll());

describe('hubspotAdapter wire shape (nock)', () => {
  it('sends idProperty inside each input, stringified values and the input index as objectWriteTraceId', async () => {
    const seen = capture('/crm/v3/objects/contacts/batch/upsert', 200, envelope([
      { id: '2', new: false, properties: { ai_external_id: 'B' }, objectWriteTraceId: '1', createdAt: at, updatedAt: at },
      { id: '1', new: true, properties: { ai_external_id: 'A' }, objectWriteTraceId: '0', createdAt: at, updatedAt: at },
    ]));
    const results = await adapter().upsertRecords('contact', [
      { key: 'k1', object: 'contact', externalId: 'A', fields: { email: 'a@x.test', firstname: 7, lastname: null } },
      { key: 'k2', object: 'contact', externalId: 'B', fields: { lifecyclestage: 'lead', firstname: false } },
    ]);
    expect(seen.body).toEqual({
      inputs: [
        { idProperty: 'ai_external_id', id: 'A', properties: { email: 'a@x.test', firstname: '7', lastname: '' }, objectWriteTraceId: '0' },
        { idProperty: 'ai_external_id', id: 'B', properties: { lifecyclestage: 'lead', firstname: 'false' }, objectWriteTraceId: '1' },
      ],
    });
    expect(seen.headers?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(results).toEqual([{ ok: true, recordId: '1', created: true }, { ok: true, recordId: '2', created: false }]);
  });

  it('falls back to the idProperty value when results carry no trace id, and retries inputs with no result as possibly written', async () => {
    capture('/crm/v3/objects/contacts/batch/upsert', 200, envelope([{ id: '9', new: true, properties: { ai_external_id: 'B' }, createdAt: at, updatedAt: at }]));
    const results = await adapter().upsertRecords('contact', [
      { key: 'k1', object: 'contact', externalId: 'A', fields: {} },
      { key: 'k2', object: 'contact', externalId: 'B', fields: {} },
    ]);
    expect(results[1]).toEqual({ ok: true, recordId: '9', created: true });
    expect(results[0]!.ok).toBe(false);
    expect(!results[0]!.ok && results[0]!.error).toMatchObject({ kind: 'transient', ambiguous: true, vendorCode: 'NO_RESULT' });
    expect(!results[0]!.ok && results[0]!.error.message).toContain('HubSpot answered without a result for this input; it may have been written');
  });

  it('treats a 2xx with empty results as possibly written for every input', async () => {
    capture('/crm/v3/objects/contacts/batch/upsert', 200, envelope([]));
    const results = await adapter().upsertRecords('contact', [{ key: 'k1', object: 'contact', externalId: 'A', fields: {} }]);
    expect(results).toMatchObject([{ ok: false, error: { kind: 'transient', ambiguous: true, vendorCode: 'NO_RESULT' } }]);
  });

  it('resolves parents in one batch read by idProperty, then creates with typed associations and the key', async () => {
    const read = capture('/crm/v3/objects/contacts/batch/read', 207, {
      ...envelope([{ id: '101', properties: { ai_external_id: 'A' }, createdAt: at, updatedAt: at }]),
      numErrors: 1, errors: [{ status: 'error', category: 'OBJECT_NOT_FOUND', message: 'not found', context: { ids: ['Z'] } }],
    });
    const create = capture('/crm/v3/objects/tasks/batch/create', 201, envelope([{ id: '501', properties: { crm_upsert_key: 't1' }, objectWriteTraceId: '0', createdAt: at, updatedAt: at }]));
    const results = await adapter().createActivities('task', [
      { key: 't1', object: 'task', parent: { object: 'contact', externalId: 'A' }, fields: { hs_task_subject: 'Call back', hs_timestamp: 1764410400000 } },
      { key: 't2', object: 'task', parent: { object: 'contact', externalId: 'Z' }, fields: { hs_task_subject: 'x', hs_timestamp: 1 } },
    ]);
    expect(read.body).toEqual({ idProperty: 'ai_external_id', inputs: [{ id: 'A' }, { id: 'Z' }], properties: ['ai_external_id'], propertiesWithHistory: [] });
    expect(create.body).toEqual({
      inputs: [{
        properties: { hs_task_subject: 'Call back', hs_timestamp: '1764410400000', crm_upsert_key: 't1' },
        associations: [{ to: { id: '101' }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 204 }] }],
        objectWriteTraceId: '0',
      }],
    });
    expect(results[0]).toEqual({ ok: true, recordId: '501', created: true });
    expect(!results[1]!.ok && results[1]!.error.message).toContain('parent contact with ai_external_id=Z does not exist in HubSpot');
  });

  it('finds activities through the v4 association batch read and a batch read of the key property', async () => {
    capture('/crm/v3/objects/contacts/batch/read', 200, envelope([{ id: '101', properties: { ai_external_id: 'A' }, createdAt: at, updatedAt: at }]));
    const assoc = capture('/crm/v4/associations/contacts/notes/batch/read', 200, envelope([
      { from: { id: '101' }, to: [{ toObjectId: 701, associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 201, label: null }] }, { toObjectId: 702, associationTypes: [] }] },
    ]));
    const notes = capture('/crm/v3/objects/notes/batch/read', 200, envelope([
      { id: '701', properties: { crm_upsert_key: 'other' }, createdAt: at, updatedAt: at },
      { id: '702', properties: { crm_upsert_key: 'n1' }, createdAt: at, updatedAt: at },
    ]));
    const found = await adapter().findActivities('note', [{ key: 'n1', object: 'note', parent: { object: 'contact', externalId: 'A' }, fields: {} }]);
    expect(assoc.body).toEqual({ inputs: [{ id: '101' }] });
    expect(notes.body).toEqual({ inputs: [{ id: '701' }, { id: '702' }], properties: ['crm_upsert_key'], propertiesWithHistory: [] });
    expect(found).toEqual(new Map([['n1', '702']]));
  });

  it('classifies a response without a Content-Type as transient and ambiguous, keeping its status', async () => {
    nock(ORIGIN).post('/crm/v3/objects/contacts/batch/upsert').reply(200, 'OK');
    const a = adapter();
    const err = await a.upsertRecords('contact', [{ key: 'k1', object: 'contact', externalId: 'A', fields: {} }]).catch((e: unknown) => e);
    expect(a.classifyError(err)).toMatchObject({ kind: 'transient', ambiguous: true, vendorCode: 'NO_CONTENT_TYPE', status: 200 });
  });

  it('maps a single unplaced 207 error to the single input left without a result', async () => {
    capture('/crm/v3/objects/contacts/batch/upsert', 207, {
      ...envelope([{ id: '1', new: true, properties: { ai_external_id: 'A' }, objectWriteTraceId: '0', createdAt: at, updatedAt: at }]),
      numErrors: 1, errors: [{ status: 'error', category: 'VALIDATION_ERROR', message: 'Property values were not valid', context: {} }],
    });
    const results = await adapter().upsertRecords('contact', [
      { key: 'k1', object: 'contact', externalId: 'A', fields: {} },
      { key: 'k2', object: 'contact', externalId: 'B', fields: {} },
    ]);
    expect(results[0]).toMatchObject({ ok: true, recordId: '1' });
    expect(results[1]).toMatchObject({ ok: false, error: { kind: 'permanent', vendorCode: 'VALIDATION_ERROR' } });
  });

  it('paces requests with the rateLimit option', async () => {
    nock(ORIGIN).post('/crm/v3/objects/contacts/batch/upsert').times(3).reply(200, envelope([{ id: '1', new: true, properties: { ai_external_id: 'A' }, objectWriteTraceId: '0', createdAt: at, updatedAt: at }]));
    const a = hubspotAdapter({ accessToken: TOKEN, objects, rateLimit: { points: 2, durationMs: 400 } });
    const started = Date.now();
    for (let i = 0; i < 3; i++) await a.upsertRecords('contact', [{ key: 'k1', object: 'contact', externalId: 'A', fields: {} }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(a.apiCalls()).toBe(3);
  });
});
