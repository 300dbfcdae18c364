/**
 * CRM ids this process knows from an earlier write that went stale: the record was deleted in
 * HubSpot (or merged away), perhaps re-created under the same external id by someone else. The id
 * is dropped, the record read again by its external id (one read) and the write sent once more:
 * to the record that holds the external id now, or failed as a missing link / parent when none
 * does; never refused for good, never written to the deleted id. Counted on fakeHubSpot's request log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { DEFAULT_PARENT_ABSENT_MS } from '../../src/engine/parents.js';
import { harness, type Harness } from './hubspot-helpers.js';
import { errorBody } from '../../adapters/hubspot/fake/hubspot-fake-crm.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };

const objects: HubSpotAdapterOptions['objects'] = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'], links: { company: 279 } },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
};

const company = (eventId: string, externalId = 'acme') => ({ source: 'crm-test', eventId, op: 'upsert', object: 'company', externalId, fields: { name: `Company ${externalId}` } });
const contact = (eventId: string, externalId: string, linkTo = 'acme') => ({
  source: 'crm-test', eventId, op: 'upsert', object: 'contact', externalId, fields: { email: `${externalId}@example.test` }, links: [{ object: 'company', externalId: linkTo }],
});
const noteOn = (eventId: string, contactId: string) => ({
  source: 'crm-test', eventId, op: 'create', object: 'note', target: { object: 'contact', externalId: contactId },
  fields: { hs_note_body: `note ${eventId}`, hs_timestamp: '2026-11-29T10:00:00Z' },
});

const UPSERT_CONTACTS = 'POST /crm/v3/objects/contacts/batch/upsert';
const READ_COMPANIES = 'POST /crm/v3/objects/companies/batch/read';
const ASSOCIATE = 'POST /crm/v4/associations/contacts/companies/batch/create';

describe('stale CRM ids in one process (hubspotAdapter over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  const clock = { at: 0 };
  const setup = async () => {
    clock.at = Date.parse('2026-11-29T10:00:00Z');
    h = await harness('loopback', {}, { objects });
    // Notes are not looked up before their first create, so the counts show only what a stale id costs.
    return createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure', now: () => clock.at, sleep: async () => undefined });
  };
  const companyIdsOf = (contactId: string) => h.fake.associations('contacts', contactId).filter((a) => a.toObjectType === 'companies').map((a) => a.toId);
  const contactNamed = (externalId: string) => h.fake.records('contacts').find((c) => c.properties.ai_external_id === externalId)!;

  it('links a contact to the company re-created under the same external id after the one it wrote was deleted: one extra read', async () => {
    const sync = await setup();
    const written = await sync.apply(company('evt-co'));
    expect(written.status).toBe('created');
    // The id is known to this process now: a contact linking to it needs no read.
    expect((await sync.apply(contact('evt-ann', 'ann'))).status).toBe('created');
    expect(companyIdsOf(contactNamed('ann').id)).toEqual([written.recordId]);

    expect(h.fake.delete('companies', written.recordId!)).toBe(true);
    const recreated = h.fake.state.seed('companies', { ai_external_id: 'acme', name: 'Acme (again)' });
    h.fake.core.resetLog();
    const bob = await sync.apply(contact('evt-bob', 'bob'));
    expect(bob).toMatchObject({ status: 'created' });
    expect(companyIdsOf(bob.recordId!)).toEqual([recreated]);
    // The refused association, one read of the company by its external id, the association again.
    expect(h.fake.counts()).toEqual({ [UPSERT_CONTACTS]: 1, [ASSOCIATE]: 2, [READ_COMPANIES]: 1 });

    // The new id is what this process knows now: the next contact costs no read.
    h.fake.core.resetLog();
    const cy = await sync.apply(contact('evt-cy', 'cy'));
    expect(cy.status).toBe('created');
    expect(companyIdsOf(cy.recordId!)).toEqual([recreated]);
    expect(h.fake.counts()).toEqual({ [UPSERT_CONTACTS]: 1, [ASSOCIATE]: 1 });
    await sync.close();
  });

  it('fails a contact whose deleted company has no successor as a missing link, and links it once the company exists again', async () => {
    const sync = await setup();
    const written = await sync.apply(company('evt-co'));
    expect(h.fake.delete('companies', written.recordId!)).toBe(true);
    h.fake.core.resetLog();
    const dan = await sync.apply(contact('evt-dan', 'dan'));
    expect(dan.status).toBe('failed');
    expect(dan.error).toMatchObject({ vendorCode: 'LINK_NOT_FOUND', message: expect.stringContaining('link company "acme" does not exist') });
    expect(dan.error?.message).not.toMatch(/associations are invalid/);
    expect(h.fake.counts()).toEqual({ [UPSERT_CONTACTS]: 1, [ASSOCIATE]: 1, [READ_COMPANIES]: 1 });
    // The contact itself was written, without the association to the deleted company.
    expect(companyIdsOf(contactNamed('dan').id)).toEqual([]);

    // Someone re-creates the company; the same event again links it, once.
    const recreated = h.fake.state.seed('companies', { ai_external_id: 'acme', name: 'Acme (again)' });
    h.fake.core.resetLog();
    const again = await sync.apply(contact('evt-dan', 'dan'));
    expect(again.status).toBe('updated');
    expect(companyIdsOf(contactNamed('dan').id)).toEqual([recreated]);
    expect(h.fake.counts()).toEqual({ [UPSERT_CONTACTS]: 1, [READ_COMPANIES]: 1, [ASSOCIATE]: 1 });
    expect(h.fake.records('contacts')).toHaveLength(1);
    await sync.close();
  });

  it('creates a note on the contact re-created under the same external id after the one it wrote was deleted: one extra read', async () => {
    const sync = await setup();
    const first = await sync.apply({ ...contact('evt-eve', 'eve'), links: [] });
    expect(first.status).toBe('created');
    expect(h.fake.delete('contacts', first.recordId!)).toBe(true);
    const recreated = h.fake.state.seed('contacts', { ai_external_id: 'eve', email: 'eve@example.test' });
    h.fake.core.resetLog();
    const note = await sync.apply(noteOn('evt-n1', 'eve'));
    expect(note.status).toBe('created');
    expect(h.fake.records('notes').map((n) => n.associations.contacts)).toEqual([[{ id: recreated, typeId: 202 }]]);
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 2, 'POST /crm/v3/objects/contacts/batch/read': 1 });
    await sync.close();
  });

  it.each([1, 2])('sends %i note(s) again when HubSpot refuses the create whole over a stale contact id: each note once, on the right contact', async (n) => {
    const sync = await setup();
    const eve = await sync.apply({ ...contact('evt-eve', 'eve'), links: [] });
    const gil = await sync.apply({ ...contact('evt-gil', 'gil'), links: [] });
    expect(h.fake.delete('contacts', eve.recordId!)).toBe(true);
    const recreated = h.fake.state.seed('contacts', { ai_external_id: 'eve', email: 'eve@example.test' });
    // HubSpot's whole-request answer naming the id (hubspot-api-nodejs#646), in place of the first create.
    const handle = h.fake.state.handle.bind(h.fake.state);
    let refuse = true;
    h.fake.state.handle = (req) => {
      if (!refuse || !req.path.endsWith('/notes/batch/create')) return handle(req);
      refuse = false;
      return errorBody(400, 'VALIDATION_ERROR', 'One or more associations are invalid', { context: { INVALID_OBJECT_IDS: [`CONTACT=${eve.recordId!} is not valid`], objectId: [eve.recordId!], objectType: ['CONTACT'] } });
    };
    h.fake.core.resetLog();
    const notes = [noteOn('evt-n3', 'eve'), noteOn('evt-n4', 'gil')].slice(0, n);
    expect((await sync.applyMany(notes)).map((o) => o.status)).toEqual(notes.map(() => 'created'));
    const on = new Map(h.fake.records('notes').map((r) => [r.properties.hs_note_body, r.associations.contacts]));
    expect(on.get('note evt-n3')).toEqual([{ id: recreated, typeId: 202 }]);
    if (n === 2) expect(on.get('note evt-n4')).toEqual([{ id: gil.recordId, typeId: 202 }]);
    expect(h.fake.records('notes')).toHaveLength(n);
    // The refused create, one read of eve, then eve's note again (and, split from it, gil's).
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': n + 1, 'POST /crm/v3/objects/contacts/batch/read': 1 });
    await sync.close();
  });

  it('fails a note whose deleted contact has no successor as parent-missing, and creates it once the contact exists again', async () => {
    const sync = await setup();
    const first = await sync.apply({ ...contact('evt-fay', 'fay'), links: [] });
    expect(h.fake.delete('contacts', first.recordId!)).toBe(true);
    h.fake.core.resetLog();
    const note = await sync.apply(noteOn('evt-n2', 'fay'));
    expect(note.status).toBe('failed');
    expect(note.error).toMatchObject({ vendorCode: 'PARENT_NOT_FOUND', message: expect.stringContaining('parent contact with ai_external_id=fay does not exist') });
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 1, 'POST /crm/v3/objects/contacts/batch/read': 1 });
    expect(h.fake.records('notes')).toHaveLength(0);

    // Re-created by someone else once the parent-missing hold has run out (held, it would not be read).
    const recreated = h.fake.state.seed('contacts', { ai_external_id: 'fay', email: 'fay@example.test' });
    clock.at += DEFAULT_PARENT_ABSENT_MS;
    h.fake.core.resetLog();
    const again = await sync.apply(noteOn('evt-n2', 'fay'));
    expect(again.status).toBe('created');
    expect(h.fake.records('notes').map((n) => n.associations.contacts)).toEqual([[{ id: recreated, typeId: 202 }]]);
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 1, 'POST /crm/v3/objects/contacts/batch/read': 1 });
    await sync.close();
  });
});
