/**
 * Activities that arrive before their parent, and lookups only where a write may have happened,
 * counted on the fake HubSpot's request log: a note whose contact is absent costs one contact read
 * until that contact is written or the hold runs out; a note on a contact this Sync just wrote
 * needs no read, nor does one on a contact another Sync of the same ledger wrote (its id is in the
 * ledger), unless HubSpot refuses that id; a failure before the create left, or after a lookup
 * cleared the notes, calls for no (further) lookup, and neither does a taken-over note whose contact
 * a read found absent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { DEFAULT_PARENT_ABSENT_MS } from '../../src/engine/parents.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const upsert = (n: number) => ({ source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@example.test` } });
const noteOn = (eventId: string, contact: string) => ({
  source: 'crm-test', eventId, op: 'create', object: 'note', target: { object: 'contact', externalId: contact },
  fields: { hs_note_body: `note for ${eventId}`, hs_timestamp: '2026-11-29T10:00:00Z' },
});
const statuses = (outcomes: Outcome[]) => outcomes.map((o) => o.status);

/** A writer of contacts and a Sync writing notes, on one memory ledger. */
function sharedLedger(h: Harness, options: { now?: () => number; leaseMs?: number } = {}) {
  const ledger = openLedger('memory:');
  const writer = createSync({ adapter: h.adapter, ledger, retry: fast, ...(options.now ? { now: options.now } : {}) });
  const sync = createSync({ adapter: h.adapter, ledger, retry: fast, verifyCreates: 'after-failure', ...options });
  return { ledger, writer, sync };
}

/**
 * A memory ledger on a clock the test moves, a Sync on it with a 1 s lease (`sync`), a writer of
 * contacts through the same ledger, and what a holder on another host leaves: its claim on a
 * note's key (`claimElsewhere`) and, through a ledger of its own, the note itself (`createElsewhere`).
 */
function takeoverSetup(h: Harness) {
  const clock = { at: Date.parse('2026-11-29T10:00:00Z') };
  const now = () => clock.at;
  const { ledger, writer, sync } = sharedLedger(h, { now, leaseMs: 1_000 });
  return {
    clock, ledger, writer, sync,
    async claimElsewhere(note: ReturnType<typeof noteOn>) {
      const p = sync.prepare(note);
      if (!p.ok) throw new Error('bad note');
      await ledger.claim([{ key: p.key, fingerprint: p.fingerprint, leaseMs: 1_000, owner: 'elsewhere 1 1' }], clock.at);
    },
    async createElsewhere(note: ReturnType<typeof noteOn>) {
      const earlier = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
      expect((await earlier.apply(note)).status).toBe('created');
    },
  };
}

describe('notes before their contact (hubspotAdapter over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('costs one contact read while the contact is absent, and is written right after this Sync writes it, with no read', async () => {
    h = await harness('loopback');
    let clock = Date.parse('2026-11-29T10:00:00Z');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure', now: () => clock });
    const reads = () => h.fake.count('contacts/batch/read');

    const first = await sync.apply(noteOn('evt-n1', 'C-1'));
    expect(first.status).toBe('failed');
    expect(first.error?.message).toMatch(/parent contact with ai_external_id=C-1 does not exist/);
    expect(reads()).toBe(1);
    // Retried (as retry-failed or a redelivery would) while held: no request at all.
    for (let i = 0; i < 3; i++) {
      clock += 500;
      expect((await sync.apply(noteOn('evt-n1', 'C-1'))).status).toBe('failed');
    }
    expect(h.fake.count()).toBe(1);

    // This Sync writes the contact: the held note goes out on the next try, without reading it.
    expect((await sync.apply(upsert(1))).status).toBe('created');
    const note = await sync.apply(noteOn('evt-n1', 'C-1'));
    expect(note.status).toBe('created');
    expect(reads()).toBe(1);
    expect(h.fake.count('notes/batch/create')).toBe(1);
    // The failures surely wrote nothing, so the retry was not looked up first.
    expect(h.fake.count('associations')).toBe(0);
    expect(h.fake.records('notes').map((n) => n.properties.crm_upsert_key)).toEqual([note.key]);
    await sync.close();
  });

  it('reads a contact another process wrote once the hold runs out, and reads held contacts for free in a batch that reads anyway', async () => {
    h = await harness('loopback');
    let clock = Date.parse('2026-11-29T10:00:00Z');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure', now: () => clock });
    const other = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const reads = () => h.fake.count('contacts/batch/read');

    expect(statuses(await sync.applyMany([noteOn('evt-a', 'C-1')]))).toEqual(['failed']);
    expect(reads()).toBe(1);
    await other.applyMany([upsert(1), upsert(2)]);
    // Still held: this Sync did not see the write, and the hold has not run out.
    clock += DEFAULT_PARENT_ABSENT_MS - 1;
    expect(statuses(await sync.applyMany([noteOn('evt-a', 'C-1')]))).toEqual(['failed']);
    expect(reads()).toBe(1);
    // A note on a contact not held makes the batch read: the held one rides along in the same read.
    expect(statuses(await sync.applyMany([noteOn('evt-a', 'C-1'), noteOn('evt-b', 'C-2')]))).toEqual(['created', 'created']);
    expect(reads()).toBe(2);
    // And once the hold runs out a held contact is read again.
    expect(statuses(await sync.applyMany([noteOn('evt-c', 'C-3')]))).toEqual(['failed']);
    await other.applyMany([upsert(3)]);
    clock += DEFAULT_PARENT_ABSENT_MS;
    expect(statuses(await sync.applyMany([noteOn('evt-c', 'C-3')]))).toEqual(['created']);
    expect(reads()).toBe(4);
    expect(h.fake.count('notes/batch/create')).toBe(2);
    expect(h.fake.count('associations')).toBe(0);
    expect(h.fake.records('notes')).toHaveLength(3);
    await sync.close();
  });

  it('takes the id of a contact another Sync of the same ledger wrote from the ledger: no contact read', async () => {
    h = await harness('loopback');
    const { writer, sync } = sharedLedger(h);
    expect((await writer.apply(upsert(1))).status).toBe('created');
    h.fake.core.resetLog();
    expect(statuses(await sync.applyMany([noteOn('evt-l1', 'C-1'), noteOn('evt-l2', 'C-1')]))).toEqual(['created', 'created']);
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 1 });
    const contactId = h.fake.records('contacts')[0]!.id;
    expect(h.fake.records('notes').map((n) => n.associations.contacts?.[0]?.id)).toEqual([contactId, contactId]);
    await sync.close();
  });

  it('sends a note HubSpot refused on a ledger id (the contact was deleted since) again with the contact read from HubSpot', async () => {
    h = await harness('loopback');
    const { writer, sync } = sharedLedger(h);
    expect(statuses(await writer.applyMany([upsert(1), upsert(2)]))).toEqual(['created', 'created']);
    const written = new Map(h.fake.records('contacts').map((c) => [c.properties.ai_external_id, c.id]));
    for (const id of written.values()) expect(h.fake.state.crm.remove('contacts', id)).toBe(true);
    // C-1 comes back under a new id, written outside this ledger; C-2 stays deleted.
    const recreated = h.fake.state.crm.seed('contacts', { ai_external_id: 'C-1', email: 'c1@example.test' });
    h.fake.core.resetLog();
    const [onRecreated, onDeleted] = await sync.applyMany([noteOn('evt-d1', 'C-1'), noteOn('evt-d2', 'C-2')]);
    expect(onRecreated!.status).toBe('created');
    expect(onDeleted!.status).toBe('failed');
    expect(onDeleted!.error?.message).toMatch(/parent contact with ai_external_id=C-2 does not exist/);
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 2, 'POST /crm/v3/objects/contacts/batch/read': 1 });
    expect(h.fake.records('notes').map((n) => [n.properties.crm_upsert_key, n.associations.contacts?.[0]?.id])).toEqual([[onRecreated!.key, recreated]]);
    // Surely unwritten: retried once C-2 exists again, it is created without a lookup.
    expect((await writer.apply({ ...upsert(2), eventId: 'evt-c2-again', fields: { email: 'c2@example.org' } })).status).toBe('created');
    h.fake.core.resetLog();
    expect((await sync.apply(noteOn('evt-d2', 'C-2'))).status).toBe('created');
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 1 });
    await sync.close();
  });

  it('looks a taken-over note up again on the contact HubSpot names when the ledger id was refused: no second note', async () => {
    h = await harness('loopback');
    const { clock, writer, sync, claimElsewhere, createElsewhere } = takeoverSetup(h);
    expect((await writer.apply(upsert(1))).status).toBe('created');
    expect(h.fake.state.crm.remove('contacts', h.fake.records('contacts')[0]!.id)).toBe(true);
    const recreated = h.fake.state.crm.seed('contacts', { ai_external_id: 'C-1', email: 'c1@example.test' });
    // An earlier holder on another host claimed the note and created it on the contact as it is now, then went silent.
    const note = noteOn('evt-t1', 'C-1');
    await claimElsewhere(note);
    await createElsewhere(note);
    clock.at += 1_000;
    h.fake.core.resetLog();
    const taken = await sync.apply(note);
    expect(taken.status).toBe('created');
    expect(taken.recordId).toBe(h.fake.records('notes')[0]!.id);
    expect(h.fake.records('notes')).toHaveLength(1);
    expect(h.fake.records('notes')[0]!.associations.contacts).toEqual([{ id: recreated, typeId: 202 }]);
    await sync.close();
  });

  it('fails a taken-over note whose contact a read found absent as surely unwritten: no lookup once the contact is there', async () => {
    h = await harness('loopback');
    const { clock, writer, sync, claimElsewhere } = takeoverSetup(h);
    const note = noteOn('evt-a1', 'C-1');
    await claimElsewhere(note);
    clock.at += 1_000;
    // Taken over: looked up first, but the contact is not there, so nothing can be attached to it.
    const first = await sync.apply(note);
    expect(first.status).toBe('failed');
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/contacts/batch/read': 1 });
    expect((await writer.apply(upsert(1))).status).toBe('created');
    h.fake.core.resetLog();
    expect((await sync.apply(note)).status).toBe('created');
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/notes/batch/create': 1 });
    expect(h.fake.records('notes')).toHaveLength(1);
    await sync.close();
  });

  it('still looks a taken-over note up when its contact was only held absent from an earlier read: no second note', async () => {
    h = await harness('loopback');
    const { clock, sync, claimElsewhere, createElsewhere } = takeoverSetup(h);
    expect((await sync.apply(noteOn('evt-h0', 'C-1'))).status).toBe('failed');
    // The contact appears outside this ledger, and a holder on another host creates a note on it, then goes silent.
    h.fake.state.crm.seed('contacts', { ai_external_id: 'C-1', email: 'c1@example.test' });
    const note = noteOn('evt-h1', 'C-1');
    await claimElsewhere(note);
    await createElsewhere(note);
    // Taken over while C-1 is still held absent: that proves nothing about the earlier holder's write.
    clock.at += 1_000;
    expect((await sync.apply(note)).status).toBe('failed');
    clock.at += DEFAULT_PARENT_ABSENT_MS;
    const taken = await sync.apply(note);
    expect(taken.status).toBe('created');
    expect(h.fake.records('notes')).toHaveLength(1);
    expect(taken.recordId).toBe(h.fake.records('notes')[0]!.id);
    await sync.close();
  });

  it('keeps what a lookup read when a later read of it fails, and reads associations again once a create left', async () => {
    h = await harness('loopback', { faults: { retryAfterSeconds: 0 } });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    expect((await sync.apply(upsert(1))).status).toBe('created');
    // Lost after commit, then the lookup's note read fails: the retried lookup reads only the notes.
    h.fake.core.resetLog();
    h.fake.failNext('lost_response', { endpoint: 'notes/batch/create' });
    h.fake.failNext('server_error', { endpoint: 'objects/notes/batch/read' });
    const kept = await sync.apply(noteOn('evt-k1', 'C-1'));
    expect(kept.status).toBe('created');
    expect(h.fake.counts()).toEqual({
      'POST /crm/v3/objects/notes/batch/create': 1, 'POST /crm/v4/associations/contacts/notes/batch/read': 1, 'POST /crm/v3/objects/notes/batch/read': 2,
    });
    // A 503 that wrote nothing, looked up (nothing attached yet), then a create lost after commit:
    // what the first lookup read is stale, so the second reads the associations again and finds it.
    h.fake.core.resetLog();
    h.fake.failNext('server_error', { endpoint: 'notes/batch/create' });
    h.fake.failNext('lost_response', { endpoint: 'notes/batch/create' });
    const again = await sync.apply(noteOn('evt-k2', 'C-1'));
    expect(again.status).toBe('created');
    expect(h.fake.count('notes/batch/create')).toBe(2);
    expect(h.fake.count('associations/contacts/notes/batch/read')).toBe(2);
    expect(h.fake.records('notes').map((n) => n.properties.crm_upsert_key).sort()).toEqual([kept.key, again.key].sort());
    expect(again.recordId).toBe(h.fake.records('notes').find((n) => n.properties.crm_upsert_key === again.key)!.id);
    await sync.close();
  });

  it('does not look notes up after a failed contact read (nothing was sent), nor again after a 429 once a lookup cleared them', async () => {
    h = await harness('loopback', { faults: { retryAfterSeconds: 0 } });
    const other = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    await other.applyMany([upsert(1), upsert(2)]);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    // Once this Sync has seen the adapter confirm its claims right before a write request, a failure before that point wrote nothing.
    await sync.apply(upsert(3));
    h.fake.core.resetLog();
    h.fake.failNext('reset', { endpoint: 'contacts/batch/read' });
    expect(statuses(await sync.applyMany([noteOn('evt-r1', 'C-1')]))).toEqual(['created']);
    expect(h.fake.counts()).toEqual({ 'POST /crm/v3/objects/contacts/batch/read': 2, 'POST /crm/v3/objects/notes/batch/create': 1 });

    // A 503 after the create left: look it up once; the 429 that follows needs no second lookup.
    h.fake.core.resetLog();
    h.fake.failNext('server_error', { endpoint: 'notes/batch/create' });
    h.fake.failNext('rate_limit', { endpoint: 'notes/batch/create' });
    expect(statuses(await sync.applyMany([noteOn('evt-r2', 'C-2')]))).toEqual(['created']);
    expect(h.fake.count('associations')).toBe(1);
    expect(h.fake.count('notes/batch/create')).toBe(3);
    expect(h.fake.records('notes')).toHaveLength(2);
    expect(new Set(h.fake.records('notes').map((n) => n.properties.crm_upsert_key)).size).toBe(2);
    await sync.close();
  });
});
