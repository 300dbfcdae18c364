/**
 * Activities that arrive before their parent, and lookups only where a write may have happened,
 * counted on the fake HubSpot's request log: a note whose contact is absent costs one contact read
 * until that contact is written or the hold runs out; a note on a contact this Sync just wrote
 * needs no read; a failure before the create left, or after a lookup cleared the notes, calls for
 * no (further) lookup.
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
