/**
 * A sales call written as links, through createSync + hubspotAdapter (the real @hubspot/api-client)
 * against fakeHubSpot over loopback: records, their associations and the exact requests, on the
 * happy path and when the association call fails.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };

// The config `crm-upsert init --template sales` writes.
const salesObjects = hubspotCli.salesStarter.section.objects;

const ref = (object: string, externalId: string) => ({ object, externalId });
const company = (id = 'acme') => ({ source: 'call-1', eventId: `co-${id}`, op: 'upsert', object: 'company', externalId: id, fields: { name: `${id} Inc`, domain: `${id}.test` } });
const contact = (id = 'ann', companyId = 'acme') => ({
  source: 'call-1', eventId: `ct-${id}`, op: 'upsert', object: 'contact', externalId: id, fields: { email: `${id}@acme.test`, firstname: id }, links: [ref('company', companyId)],
});
const deal = () => ({
  source: 'call-1', eventId: 'deal-1', op: 'upsert', object: 'deal', externalId: 'd-1', fields: { dealname: 'Acme renewal', amount: '12000' }, links: [ref('contact', 'ann'), ref('company', 'acme')],
});
const note = () => ({
  source: 'call-1', eventId: 'note-1', op: 'create', object: 'note', target: ref('contact', 'ann'),
  fields: { hs_note_body: 'Call: renewal at 12k', hs_timestamp: '2026-12-05T10:00:00Z' }, links: [ref('company', 'acme'), ref('deal', 'd-1')],
});
const task = () => ({
  source: 'call-1', eventId: 'task-1', op: 'create', object: 'task', target: ref('deal', 'd-1'),
  fields: { hs_task_subject: 'Send the quote', hs_timestamp: '2026-12-06T10:00:00Z' },
});
const call = () => [company(), contact(), deal(), note(), task()];
const statuses = (outcomes: Outcome[]) => outcomes.map((o) => o.status);

describe('a sales call with links (hubspotAdapter over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  const setup = async () => {
    h = await harness('loopback', {}, { objects: salesObjects });
    return createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
  };
  const only = (objectType: string) => {
    const records = h.fake.records(objectType);
    expect(records).toHaveLength(1);
    return records[0]!.id;
  };
  /** Every association of the call, from the side it was written from. */
  const expectCallAssociations = () => {
    const [co, ct, dl, nt, tk] = ['companies', 'contacts', 'deals', 'notes', 'tasks'].map(only) as [string, string, string, string, string];
    const to = (objectType: string, id: string) => h.fake.associations(objectType, id).map((a) => `${a.toObjectType}:${a.toId}:${a.typeId}`).sort();
    expect(to('contacts', ct)).toEqual([`companies:${co}:279`, `deals:${dl}:4`, `notes:${nt}:201`].sort());
    expect(to('deals', dl)).toEqual([`companies:${co}:341`, `contacts:${ct}:3`, `notes:${nt}:213`, `tasks:${tk}:215`].sort());
    expect(to('notes', nt)).toEqual([`companies:${co}:190`, `contacts:${ct}:202`, `deals:${dl}:214`].sort());
    expect(to('tasks', tk)).toEqual([`deals:${dl}:216`]);
    expect(to('companies', co)).toEqual([`contacts:${ct}:280`, `deals:${dl}:342`, `notes:${nt}:189`].sort());
  };

  it('writes every record and association once in 8 requests, and nothing when the call is applied again', async () => {
    const sync = await setup();
    expect(statuses(await sync.applyMany(call()))).toEqual(['created', 'created', 'created', 'created', 'created']);
    expectCallAssociations();
    // company upsert; contact upsert + contacts->companies; deal upsert + deals->contacts + deals->companies; note create; task create.
    expect(h.fake.counts()).toEqual({
      'POST /crm/v3/objects/companies/batch/upsert': 1,
      'POST /crm/v3/objects/contacts/batch/upsert': 1,
      'POST /crm/v4/associations/contacts/companies/batch/create': 1,
      'POST /crm/v3/objects/deals/batch/upsert': 1,
      'POST /crm/v4/associations/deals/contacts/batch/create': 1,
      'POST /crm/v4/associations/deals/companies/batch/create': 1,
      'POST /crm/v3/objects/notes/batch/create': 1,
      'POST /crm/v3/objects/tasks/batch/create': 1,
    });
    expect(h.fake.count()).toBe(8);
    expect(statuses(await sync.applyMany(call()))).toEqual(['replayed', 'replayed', 'replayed', 'replayed', 'replayed']);
    expect(h.fake.count()).toBe(8);
    expectCallAssociations();
    await sync.close();
  });

  it.each([
    ['lost after commit', 'lost_response'],
    ['a 503', 'server_error'],
  ] as const)('retries an association call %s: each association once, no upsert sent again', async (_label, fault) => {
    const sync = await setup();
    h.fake.failNext(fault, { endpoint: 'associations/deals/contacts/batch/create' });
    expect(statuses(await sync.applyMany(call()))).toEqual(['created', 'created', 'created', 'created', 'created']);
    expectCallAssociations();
    expect(h.fake.count('deals/batch/upsert')).toBe(1);
    expect(h.fake.count('associations/deals/contacts/batch/create')).toBe(2);
    // The retry sends only the edge not confirmed: deals->companies was confirmed in the first attempt.
    expect(h.fake.count('associations/deals/companies/batch/create')).toBe(1);
    expect(h.fake.count()).toBe(9);
    await sync.close();
  });

  it('fails a contact whose company does not exist yet, naming it, and links it once the company is written', async () => {
    const sync = await setup();
    const [first] = await sync.applyMany([contact('bob', 'globex')]);
    expect(first!.status).toBe('failed');
    expect(first!.error?.message).toContain('link company "globex" does not exist');
    expect(first!.error?.vendorCode).toBe('LINK_NOT_FOUND');
    const bob = only('contacts');
    expect(h.fake.records('contacts')[0]!.properties.email).toBe('bob@acme.test');
    expect(h.fake.associations('contacts', bob)).toEqual([]);
    expect(h.fake.count('companies/batch/read')).toBe(1);
    expect(h.fake.count('associations')).toBe(0);

    expect(statuses(await sync.applyMany([company('globex')]))).toEqual(['created']);
    const again = await sync.applyMany([contact('bob', 'globex')]);
    expect(statuses(again)).toEqual(['updated']);
    const globex = only('companies');
    expect(h.fake.associations('contacts', bob)).toEqual([{ toObjectType: 'companies', toId: globex, typeId: 279, label: null }]);
    expect(h.fake.count('associations/contacts/companies/batch/create')).toBe(1);
    // The company's id came from the write a moment ago: no second read.
    expect(h.fake.count('companies/batch/read')).toBe(1);
    expect(h.fake.records('contacts')).toHaveLength(1);
    await sync.close();
  });

  it('finds a note whose create response was lost after commit by its key, with its three associations, and does not create it again', async () => {
    const sync = await setup();
    h.fake.failNext('lost_response', { endpoint: 'notes/batch/create' });
    expect(statuses(await sync.applyMany(call()))).toEqual(['created', 'created', 'created', 'created', 'created']);
    expect(h.fake.count('notes/batch/create')).toBe(1);
    // Looked up through the contact's notes (v4 batch read) and their keys, not created again.
    expect(h.fake.count('associations/contacts/notes/batch/read')).toBe(1);
    expect(h.fake.count('v3/objects/notes/batch/read')).toBe(1);
    expectCallAssociations();
    await sync.close();
  });

  // With seed 1 a lookup's batch read leaves a result out with no error naming it: taken as absent, that would create a note and a task twice.
  it.each([1, 2, 7])('ends with every record and association once under seeded faults on every request (seed %i)', async (seed) => {
    const sync = await setup();
    h.fake.setFaults({ seed, serverError: 0.08, reset: 0.08, lostResponse: 0.08, missingResult: 0.08, rateLimit: 0.04, retryAfterSeconds: 0 });
    const calls = Array.from({ length: 12 }, (_, n) => {
      const [co, ct] = [`co-${n}`, `ct-${n}`];
      return [
        company(co), contact(ct, co),
        { ...deal(), eventId: `deal-${n}`, externalId: `d-${n}`, links: [ref('contact', ct), ref('company', co)] },
        { ...note(), eventId: `note-${n}`, target: ref('contact', ct), links: [ref('company', co), ref('deal', `d-${n}`)] },
        { ...task(), eventId: `task-${n}`, target: ref('deal', `d-${n}`) },
      ];
    });
    // One applyMany per call: about 8 requests each, so the faults land on every kind of request.
    const outcomes: Outcome[] = [];
    for (const c of calls) outcomes.push(...(await sync.applyMany(c)));
    // An upsert whose response was lost is found written on its retry: `updated`.
    expect(outcomes.filter((o) => o.status !== 'created' && o.status !== 'updated').map((o) => [o.status, o.error?.message])).toEqual([]);
    expect(h.fake.core.log.filter((e) => e.fault !== null && e.endpoint.includes('associations') && e.endpoint.endsWith('batch/create')).length).toBeGreaterThan(2);
    expect(Object.values(h.fake.core.faultCounts()).reduce((a, b) => a + b, 0)).toBeGreaterThan(15);
    const byExternal = (objectType: string) => new Map(h.fake.records(objectType).map((r) => [r.properties.ai_external_id ?? r.properties.crm_upsert_key, r.id]));
    const [companies, contacts, deals] = ['companies', 'contacts', 'deals'].map(byExternal) as [Map<string, string>, Map<string, string>, Map<string, string>];
    expect([companies.size, contacts.size, deals.size, h.fake.records('notes').length, h.fake.records('tasks').length]).toEqual([12, 12, 12, 12, 12]);
    const types = (objectType: string, id: string) => h.fake.associations(objectType, id).map((a) => `${a.toObjectType}:${a.toId}:${a.typeId}`).sort();
    for (let n = 0; n < 12; n++) {
      const [co, ct, dl] = [companies.get(`co-${n}`)!, contacts.get(`ct-${n}`)!, deals.get(`d-${n}`)!];
      const noteId = h.fake.records('notes').find((r) => r.associations.contacts?.some((a) => a.id === ct))!.id;
      expect(types('notes', noteId)).toEqual([`companies:${co}:190`, `contacts:${ct}:202`, `deals:${dl}:214`].sort());
      expect(types('deals', dl).filter((t) => !t.startsWith('notes') && !t.startsWith('tasks'))).toEqual([`companies:${co}:341`, `contacts:${ct}:3`].sort());
      expect(types('contacts', ct).filter((t) => t.startsWith('companies'))).toEqual([`companies:${co}:279`]);
    }
    await sync.close();
  });

  it('writes 200 contacts linked to 20 companies with one association call per upsert batch, not one per contact', async () => {
    const sync = await setup();
    const companies = Array.from({ length: 20 }, (_, i) => company(`co-${i}`));
    const contacts = Array.from({ length: 200 }, (_, i) => contact(`p-${i}`, `co-${i % 20}`));
    const outcomes = await sync.applyMany([...contacts, ...companies]);
    expect(new Set(statuses(outcomes))).toEqual(new Set(['created']));
    // ceil(200 / 100) association calls for the one pair, one per upsert batch of 100 contacts.
    expect(h.fake.count('associations/contacts/companies/batch/create')).toBe(2);
    expect(h.fake.count('contacts/batch/upsert')).toBe(2);
    expect(h.fake.count('companies/batch/upsert')).toBe(1);
    expect(h.fake.count()).toBe(5);
    const byExternal = new Map(h.fake.records('companies').map((c) => [c.properties.ai_external_id, c.id]));
    for (const c of h.fake.records('contacts')) {
      const n = Number(c.properties.ai_external_id!.slice(2));
      expect(h.fake.associations('contacts', c.id)).toEqual([{ toObjectType: 'companies', toId: byExternal.get(`co-${n % 20}`), typeId: 279, label: null }]);
    }
    for (const id of byExternal.values()) expect(h.fake.associations('companies', id)).toHaveLength(10);
    await sync.close();
  });
});
