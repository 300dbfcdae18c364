import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { fronts, harness, type Harness } from './hubspot-helpers.js';
import { shuffledDeliveries } from '../helpers/deliveries.js';

const EVENTS = 500;
const CONTACTS = 350;
const FINAL = new Set(['created', 'updated', 'replayed', 'suppressed']);
/** The first front's run, to show the second (same seed) is identical: seeded and repeatable. */
let previous: unknown;

/** Every event (a contact upsert and a note on it) delivered 1-3 times, in a seeded shuffled order. */
function deliveries(seed: number) {
  return shuffledDeliveries(seed, EVENTS).map((e) => {
    const contact = `C-${e % CONTACTS}`;
    return [
      { source: 'chaos', eventId: `evt-${e}`, op: 'upsert', object: 'contact', externalId: contact, fields: { email: `${contact}@example.test`, lastname: `from event ${e}` } },
      { source: 'chaos', eventId: `evt-${e}`, op: 'create', object: 'note', target: { object: 'contact', externalId: contact }, fields: { hs_note_body: `summary of event ${e}`, hs_timestamp: '2026-11-29T10:00:00Z' } },
    ];
  });
}

async function run(front: 'nock' | 'loopback', seed: number) {
  const h = await harness(front, {
    faults: { seed, lostResponse: 0.15, rateLimit: 0.1, serverError: 0.05, reset: 0.03, retryAfterSeconds: 0.2 },
  });
  // A third of all requests fault, and recovering a note after an ambiguous create takes three
  // reads before the create: an attempt often fails, so allow many (each one is cheap here).
  const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: { retries: 40, minTimeoutMs: 5, maxTimeoutMs: 40 } });
  const outcomes: Outcome[] = [];
  const all = deliveries(seed);
  for (let i = 0; i < all.length; i += 40) outcomes.push(...(await sync.applyMany(all.slice(i, i + 40).flat())));
  await sync.close();
  return { h, outcomes, deliveries: all.length };
}

describe.each(fronts)('chaos: HubSpot over %s with lost responses, 429s, 503s and resets', (front) => {
  let h: Harness | undefined;
  afterEach(() => h?.stop());

  it('ends with one contact per external id, one note per event, and no action lost', async () => {
    const result = await run(front, 20261129);
    h = result.h;
    const { outcomes } = result;
    const bad = outcomes.filter((o) => !FINAL.has(o.status));
    expect(bad).toEqual([]);
    expect(outcomes).toHaveLength(result.deliveries * 2);

    const contacts = h.fake.records('contacts');
    const externalIds = contacts.map((c) => c.properties.ai_external_id);
    expect(new Set(externalIds).size).toBe(contacts.length);
    expect(contacts).toHaveLength(CONTACTS);

    const notes = h.fake.records('notes');
    const keys = notes.map((n) => n.properties.crm_upsert_key);
    expect(new Set(keys).size).toBe(notes.length);
    expect(notes).toHaveLength(EVENTS);
    const contactIdByExt = new Map(contacts.map((c) => [c.properties.ai_external_id, c.id]));
    for (const n of notes) {
      const event = Number(/event (\d+)/.exec(n.properties.hs_note_body!)![1]);
      expect(n.associations.contacts).toEqual([{ id: contactIdByExt.get(`C-${event % CONTACTS}`), typeId: 202 }]);
    }

    const faults = h.fake.core.faultCounts();
    expect(faults.lost_response).toBeGreaterThan(0);
    expect(faults.rate_limit).toBeGreaterThan(0);
    expect(faults.server_error).toBeGreaterThan(0);
    expect(faults.reset).toBeGreaterThan(0);
    const summary = { requests: h.fake.count(), faults, outcomes: outcomes.map((o) => o.status) };
    if (previous) expect(summary).toEqual(previous);
    previous = summary;
  });
});
