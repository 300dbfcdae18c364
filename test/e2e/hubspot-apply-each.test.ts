/**
 * A walk over a list walked before (a restarted worker, a sync run again after a crash), counted
 * on the fake HubSpot's request log: most of it is completed, and what is left between (notes that
 * failed, notes a dead holder may have created) is spread through it. `applyEach` gathers what is
 * left into full batches (the taken-over notes in batches of their own: one key lookup for all of
 * them), where chunks of the list each send their own create and lookup.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const CONTACTS = 250;
const upsert = (n: number) => ({ source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@example.test` } });
const note = (n: number) => ({
  source: 'crm-test', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `C-${n}` },
  fields: { hs_note_body: `note ${n}`, hs_timestamp: '2026-11-29T10:00:00Z' },
});
/** Every tenth note failed as parent-missing (its contact came later); every tenth from the fifth was held by a process that died. */
const failedBefore = (n: number) => n % 10 === 0;
const heldByDead = (n: number) => n % 10 === 5;
const list = Array.from({ length: CONTACTS }, (_, n) => [upsert(n), note(n)]).flat();

/**
 * The state the earlier run left in one memory ledger: every contact and most notes completed,
 * 25 notes failed (surely unwritten), 25 claimed by a holder whose lease has run out (one of them
 * created in HubSpot before it died). Returns a fresh Sync on that ledger (the restarted worker)
 * with the fake's log cleared.
 */
async function walkedBefore(h: Harness) {
  const clock = { at: Date.parse('2026-11-29T10:00:00Z') };
  const now = () => clock.at;
  const ledger = openLedger('memory:');
  const earlier = createSync({ adapter: h.adapter, ledger, retry: fast, verifyCreates: 'after-failure', now });
  const notes = Array.from({ length: CONTACTS }, (_, n) => n);
  expect(new Set((await earlier.applyMany(notes.filter(failedBefore).map(note))).map((o) => o.status))).toEqual(new Set(['failed']));
  for (const n of notes.filter(heldByDead)) {
    const p = earlier.prepare(note(n));
    if (!p.ok) throw new Error('bad note');
    await ledger.claim([{ key: p.key, fingerprint: p.fingerprint, leaseMs: 1_000, owner: 'elsewhere 1 1' }], clock.at);
  }
  const rest = list.filter((a) => a.op === 'upsert' || !(failedBefore(Number(a.eventId.slice(5))) || heldByDead(Number(a.eventId.slice(5)))));
  expect(new Set((await earlier.applyMany(rest)).map((o) => o.status))).toEqual(new Set(['created']));
  // The holder created one of them before it died (through a ledger of its own: this one never heard).
  expect((await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply(note(5))).status).toBe('created');
  clock.at += 2_000;
  h.fake.core.resetLog();
  return createSync({ adapter: h.adapter, ledger, retry: fast, verifyCreates: 'after-failure', leaseMs: 1_000, now });
}

/** The notes in the fake, by key: each exactly once. */
function expectEveryNoteOnce(h: Harness, outcomes: Outcome[]) {
  const keys = h.fake.records('notes').map((n) => n.properties.crm_upsert_key);
  expect(keys.length).toBe(CONTACTS);
  expect(new Set(keys).size).toBe(CONTACTS);
  expect(new Set(keys)).toEqual(new Set(outcomes.filter((_, i) => list[i]!.op === 'create').map((o) => o.key)));
}

describe('applyEach over a list walked before (hubspotAdapter over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('sends what is left between the completed actions in full batches, with one key lookup', async () => {
    h = await harness('loopback');
    const sync = await walkedBefore(h);
    const outcomes: Outcome[] = [];
    let steps = 0;
    for await (const settled of sync.applyEach(list, { batchSize: 100 })) {
      steps += 1;
      for (const { index, outcome } of settled) {
        expect(outcomes[index]).toBeUndefined();
        outcomes[index] = outcome;
      }
    }
    expect(outcomes.filter(Boolean).length).toBe(list.length);
    const left = list.flatMap((a, i) => (a.op === 'create' && (failedBefore(i >> 1) || heldByDead(i >> 1)) ? [i] : []));
    expect(left.length).toBe(50);
    for (const i of left) expect(outcomes[i]!.status).toBe('created');
    expect(outcomes.filter((o) => o.status === 'replayed').length).toBe(list.length - 50);
    // Five lookups of 100 lines, one call for the 25 that failed, one for the 25 taken over.
    expect(steps).toBe(7);
    // The contacts' ids come from the ledger (no read). The 25 that failed surely unwritten are
    // created in one request; the 25 taken over are looked up in one association read (and the
    // one found in one note read), the other 24 created in one request.
    expect(h.fake.counts()).toEqual({
      'POST /crm/v4/associations/contacts/notes/batch/read': 1,
      'POST /crm/v3/objects/notes/batch/read': 1,
      'POST /crm/v3/objects/notes/batch/create': 2,
    });
    expectEveryNoteOnce(h, outcomes);
    await sync.close();
  });

  it('sends them in a lookup and a create per chunk when the list is cut in chunks of applyMany', async () => {
    h = await harness('loopback');
    const sync = await walkedBefore(h);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < list.length; i += 100) outcomes.push(...(await sync.applyMany(list.slice(i, i + 100))));
    expect(outcomes.filter((o) => o.status === 'created').length).toBe(50);
    expect(h.fake.count('notes/batch/create')).toBe(5);
    expect(h.fake.count('associations')).toBe(5);
    expectEveryNoteOnce(h, outcomes);
    await sync.close();
  });
});
