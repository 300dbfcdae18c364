/**
 * hubspotAdapter's links, called directly (no engine) with the real @hubspot/api-client against
 * fakeHubSpot over loopback: what each failure of the association call does to the writes, what a
 * retry of the same batch sends again, activity links, and check-setup's association types.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../../adapters/hubspot/index.js';
import { checkHubSpotSetup } from '../../../adapters/hubspot/hubspot-setup.js';
import type { HubSpotConfig } from '../../../adapters/hubspot/hubspot-config.js';
import { parentMemoKey, type ActivityWrite, type BatchContext, type RecordWrite } from '../../../src/adapter.js';
import { CrmError } from '../../../src/errors.js';
import { unlimitedRateBudget } from '../../../src/rate-budget.js';
import { fakeHubSpot, type FakeHubSpot, type FakeHubSpotOptions } from '../../../adapters/testing/index.js';
import { errorBody } from '../../../adapters/hubspot/fake/hubspot-fake-crm.js';

const TOKEN = 'pat-na1-unit-links-7c2e';
const objects: HubSpotAdapterOptions['objects'] = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  // A second logical object on the same HubSpot object: two links of one contact land in one pair.
  partner: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'], links: { company: 279, partner: 279 } },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202, company: 190, deal: 214 } },
};

const ref = (object: string, externalId: string) => ({ object, externalId });
const contact = (id: string, ...links: { object: string; externalId: string }[]): RecordWrite => ({
  key: `k-${id}`, object: 'contact', externalId: id, fields: { email: `${id}@x.test` }, ...(links.length > 0 ? { links } : {}),
});
const note = (key: string, parent: string, ...links: { object: string; externalId: string }[]): ActivityWrite => ({
  key, object: 'note', parent: ref('contact', parent), fields: { hs_note_body: key, hs_timestamp: '2026-12-05T10:00:00Z' }, links,
});
const context = (): BatchContext => ({ memo: new Map(), absent: new Set() });

describe('hubspotAdapter links', () => {
  let fake: FakeHubSpot;
  let stop: () => Promise<void>;
  afterEach(() => stop?.());

  async function setup(fakeOptions: FakeHubSpotOptions = {}) {
    fake = fakeHubSpot({ token: TOKEN, ...fakeOptions });
    const server = await fake.listen();
    stop = server.close;
    return { adapter: hubspotAdapter({ accessToken: TOKEN, basePath: server.basePath, objects, rateBudget: unlimitedRateBudget }), basePath: server.basePath };
  }
  const companies = (...ids: string[]) => ids.map((id) => fake.state.seed('companies', { ai_external_id: id, name: id }));
  const linkedTo = (contactExternalId: string) => {
    const c = fake.records('contacts').find((r) => r.properties.ai_external_id === contactExternalId)!;
    return fake.associations('contacts', c.id).map((a) => `${a.toObjectType}:${a.toId}:${a.typeId}`).sort();
  };

  it('refuses an injected client without apiRequest when records have links', () => {
    const client = { crm: { objects: { batchApi: {} }, associations: { v4: { batchApi: {} } } } } as unknown as HubSpotAdapterOptions['client'];
    expect(() => hubspotAdapter({ client, objects })).toThrow(/injected client has no apiRequest, which record links need/);
    const unlinked = { company: objects.company!, note: { ...objects.note!, parents: { company: 190 } } } as HubSpotAdapterOptions['objects'];
    expect(() => hubspotAdapter({ client, objects: unlinked })).not.toThrow();
  });

  // 201 is the v4 answer as specified; 200 is what HubSpot's v3 association create answers since
  // August 2025, and the SDK's batchApi.create throws on it: the adapter reads either as the batch.
  it.each([201, 200] as const)('reads a %i answer as the batch it is: one call, both writes ok', async (status) => {
    const { adapter } = await setup({ associationCreateStatus: status });
    const [acme] = companies('acme');
    const results = await adapter.upsertRecords('contact', [contact('ann', ref('company', 'acme')), contact('bob', ref('company', 'acme'))], context());
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    expect(fake.core.log.filter((e) => e.endpoint.includes('associations')).map((e) => e.status)).toEqual([status]);
    expect(linkedTo('ann')).toEqual([`companies:${acme}:279`]);
    expect(linkedTo('bob')).toEqual([`companies:${acme}:279`]);
  });

  it('reads a linked company again when HubSpot says the id the memo held is gone: LINK_NOT_FOUND without a successor, its neighbour linked', async () => {
    const { adapter } = await setup();
    const [acme] = companies('acme');
    const ctx = context();
    // An id remembered from earlier whose record was deleted since.
    ctx.memo.set(parentMemoKey('partner', 'gone'), '999999');
    const results = await adapter.upsertRecords('contact', [contact('ann', ref('partner', 'gone')), contact('bob', ref('company', 'acme'))], ctx);
    expect(results[0]).toMatchObject({ ok: false, error: { vendorCode: 'LINK_NOT_FOUND' } });
    expect((results[0] as { error: CrmError }).error.message).toContain('link partner "gone" does not exist');
    expect(results[1]).toMatchObject({ ok: true, created: true });
    expect(linkedTo('bob')).toEqual([`companies:${acme}:279`]);
    expect(fake.records('contacts')).toHaveLength(2);
    // The upsert, the read of acme, the refused association, then one read of the partner by its
    // external id (207: not found), and nothing more to send.
    expect(fake.core.log.map((e) => [e.endpoint, e.status])).toEqual([
      ['POST /crm/v3/objects/contacts/batch/upsert', 200], ['POST /crm/v3/objects/companies/batch/read', 200],
      ['POST /crm/v4/associations/contacts/companies/batch/create', 207], ['POST /crm/v3/objects/companies/batch/read', 207],
    ]);
    expect(ctx.memo.has(parentMemoKey('partner', 'gone'))).toBe(false);
    expect(ctx.absent!.has(parentMemoKey('partner', 'gone'))).toBe(true);
  });

  it('links to the record that holds the external id now when the memo held a deleted one', async () => {
    const { adapter } = await setup();
    const [old] = companies('acme');
    const ctx = context();
    ctx.memo.set(parentMemoKey('company', 'acme'), old!);
    expect(fake.delete('companies', old!)).toBe(true);
    const [successor] = companies('acme');
    const results = await adapter.upsertRecords('contact', [contact('ann', ref('company', 'acme'))], ctx);
    expect(results[0]).toMatchObject({ ok: true, created: true });
    expect(linkedTo('ann')).toEqual([`companies:${successor}:279`]);
    expect(ctx.memo.get(parentMemoKey('company', 'acme'))).toBe(successor);
    expect(fake.count('associations')).toBe(2);
    expect(fake.count('companies/batch/read')).toBe(1);
  });

  it('sends the association call again when HubSpot refuses it whole over a gone id: the neighbour is linked too', async () => {
    const { adapter } = await setup();
    const [old, beta] = companies('acme', 'beta');
    const ctx = context();
    ctx.memo.set(parentMemoKey('company', 'acme'), old!);
    ctx.memo.set(parentMemoKey('company', 'beta'), beta!);
    expect(fake.delete('companies', old!)).toBe(true);
    const [successor] = companies('acme');
    // HubSpot's whole-request answer for an association to a record that does not exist (hubspot-api-nodejs#646).
    const handle = fake.state.handle.bind(fake.state);
    let refuse = true;
    fake.state.handle = (req) => {
      if (!refuse || !req.path.endsWith('/associations/contacts/companies/batch/create')) return handle(req);
      refuse = false;
      return errorBody(400, 'VALIDATION_ERROR', 'One or more associations are invalid', { context: { INVALID_OBJECT_IDS: [`COMPANY=${old!} is not valid`], objectId: [old!], objectType: ['COMPANY'] } });
    };
    const results = await adapter.upsertRecords('contact', [contact('ann', ref('company', 'acme')), contact('bob', ref('company', 'beta'))], ctx);
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    expect(linkedTo('ann')).toEqual([`companies:${successor}:279`]);
    expect(linkedTo('bob')).toEqual([`companies:${beta}:279`]);
    expect(fake.core.log.map((e) => [e.endpoint, e.status])).toEqual([
      ['POST /crm/v3/objects/contacts/batch/upsert', 200], ['POST /crm/v4/associations/contacts/companies/batch/create', 400],
      ['POST /crm/v3/objects/companies/batch/read', 200], ['POST /crm/v4/associations/contacts/companies/batch/create', 201],
    ]);
  });

  it('drops a note parent\'s id HubSpot says is gone from the memo, for the engine to send the note again; nothing is created', async () => {
    const { adapter } = await setup();
    const ctx = context();
    ctx.memo.set(parentMemoKey('contact', 'ann'), '424242');
    const [result] = await adapter.createActivities('note', [note('n-1', 'ann')], ctx);
    expect(result).toMatchObject({ ok: false, error: { kind: 'permanent' } });
    expect(ctx.memo.has(parentMemoKey('contact', 'ann'))).toBe(false);
    expect(fake.records('notes')).toHaveLength(0);
  });

  it.each([
    ['rate limited', 'rate_limit', 'rate_limited'],
    ['reset', 'reset', 'transient'],
  ] as const)('fails the writes of an association call %s as retryable; a retry of the batch resends only that edge, not the upsert', async (_label, fault, kind) => {
    const { adapter } = await setup();
    const [acme] = companies('acme');
    const ctx = context();
    fake.failNext(fault, { endpoint: 'associations' });
    const first = await adapter.upsertRecords('contact', [contact('ann', ref('company', 'acme'))], ctx);
    expect(first[0]).toMatchObject({ ok: false, error: { kind } });
    expect((first[0] as { error: CrmError }).error.retryable).toBe(true);
    expect(fake.records('contacts')).toHaveLength(1);

    const again = await adapter.upsertRecords('contact', [contact('ann', ref('company', 'acme'))], ctx);
    expect(again[0]).toMatchObject({ ok: true, created: true });
    expect(fake.count('contacts/batch/upsert')).toBe(1);
    expect(fake.count('companies/batch/read')).toBe(1);
    expect(fake.count('associations/contacts/companies/batch/create')).toBe(2);
    expect(linkedTo('ann')).toEqual([`companies:${acme}:279`]);
  });

  it('throws a spent daily quota on the association call: it stops the batch', async () => {
    const { adapter } = await setup({ dailyLimit: 2 });
    companies('acme');
    const err = await adapter.upsertRecords('contact', [contact('ann', ref('company', 'acme'))], context()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmError);
    expect(err).toMatchObject({ kind: 'quota', vendorCode: 'DAILY' });
    expect(fake.count('associations')).toBe(1);
  });

  it('fails a write whose link does not exist with LINK_NOT_FOUND and still writes its other link', async () => {
    const { adapter } = await setup();
    const [acme] = companies('acme');
    const results = await adapter.upsertRecords('contact', [contact('ann', ref('partner', 'nope'), ref('company', 'acme'))], context());
    expect(results[0]).toMatchObject({ ok: false, error: { kind: 'permanent', vendorCode: 'LINK_NOT_FOUND', retryable: false } });
    expect((results[0] as { error: CrmError }).error.message).toContain('link partner "nope" does not exist');
    expect(linkedTo('ann')).toEqual([`companies:${acme}:279`]);
  });

  it('splits one pair at 100 inputs per call, and sends an edge the batch repeats once', async () => {
    const { adapter } = await setup();
    companies('acme', 'globex');
    // 60 contacts x (company acme + partner globex) = 120 contacts->companies inputs: 2 calls.
    const writes = Array.from({ length: 60 }, (_, i) => contact(`p-${i}`, ref('company', 'acme'), ref('partner', 'globex')));
    const results = await adapter.upsertRecords('contact', writes, context());
    expect(results.every((r) => r.ok)).toBe(true);
    expect(fake.count('associations/contacts/companies/batch/create')).toBe(2);
    // Both ids read in one request per logical object.
    expect(fake.count('companies/batch/read')).toBe(2);
    expect(linkedTo('p-7')).toHaveLength(2);
    // Two logical objects naming the same HubSpot company: one association, one input.
    fake.core.resetLog();
    const same = await adapter.upsertRecords('contact', [contact('solo', ref('company', 'acme'), ref('partner', 'acme'))], context());
    expect(same[0]!.ok).toBe(true);
    expect(fake.count('associations/contacts/companies/batch/create')).toBe(1);
    expect(linkedTo('solo')).toHaveLength(1);
  });

  it('creates a note with its target and links inline; a note whose link does not exist is not sent, its neighbour is', async () => {
    const { adapter } = await setup();
    const [acme] = companies('acme');
    const ann = fake.state.seed('contacts', { ai_external_id: 'ann' });
    const d1 = fake.state.seed('deals', { ai_external_id: 'd-1' });
    const results = await adapter.createActivities('note', [note('n-1', 'ann', ref('company', 'acme'), ref('deal', 'd-1')), note('n-2', 'ann', ref('deal', 'd-404'))], context());
    expect(results[0]).toMatchObject({ ok: true, created: true });
    expect(results[1]).toMatchObject({ ok: false, error: { vendorCode: 'LINK_NOT_FOUND' } });
    expect((results[1] as { error: CrmError }).error.message).toContain('link deal "d-404" does not exist');
    const notes = fake.records('notes');
    expect(notes.map((n) => n.properties.crm_upsert_key)).toEqual(['n-1']);
    expect(fake.associations('notes', notes[0]!.id).map((a) => `${a.toObjectType}:${a.toId}:${a.typeId}`).sort()).toEqual([`companies:${acme}:190`, `contacts:${ann}:202`, `deals:${d1}:214`]);
    // One read per object (contacts, companies, deals), one create.
    expect(fake.count('notes/batch/create')).toBe(1);
    expect(fake.count('batch/read')).toBe(3);
  });
});

describe('check-setup association types', () => {
  let stop: () => Promise<void>;
  afterEach(() => stop?.());

  it('reports a configured type id the pair does not list, naming the pair and the ids it found; listed ones are named as verified', async () => {
    const fake = fakeHubSpot({ token: TOKEN });
    const server = await fake.listen();
    stop = server.close;
    const hs = {
      basePath: server.basePath,
      objects: {
        company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
        // 341 is deal->company: not a contact->company type.
        contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'], links: { company: 341 } },
        note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body'], parents: { contact: 202, company: 190 } },
        task: { kind: 'activity', objectType: 'tasks', keyProperty: 'crm_upsert_key', fields: ['hs_task_subject'], parents: { contact: 204 } },
      },
    } as HubSpotConfig;
    const report = await checkHubSpotSetup(hs, { HUBSPOT_ACCESS_TOKEN: TOKEN }, false);
    const associations = report.findings.filter((f) => f.role === '(association)');
    expect(associations).toEqual([{
      object: 'contact', target: 'contacts -> companies type 341', role: '(association)', status: 'missing',
      detail: 'HubSpot defines no association type 341 from contacts to companies (HUBSPOT_DEFINED types: 279, 1 (Primary)), so every association written with it is refused',
      fix: 'set objects.contact.links.company to one of: 279, 1',
    }]);
    expect(report.appendix).toContain('notes -> contacts 202, notes -> companies 190, tasks -> contacts 204');
    expect(fake.count('/labels')).toBe(4);
  });
});
