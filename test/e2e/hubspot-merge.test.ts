/**
 * Contacts merged in HubSpot after this ledger wrote them, and every write that follows. HubSpot
 * (and fakeHubSpot after it) makes a new record with a new id out of the two, keeps the primary's
 * values and unique id, moves both records' associations to it and answers both old ids with it.
 * So: a note for either contact, sent with the id the ledger holds, lands on the new record; with
 * no id to go on, a note for the merged-away contact fails as parent-missing (its external id is
 * held by no record), retryable later; an upsert of the primary updates the new record; an upsert
 * of the merged-away contact is `created` with `recreated` (default) or fails RECORD_GONE
 * (`onMissing: 'skip'`): never a silent duplicate, never a write to a record that ended.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { createSync, openLedger, type Sync } from '../../src/index.js';
import { harness, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const T0 = Date.parse('2026-11-29T10:00:00Z');
const objectsWith = (onMissing?: 'create' | 'skip'): HubSpotAdapterOptions['objects'] => ({
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname'], ...(onMissing ? { onMissing } : {}) },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
});
const at = (ms: number) => new Date(T0 + ms).toISOString();
const contact = (eventId: string, externalId: string, fields: Record<string, string>, ms = 0) => ({
  source: 'crm-test', eventId, op: 'upsert', object: 'contact', externalId, occurredAt: at(ms), fields,
});
const noteOn = (eventId: string, externalId: string, ms = 0) => ({
  source: 'crm-test', eventId, op: 'create', object: 'note', occurredAt: at(ms), target: { object: 'contact', externalId },
  fields: { hs_note_body: `note ${eventId}`, hs_timestamp: at(ms) },
});

describe('contacts merged in HubSpot (hubspotAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  /** Ann and Bea written through a new Sync, a note on Ann, then Ann merged into Bea (the primary); the merge's new record id. */
  const mergedPair = async (onMissing?: 'create' | 'skip') => {
    h = await harness('loopback', {}, { objects: objectsWith(onMissing) });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: fast, verifyCreates: 'after-failure', sleep: async () => undefined });
    const [ann, bea] = await sync.applyMany([
      contact('evt-ann', 'ann', { email: 'ann@example.test', firstname: 'Ann', lastname: 'Only-Ann' }),
      contact('evt-bea', 'bea', { email: 'bea@example.test', firstname: 'Bea' }),
    ]);
    expect((await sync.apply(noteOn('evt-n0', 'ann'))).status).toBe('created');
    const survivor = h.fake.merge('contacts', bea!.recordId!, ann!.recordId!);
    h.fake.core.resetLog();
    return { sync, ledger, ann: ann!.recordId!, bea: bea!.recordId!, survivor };
  };
  const notesOn = () => h!.fake.records('notes').map((n) => [n.properties.hs_note_body, n.associations.contacts]);
  const close = (sync: Sync) => sync.close();

  it('merges over the API as HubSpot does: a new record holds both, the primary wins, both old ids answer with it', async () => {
    h = await harness('loopback', {}, { objects: objectsWith() });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, sleep: async () => undefined });
    const [ann, bea] = await sync.applyMany([
      contact('evt-ann', 'ann', { email: 'ann@example.test', firstname: 'Ann', lastname: 'Only-Ann' }),
      contact('evt-bea', 'bea', { email: 'bea@example.test', firstname: 'Bea' }),
    ]);
    const note = await sync.apply(noteOn('evt-n0', 'ann'));
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${h!.basePath}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });

    const merged = await call('POST', '/crm/v3/objects/contacts/merge', { primaryObjectId: bea.recordId, objectIdToMerge: ann.recordId });
    expect(merged.status).toBe(200);
    const survivor = ((await merged.json()) as { id: string }).id;
    expect([ann.recordId, bea.recordId]).not.toContain(survivor);
    expect(h.fake.records('contacts').map((c) => [c.id, c.properties.ai_external_id, c.properties.firstname, c.properties.lastname, c.properties.hs_merged_object_ids])).toEqual([
      [survivor, 'bea', 'Bea', 'Only-Ann', `${bea.recordId};${ann.recordId}`],
    ]);
    expect(h.fake.records('notes').map((n) => [n.id, n.associations.contacts])).toEqual([[note.recordId, [{ id: survivor, typeId: 202 }]]]);

    for (const old of [ann.recordId, bea.recordId]) {
      const read = await call('GET', `/crm/v3/objects/contacts/${old}?properties=hs_merged_object_ids`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ id: survivor, properties: { hs_merged_object_ids: `${bea.recordId};${ann.recordId}` } });
    }
    const byAnn = await call('POST', '/crm/v3/objects/contacts/batch/read', { idProperty: 'ai_external_id', inputs: [{ id: 'ann' }], properties: ['email'], propertiesWithHistory: [] });
    expect(await byAnn.json()).toMatchObject({ results: [], errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['ann'] } }] });
    await sync.close();
  });

  it('lands a note for either merged contact on the new record, through the id the ledger holds', async () => {
    const { sync, survivor } = await mergedPair();
    const outcomes = await sync.applyMany([noteOn('evt-n1', 'ann', 1_000), noteOn('evt-n2', 'bea', 1_000)]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created']);
    expect(notesOn()).toEqual([
      ['note evt-n0', [{ id: survivor, typeId: 202 }]],
      ['note evt-n1', [{ id: survivor, typeId: 202 }]],
      ['note evt-n2', [{ id: survivor, typeId: 202 }]],
    ]);
    expect(h!.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 1 });
    await close(sync);
  });

  it('fails a note for the merged-away contact as parent-missing when no id is known: no record holds its external id', async () => {
    const { survivor } = await mergedPair();
    // Another ledger (a new SQLite file, another job): nothing but the external id to go on.
    const fresh = createSync({ adapter: h!.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure', sleep: async () => undefined });
    const [onAnn, onBea] = await fresh.applyMany([noteOn('evt-n3', 'ann', 1_000), noteOn('evt-n4', 'bea', 1_000)]);
    expect(onAnn).toMatchObject({ status: 'failed', error: { vendorCode: 'PARENT_NOT_FOUND', message: expect.stringContaining('ai_external_id=ann') } });
    expect(onBea!.status).toBe('created');
    expect(notesOn()).toEqual([
      ['note evt-n0', [{ id: survivor, typeId: 202 }]],
      ['note evt-n4', [{ id: survivor, typeId: 202 }]],
    ]);
    await close(fresh);
  });

  it('updates the new record for the primary, and reports the merged-away contact recreated (default onMissing)', async () => {
    const { sync, ann, survivor } = await mergedPair();
    const [annAgain, beaAgain] = await sync.applyMany([
      contact('evt-ann2', 'ann', { firstname: 'Ann B.' }, 1_000),
      contact('evt-bea2', 'bea', { firstname: 'Bea C.' }, 1_000),
    ]);
    expect(beaAgain).toMatchObject({ status: 'updated', recordId: survivor });
    expect(beaAgain!.recreated).toBeUndefined();
    expect(annAgain).toMatchObject({ status: 'created', recreated: { previousId: ann } });
    expect(h!.fake.records('contacts').map((c) => [c.id, c.properties.ai_external_id, c.properties.firstname])).toEqual([
      [survivor, 'bea', 'Bea C.'],
      [annAgain!.recordId, 'ann', 'Ann B.'],
    ]);
    await close(sync);
  });

  it("onMissing 'skip': updates the new record for the primary and leaves the merged-away contact merged (RECORD_GONE)", async () => {
    const { sync, ann, survivor } = await mergedPair('skip');
    const [annAgain, beaAgain] = await sync.applyMany([
      contact('evt-ann2', 'ann', { firstname: 'Ann B.' }, 1_000),
      contact('evt-bea2', 'bea', { firstname: 'Bea C.' }, 1_000),
    ]);
    expect(beaAgain).toMatchObject({ status: 'updated', recordId: survivor });
    expect(annAgain).toMatchObject({ status: 'failed', error: { code: 'RECORD_GONE', retryable: false, message: expect.stringContaining(`id ${ann}`) } });
    expect(h!.fake.records('contacts').map((c) => [c.id, c.properties.ai_external_id, c.properties.firstname])).toEqual([[survivor, 'bea', 'Bea C.']]);
    expect(h!.fake.counts()).toEqual({ 'POST /crm/v3/objects/contacts/batch/update': 1 });
    await close(sync);
  });
});
