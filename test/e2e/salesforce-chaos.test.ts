import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { fronts, harness, statuses, type Front, type Harness } from './salesforce-helpers.js';
import { shuffledDeliveries } from '../helpers/deliveries.js';

const CONTACTS = 350;
const FINAL = new Set(['created', 'updated', 'replayed', 'suppressed']);

/** Every event (a contact upsert and a Task on it) delivered 1-3 times, in a seeded shuffled order. */
function deliveries(seed: number, events: number) {
  return shuffledDeliveries(seed, events).map((e) => {
    const contact = `C-${e % CONTACTS}`;
    return [
      { source: 'chaos', eventId: `evt-${e}`, op: 'upsert', object: 'contact', externalId: contact, fields: { LastName: `from event ${e}`, Email: `${contact}@example.test` } },
      { source: 'chaos', eventId: `evt-${e}`, op: 'create', object: 'task', target: { object: 'contact', externalId: contact }, fields: { Subject: `follow up event ${e}`, Description: `summary of event ${e}` } },
    ];
  });
}

async function run(front: Front, seed: number, events: number) {
  const h = await harness(front, {
    faults: { seed, lostResponse: 0.15, rateLimit: 0.1, serverError: 0.05, reset: 0.03, retryAfterSeconds: 0.2 },
  });
  const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: { retries: 30, minTimeoutMs: 5, maxTimeoutMs: 40 } });
  const outcomes: Outcome[] = [];
  const all = deliveries(seed, events);
  for (let i = 0; i < all.length; i += 40) outcomes.push(...(await sync.applyMany(all.slice(i, i + 40).flat())));
  await sync.close();
  return { h, outcomes, deliveries: all.length };
}

describe.each(fronts)('chaos: Salesforce over %s with lost responses, 429s, 503s and resets', (front) => {
  const harnesses: Harness[] = [];
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.stop();
  });

  it('ends with one contact per external id, one Task per event, and no action lost', async () => {
    const { h, outcomes, deliveries: delivered } = await run(front, 20261129, 500);
    harnesses.push(h);
    expect(outcomes.filter((o) => !FINAL.has(o.status))).toEqual([]);
    expect(outcomes).toHaveLength(delivered * 2);

    const contacts = h.fake.records('Contact');
    expect(contacts).toHaveLength(CONTACTS);
    expect(new Set(contacts.map((c) => c.AI_External_Id__c)).size).toBe(CONTACTS);

    const tasks = h.fake.records('Task');
    expect(tasks).toHaveLength(500);
    expect(new Set(tasks.map((t) => t.AI_Idempotency_Key__c)).size).toBe(500);
    const contactIdByExt = new Map(contacts.map((c) => [c.AI_External_Id__c, c.Id]));
    for (const t of tasks) {
      const event = Number(/event (\d+)/.exec(String(t.Subject))![1]);
      expect(t.WhoId).toBe(contactIdByExt.get(`C-${event % CONTACTS}`));
    }

    const faults = h.fake.core.faultCounts();
    expect(faults.lost_response).toBeGreaterThan(0);
    expect(faults.rate_limit).toBeGreaterThan(0);
    expect(faults.server_error).toBeGreaterThan(0);
    expect(faults.reset).toBeGreaterThan(0);
    // One adapter call is one request: jsforce added none of its own.
    expect(h.adapter.apiCalls()).toBe(h.fake.count());
    console.log(JSON.stringify({ front, requests: h.fake.count(), faults, outcomes: statuses(outcomes) }));
  });

  it('repeats itself for the same seed', async () => {
    const a = await run(front, 7, 120);
    harnesses.push(a.h);
    const b = await run(front, 7, 120);
    harnesses.push(b.h);
    expect(b.outcomes.map((o) => o.status)).toEqual(a.outcomes.map((o) => o.status));
    expect(b.h.fake.core.log.map((e) => [e.endpoint, e.fault])).toEqual(a.h.fake.core.log.map((e) => [e.endpoint, e.fault]));
    expect(b.h.fake.records('Task').map((t) => t.AI_Idempotency_Key__c)).toEqual(a.h.fake.records('Task').map((t) => t.AI_Idempotency_Key__c));
  });
});
