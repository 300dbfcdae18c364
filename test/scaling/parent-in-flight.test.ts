/**
 * Four workers (four Syncs, each with its own HubSpot client and Redis connection) apply the same
 * 20 contacts and 20 notes on them against one fakeHubSpot, sharing a real Redis ledger. Worker 0
 * holds every contact's upsert while its request waits (a gate before the CRM); workers 1-3 meet
 * those contacts missing in the CRM: no note is reported `failed`, each is `in_flight` (the first
 * claimer of each says its parent is being written), nothing is written under a held contact, and
 * once worker 0 wrote the contacts the workers' retries create every note once. In CI an
 * unreachable Redis fails this file.
 */
import { describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import type { CrmAdapter } from '../../src/adapter.js';
import { PARENT_IN_FLIGHT } from '../../src/engine/parent-held.js';
import { createSync, openLedger, type Outcome, type Sync } from '../../src/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { objects, TOKEN } from '../e2e/hubspot-helpers.js';
import { dropRedisKeys, runId } from '../helpers/services.js';
import { redisUrl } from './services.js';

const url = await redisUrl();
const N = 20;
const MAX_ROUNDS = 20;

const contact = (n: number) => ({ source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@example.test` } });
const note = (n: number) => ({
  source: 'crm-test', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `C-${n}` },
  fields: { hs_note_body: `note ${n}`, hs_timestamp: '2026-11-29T10:00:00Z' },
});
const contacts = Array.from({ length: N }, (_, i) => contact(i));
const notes = Array.from({ length: N }, (_, i) => note(i));
const DONE = new Set(['created', 'updated', 'unchanged', 'replayed']);


describe('four workers on one Redis ledger, a note whose contact another worker is writing', () => {
  it.skipIf(url === undefined)('reports in_flight, never failed, and a retry creates it once the contact is written: 20 contacts, 20 notes, no duplicate', async () => {
    const fake = fakeHubSpot({ token: TOKEN });
    const front = await fake.open('loopback');
    const prefix = `{${runId()}}:`;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let atGate!: () => void;
    const reached = new Promise<void>((resolve) => (atGate = resolve));
    const worker = (gated: boolean): Sync => {
      const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: front.url, objects, rateBudget: unlimitedRateBudget });
      // Worker 0's upsert request waits here, its claims held and renewed, until the gate opens.
      const held: CrmAdapter = gated ? { ...adapter, upsertRecords: async (...args) => (atGate(), await gate, adapter.upsertRecords(...args)) } : adapter;
      return createSync({ adapter: held, ledger: openLedger(url!, { keyPrefix: prefix }), leaseMs: 30_000, retry: { minTimeoutMs: 5, maxTimeoutMs: 50 } });
    };
    const workers = [worker(true), worker(false), worker(false), worker(false)];
    const seen: Outcome[][] = [[], [], [], []];
    const apply = async (w: number, actions: readonly unknown[]) => {
      const outcomes = await workers[w]!.applyMany(actions);
      seen[w]!.push(...outcomes);
      return outcomes;
    };
    try {
      const writing = apply(0, contacts);
      await reached;
      // Each in its own order: notes first, contacts first, interleaved.
      const orders = [[...notes, ...contacts], [...contacts, ...notes], contacts.flatMap((c, i) => [notes[i]!, c])];
      const firstRound = await Promise.all(orders.map((order, j) => apply(j + 1, order)));

      for (const [j, outcomes] of firstRound.entries()) expect(outcomes.map((o) => o.status), `worker ${j + 1}`).toEqual(orders[j]!.map(() => 'in_flight'));
      // Every note's first claimer found its contact missing and held: that is what it says.
      const parentHeld = new Set(firstRound.flat().filter((o) => o.error?.vendorCode === PARENT_IN_FLIGHT).map((o) => o.key));
      const noteKeys = notes.map((n) => (workers[1]!.prepare(n) as { key: string }).key);
      expect([...parentHeld].sort()).toEqual([...noteKeys].sort());
      expect(await workers[1]!.ledger.list({ status: 'failed' })).toEqual([]);
      expect(fake.count('batch/upsert') + fake.count('notes/batch/create')).toBe(0);

      open();
      expect((await writing).map((o) => o.status)).toEqual(contacts.map(() => 'created'));
      // The three retry what they did not finish, as a scheduled re-run would.
      let pending = orders.map((order) => [...order]);
      for (let round = 0; round < MAX_ROUNDS && pending.some((p) => p.length > 0); round++) {
        const results = await Promise.all(pending.map((p, j) => (p.length > 0 ? apply(j + 1, p) : Promise.resolve([]))));
        pending = pending.map((p, j) => p.filter((_, i) => !DONE.has(results[j]![i]!.status)));
        if (pending.some((p) => p.length > 0)) await new Promise((r) => setTimeout(r, 50));
      }
      expect(pending.map((p) => p.length)).toEqual([0, 0, 0]);
      expect((await apply(0, notes)).map((o) => o.status)).toEqual(notes.map(() => 'replayed'));

      const all = seen.flat();
      expect(all.filter((o) => o.status === 'failed')).toEqual([]);
      expect(all.filter((o) => o.status === 'created')).toHaveLength(2 * N);
      const stored = fake.records('contacts');
      expect(new Set(stored.map((r) => r.properties.ai_external_id)).size).toBe(N);
      expect(stored).toHaveLength(N);
      const created = fake.records('notes');
      expect(created).toHaveLength(N);
      expect(new Set(created.map((r) => r.properties.crm_upsert_key))).toEqual(new Set(noteKeys));
      // Each note hangs on its own contact.
      const idOf = new Map(stored.map((r) => [r.properties.ai_external_id, r.id]));
      for (const r of created) {
        const n = Number(/note (\d+)/.exec(r.properties.hs_note_body!)![1]);
        expect(r.associations.contacts?.map((a) => a.id)).toEqual([idOf.get(`C-${n}`)]);
      }
      // One upsert of the contacts in all; at most one note create per retrying worker; no other write.
      expect(Object.keys(fake.counts()).filter((e) => /upsert|create/.test(e)).sort()).toEqual(['POST /crm/v3/objects/contacts/batch/upsert', 'POST /crm/v3/objects/notes/batch/create']);
      expect(fake.count('contacts/batch/upsert')).toBe(1);
      expect(fake.count('notes/batch/create')).toBeGreaterThanOrEqual(1);
      expect(fake.count('notes/batch/create')).toBeLessThanOrEqual(3);
      expect((await workers[1]!.ledger.list()).map((e) => e.status)).toEqual(Array.from({ length: 2 * N }, () => 'completed'));
    } finally {
      open();
      await Promise.all(workers.map((w) => w.close()));
      await front.close();
      await dropRedisKeys(prefix);
    }
  }, 60_000);
});
