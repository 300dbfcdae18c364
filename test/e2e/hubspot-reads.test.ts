/**
 * sync.read through hubspotAdapter (the real @hubspot/api-client) against fakeHubSpot over
 * loopback: batch reads of 100, found and not found per id in the order asked, reads by email,
 * links through the v4 association read, only the readable fields, faults retried, no ledger
 * entries, and the exact requests each read costs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { createSync, CrmError, openLedger, type LedgerBackend } from '../../src/index.js';
import { harness, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };

const objects: HubSpotAdapterOptions['objects'] = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name', 'domain'] },
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname'], lookupBy: ['email'], links: { company: 279 } },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'amount'], readFields: ['hubspot_owner_id'], links: { contact: 3, company: 341 } },
};

const BATCH_READ = 'batch/read';

describe('sync.read with hubspotAdapter over loopback', () => {
  let h: Harness;
  let ledger: LedgerBackend;
  afterEach(() => h?.stop());

  let acquired = 0;
  const setup = async (options: { token?: string; associationPageSize?: number } = {}) => {
    acquired = 0;
    const rateBudget = { acquire: async (cost = 1) => void (acquired += cost) };
    h = await harness('loopback', options.associationPageSize ? { associationPageSize: options.associationPageSize } : {}, { objects, rateBudget, ...(options.token ? { accessToken: options.token } : {}) });
    ledger = openLedger('memory:');
    const slept: number[] = [];
    const sync = createSync({ adapter: h.adapter, ledger, retry: fast, sleep: async (ms) => void slept.push(ms) });
    return { sync, slept };
  };
  const seedContacts = (n: number) =>
    Array.from({ length: n }, (_, i) => h.fake.state.seed('contacts', { ai_external_id: `C-${i}`, email: `c${i}@example.test`, firstname: `First ${i}` }));

  it('reads 250 contacts by external id in exactly 3 batch reads (100/100/50), found and not found per id in the order asked', async () => {
    const { sync } = await setup();
    const recordIds = seedContacts(200);
    // Every fifth id asked names no contact; the rest are asked backwards.
    const asked = Array.from({ length: 250 }, (_, i) => (i % 5 === 4 ? `MISSING-${i}` : `C-${199 - (i - Math.floor(i / 5))}`));
    const answers = await sync.read('contact', asked);
    expect(h.fake.count()).toBe(3);
    expect(h.fake.count('contacts/batch/read')).toBe(3);
    expect(acquired).toBe(3);
    expect(h.adapter.apiCalls()).toBe(3);
    expect(h.fake.core.log.map((e) => e.status)).toEqual([207, 207, 207]);
    expect(answers.map((a) => a.id)).toEqual(asked);
    answers.forEach((a, i) => {
      if (asked[i]!.startsWith('MISSING-')) {
        expect(a).toEqual({ id: asked[i], found: false });
        return;
      }
      const n = Number(asked[i]!.slice(2));
      expect(a).toEqual({ id: `C-${n}`, found: true, recordId: recordIds[n], externalId: `C-${n}`, fields: { email: `c${n}@example.test`, firstname: `First ${n}`, lastname: null } });
    });
    expect(answers.filter((a) => a.found)).toHaveLength(200);
  });

  it('answers with a 200 when HubSpot finds every id, and only the asked fields', async () => {
    const { sync } = await setup();
    seedContacts(3);
    const answers = await sync.read('contact', ['C-2', 'C-0'], { fields: ['firstname'] });
    expect(h.fake.core.log.map((e) => [e.endpoint, e.status])).toEqual([['POST /crm/v3/objects/contacts/batch/read', 200]]);
    expect(answers).toEqual([
      { id: 'C-2', found: true, recordId: expect.any(String), externalId: 'C-2', fields: { firstname: 'First 2' } },
      { id: 'C-0', found: true, recordId: expect.any(String), externalId: 'C-0', fields: { firstname: 'First 0' } },
    ]);
  });

  it('matches external ids exactly: another case names no contact', async () => {
    const { sync } = await setup();
    seedContacts(1);
    expect(await sync.read('contact', ['c-0', 'C-0'])).toMatchObject([{ id: 'c-0', found: false }, { id: 'C-0', found: true, externalId: 'C-0' }]);
    expect(h.fake.count()).toBe(1);
  });

  it('finds a contact this process upserted a moment earlier, with no search request', async () => {
    const { sync } = await setup();
    const written = await sync.apply({ source: 'crm-test', eventId: 'evt-1', op: 'upsert', object: 'contact', externalId: 'C-new', fields: { email: 'new@example.test', firstname: 'Nia' } });
    expect(written.status).toBe('created');
    const before = h.fake.count();
    const [answer] = await sync.read('contact', ['C-new']);
    expect(answer).toEqual({ id: 'C-new', found: true, recordId: written.recordId, externalId: 'C-new', fields: { email: 'new@example.test', firstname: 'Nia', lastname: null } });
    expect(h.fake.count() - before).toBe(1);
    expect(h.fake.count('search')).toBe(0);
  });

  it('reads contacts by email, matching the asked email without regard to case and answering the stored one', async () => {
    const { sync } = await setup();
    const ann = h.fake.state.seed('contacts', { ai_external_id: 'C-ann', email: 'ann@example.test', firstname: 'Ann' });
    const bob = h.fake.state.seed('contacts', { email: 'bob@example.test', firstname: 'Bob' }); // made in HubSpot's screens: no external id
    const answers = await sync.read('contact', ['ANN@Example.test', 'nobody@example.test', 'bob@example.test'], { by: 'email', fields: ['email', 'firstname'] });
    expect(answers).toEqual([
      { id: 'ANN@Example.test', found: true, recordId: ann, externalId: 'C-ann', fields: { email: 'ann@example.test', firstname: 'Ann' } },
      { id: 'nobody@example.test', found: false },
      { id: 'bob@example.test', found: true, recordId: bob, fields: { email: 'bob@example.test', firstname: 'Bob' } },
    ]);
    expect(h.fake.count()).toBe(1);
    expect(h.fake.core.log[0]!.status).toBe(207);
  });

  it('answers a deal with its linked contact and company and their external ids in 5 requests (1 read, 2 association reads, 2 linked reads)', async () => {
    const { sync } = await setup();
    const ref = (object: string, externalId: string) => ({ object, externalId });
    const written = await sync.applyMany([
      { source: 'call', eventId: 'co', op: 'upsert', object: 'company', externalId: 'acme', fields: { name: 'Acme', domain: 'acme.test' } },
      { source: 'call', eventId: 'ct', op: 'upsert', object: 'contact', externalId: 'ann', fields: { email: 'ann@acme.test' }, links: [ref('company', 'acme')] },
      { source: 'call', eventId: 'dl', op: 'upsert', object: 'deal', externalId: 'd-1', fields: { dealname: 'Acme renewal', amount: '12000' }, links: [ref('contact', 'ann'), ref('company', 'acme')] },
      { source: 'call', eventId: 'd2', op: 'upsert', object: 'deal', externalId: 'd-2', fields: { dealname: 'Alone' } },
    ]);
    expect(written.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created']);
    const [companyId, contactId, dealId, loneId] = written.map((o) => o.recordId);
    const before = h.fake.count();
    const answers = await sync.read('deal', ['d-1', 'd-2', 'd-404'], { links: true });
    expect(h.fake.count() - before).toBe(5);
    expect(h.fake.core.log.slice(before).map((e) => `${e.endpoint} ${e.status}`)).toEqual([
      'POST /crm/v3/objects/deals/batch/read 207',
      'POST /crm/v4/associations/deals/contacts/batch/read 207',
      'POST /crm/v3/objects/contacts/batch/read 200',
      'POST /crm/v4/associations/deals/companies/batch/read 207',
      'POST /crm/v3/objects/companies/batch/read 200',
    ]);
    expect(answers).toEqual([
      {
        id: 'd-1', found: true, recordId: dealId, externalId: 'd-1', fields: { dealname: 'Acme renewal', amount: '12000', hubspot_owner_id: null },
        links: [{ object: 'contact', recordId: contactId, externalId: 'ann' }, { object: 'company', recordId: companyId, externalId: 'acme' }],
      },
      // No associations: HubSpot's 207 NO_ASSOCIATIONS_FOUND for it, read as none.
      { id: 'd-2', found: true, recordId: loneId, externalId: 'd-2', fields: { dealname: 'Alone', amount: null, hubspot_owner_id: null }, links: [] },
      { id: 'd-404', found: false },
    ]);
  });

  it('follows the pages of a long association list: 3 contacts on a deal, 2 a page', async () => {
    const { sync } = await setup({ associationPageSize: 2 });
    const contacts = ['a', 'b', 'c'].map((x) => h.fake.state.seed('contacts', { ai_external_id: x }));
    await sync.apply({ source: 's', eventId: 'd', op: 'upsert', object: 'deal', externalId: 'd-1', fields: { dealname: 'Three' }, links: ['a', 'b', 'c'].map((externalId) => ({ object: 'contact', externalId })) });
    const before = h.fake.count();
    const [deal] = await sync.read('deal', ['d-1'], { links: true, fields: ['dealname'] });
    expect(h.fake.core.log.slice(before).map((e) => e.endpoint)).toEqual([
      'POST /crm/v3/objects/deals/batch/read',
      'POST /crm/v4/associations/deals/contacts/batch/read',
      'POST /crm/v4/associations/deals/contacts/batch/read',
      'POST /crm/v3/objects/contacts/batch/read',
      'POST /crm/v4/associations/deals/companies/batch/read',
    ]);
    expect(deal).toMatchObject({ found: true, links: contacts.map((recordId, i) => ({ object: 'contact', recordId, externalId: 'abc'[i] })) });
  });

  it('reads a contact with links to one object in 3 requests for 100 ids', async () => {
    const { sync } = await setup();
    const company = h.fake.state.seed('companies', { ai_external_id: 'acme', name: 'Acme' });
    const ids = seedContacts(100);
    // Associate each contact with the company through the adapter's own write path.
    await sync.applyMany(ids.map((_, i) => ({ source: 's', eventId: `l-${i}`, op: 'upsert', object: 'contact', externalId: `C-${i}`, fields: { firstname: `First ${i}` }, links: [{ object: 'company', externalId: 'acme' }] })));
    const before = h.fake.count();
    const spent = acquired;
    const answers = await sync.read('contact', ids.map((_, i) => `C-${i}`), { links: true, fields: ['firstname'] });
    expect(h.fake.count() - before).toBe(3);
    expect(acquired - spent).toBe(3);
    expect(answers.every((a) => a.found && a.links?.length === 1 && a.links[0]!.recordId === company && a.links[0]!.externalId === 'acme')).toBe(true);
  });

  it('answers only the asked readable fields though HubSpot sends hs_object_id, createdate and lastmodifieddate, and answers readFields', async () => {
    const { sync } = await setup();
    h.fake.state.seed('deals', { ai_external_id: 'd-1', dealname: 'Big', amount: '5000', hubspot_owner_id: '77', dealstage: 'closedwon' });
    const [all] = await sync.read('deal', ['d-1']);
    expect(all).toMatchObject({ found: true, fields: { dealname: 'Big', amount: '5000', hubspot_owner_id: '77' } });
    expect(Object.keys((all as { fields: object }).fields).sort()).toEqual(['amount', 'dealname', 'hubspot_owner_id']);
    const [owner] = await sync.read('deal', ['d-1'], { fields: ['hubspot_owner_id'] });
    expect((owner as { fields: object }).fields).toEqual({ hubspot_owner_id: '77' });
    await expect(sync.read('deal', ['d-1'], { fields: ['dealstage'] })).rejects.toThrow(/"dealstage" is not readable on "deal"/);
    await expect(sync.read('deal', ['d-1'], { fields: ['createdate'] })).rejects.toThrow(/"createdate" is not readable/);
    expect(h.fake.count()).toBe(2);
  });

  it('waits the Retry-After of a 429, then answers, in 2 requests', async () => {
    const { sync, slept } = await setup();
    seedContacts(2);
    h.fake.setFaults({ retryAfterSeconds: 3 });
    h.fake.failNext('rate_limit', { endpoint: BATCH_READ });
    const answers = await sync.read('contact', ['C-0', 'C-1']);
    expect(answers.map((a) => a.found)).toEqual([true, true]);
    expect(slept).toContain(3_000);
    expect(h.fake.core.log.map((e) => e.status)).toEqual([429, 200]);
  });

  it.each([
    ['server_error', 503],
    ['reset', null],
    ['missing_result', 200],
  ] as const)('retries a read after a %s and answers every id', async (fault, status) => {
    const { sync } = await setup();
    seedContacts(3);
    h.fake.failNext(fault, { endpoint: BATCH_READ });
    const answers = await sync.read('contact', ['C-0', 'C-1', 'C-2']);
    expect(answers.map((a) => a.found)).toEqual([true, true, true]);
    expect(h.fake.core.log.map((e) => e.status)).toEqual([status, 200]);
  });

  it('retries a link read after a 5xx and answers the links', async () => {
    const { sync } = await setup();
    const company = h.fake.state.seed('companies', { ai_external_id: 'acme', name: 'Acme' });
    await sync.apply({ source: 's', eventId: 'c', op: 'upsert', object: 'contact', externalId: 'ann', fields: { firstname: 'Ann' }, links: [{ object: 'company', externalId: 'acme' }] });
    const before = h.fake.count();
    h.fake.failNext('server_error', { endpoint: 'associations' });
    const [ann] = await sync.read('contact', ['ann'], { links: true });
    expect(ann).toMatchObject({ found: true, links: [{ object: 'company', recordId: company, externalId: 'acme' }] });
    // The failed group is read again whole: 1 read + 1 failed association read, then 3.
    expect(h.fake.count() - before).toBe(5);
  });

  it('surfaces a 401 as an auth CrmError naming the token variable, with the token nowhere in it', async () => {
    const { sync } = await setup({ token: 'pat-na1-wrong-token-0b1c2d3e' });
    const err = await sync.read('contact', ['C-0']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmError);
    const crm = err as CrmError;
    expect(crm.kind).toBe('auth');
    expect(crm.status).toBe(401);
    expect(crm.retryable).toBe(false);
    expect(crm.message).toMatch(/HUBSPOT_ACCESS_TOKEN/);
    expect(crm.message).toMatch(/crm\.objects\.contacts\.read/);
    const chain: string[] = [];
    for (let e: unknown = crm; e; e = (e as { cause?: unknown }).cause) chain.push(String(e), JSON.stringify(e) ?? '', (e as Error).stack ?? '');
    const { inspect } = await import('node:util');
    chain.push(inspect(crm, { depth: 10 }));
    for (const text of chain) {
      expect(text).not.toContain('pat-na1-wrong-token-0b1c2d3e');
      expect(text).not.toContain(TOKEN);
    }
    expect(h.fake.count()).toBe(1);
  });

  it('writes no ledger entry, however many reads', async () => {
    const { sync } = await setup();
    seedContacts(5);
    await sync.read('contact', ['C-0', 'C-1', 'nope']);
    await sync.read('contact', ['c1@example.test'], { by: 'email' });
    await sync.read('contact', ['C-2'], { links: true });
    expect(await ledger.list()).toEqual([]);
    expect(h.fake.count()).toBe(4);
  });
});
