/**
 * Four workers (four Syncs, each with its own HubSpot client and ledger connection) share one
 * ledger and one fakeHubSpot whose writes commit 200 ms after they arrive and which loses 10% of
 * its responses after committing. Workers 0 and 1 each upsert half of 400 contacts; once both have
 * claimed theirs, workers 2 and 3 each apply all 400 notes on them, in their own order. So every
 * note meets its contact written, or being written by a live worker (whose response may have been
 * lost: it holds its claim while it sends again). Each note worker's first note create also loses
 * its response, so that batch is sent again while contacts are settled around it: a contact read
 * missing at the start of the batch has often been written by the end. No such note may end
 * `failed`; they wait (`in_flight`) and are created once on their contact. Five notes on contacts
 * nobody writes fail as parent-missing, as ever. The same on Redis, Postgres and SQLite; in CI an
 * unreachable Postgres or Redis fails this file.
 */
import { describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { seededRandom } from '../../adapters/testing/fake-http.js';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import type { CrmAdapter } from '../../src/adapter.js';
import { PARENT_NOT_FOUND } from '../../src/engine/defer.js';
import { PARENT_IN_FLIGHT } from '../../src/engine/parent-held.js';
import { createSync, openLedger, type Outcome, type Sync } from '../../src/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { postgresLedgerUnderTest, redisLedgerUnderTest, sqliteLedgerUnderTest, type LedgerUnderTest } from '../helpers/services.js';
import { objects, TOKEN } from './hubspot-helpers.js';

const N = 400;
const ORPHANS = 5;
const WORKERS = 4;
const CHUNK = 200;
const MAX_ROUNDS = 30;
const DONE = new Set(['created', 'updated', 'unchanged', 'replayed']);

const contact = (n: number) => ({ source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@example.test` } });
const note = (n: number, parent = `C-${n}`) => ({
  source: 'crm-test', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: parent },
  fields: { hs_note_body: `note ${n}`, hs_timestamp: '2026-11-29T10:00:00Z' },
});
const contacts = Array.from({ length: N }, (_, i) => contact(i));
const notes = Array.from({ length: N }, (_, i) => note(i));
/** Notes on contacts no worker writes: their parent really does not exist. */
const orphans = Array.from({ length: ORPHANS }, (_, i) => note(N + i, `NOBODY-${i}`));

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

const ledgers: [string, () => Promise<LedgerUnderTest | undefined>][] = [
  ['redis', redisLedgerUnderTest],
  ['postgres', postgresLedgerUnderTest],
  ['sqlite', async () => sqliteLedgerUnderTest()],
];

describe.each(ledgers)('four workers on one %s ledger, writes committing late and responses lost', (_name, open) => {
  it('no note on a contact a live worker is writing ends failed; every note is created once on its contact', async (ctx) => {
    const ledger = await open();
    if (ledger === undefined) return ctx.skip();
    const seed = 20261206;
    const fake = fakeHubSpot({ token: TOKEN, faults: { seed, lostResponse: 0.1, latencyMs: 200 } });
    // Each note worker's first note create commits and loses its response: its batch sends it again.
    fake.failNext('lost_response', { endpoint: 'notes/batch/create', times: 2 });
    const front = await fake.open('loopback');
    const writing = [0, 1].map(() => {
      let reached!: () => void;
      return { at: new Promise<void>((resolve) => (reached = resolve)), reached };
    });
    const worker = (w: number): Sync => {
      const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: front.url, objects, rateBudget: unlimitedRateBudget });
      // The contact workers say when their first upsert leaves: every contact of theirs is claimed by then.
      const signalled: CrmAdapter = w < 2 ? { ...adapter, upsertRecords: async (...args) => (writing[w]!.reached(), adapter.upsertRecords(...args)) } : adapter;
      return createSync({ adapter: signalled, ledger: openLedger(ledger.url, ledger.options), leaseMs: 3_000, retry: { retries: 12, minTimeoutMs: 100, maxTimeoutMs: 1_000 } });
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    const seen: Outcome[] = [];
    const random = seededRandom(seed);
    const order = shuffle([...contacts], random);
    // Workers 0 and 1 each upsert half the contacts in one call; workers 2 and 3 each apply every note, in their own order.
    const shares = [order.slice(0, N / 2), order.slice(N / 2), shuffle([...notes, ...orphans], random), shuffle([...notes, ...orphans], random)];
    const isOrphan = (action: unknown) => (action as { target?: { externalId: string } }).target?.externalId.startsWith('NOBODY-') === true;
    const run = async (w: number) => {
      if (w >= 2) await Promise.all(writing.map((g) => g.at));
      const sync = workers[w]!;
      let pending: unknown[] = shares[w]!;
      const chunk = w < 2 ? N / 2 : CHUNK;
      for (let round = 0; round < MAX_ROUNDS && pending.length > 0; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, 250));
        const again: unknown[] = [];
        for (let i = 0; i < pending.length; i += chunk) {
          const part = pending.slice(i, i + chunk);
          const outcomes = await sync.applyMany(part);
          seen.push(...outcomes);
          outcomes.forEach((o, j) => {
            if (!DONE.has(o.status) && !isOrphan(part[j])) again.push(part[j]);
          });
        }
        pending = again;
      }
      expect(pending, `worker ${w} finished`).toEqual([]);
    };
    try {
      await Promise.all(workers.map((_, w) => run(w)));

      const orphanKeys = new Set(orphans.map((o) => (workers[0]!.prepare(o) as { key: string }).key));
      const failed = seen.filter((o) => o.status === 'failed');
      // Every failure is a note whose contact nobody writes, failed as parent-missing.
      expect(failed.filter((o) => !orphanKeys.has(o.key)).map((o) => `${o.key}: ${o.error?.message}`)).toEqual([]);
      for (const o of failed) expect(o.error?.vendorCode).toBe(PARENT_NOT_FOUND);
      expect(new Set(failed.map((o) => o.key))).toEqual(orphanKeys);
      // Notes did meet their contacts being written: they waited (in_flight), then were created.
      expect(seen.filter((o) => o.error?.vendorCode === PARENT_IN_FLIGHT).length).toBeGreaterThan(0);

      const stored = fake.records('contacts');
      expect(stored).toHaveLength(N);
      expect(new Set(stored.map((r) => r.properties.ai_external_id)).size).toBe(N);
      const created = fake.records('notes');
      const noteKeys = notes.map((n) => (workers[0]!.prepare(n) as { key: string }).key);
      expect(created).toHaveLength(N);
      expect(new Set(created.map((r) => r.properties.crm_upsert_key))).toEqual(new Set(noteKeys));
      const idOf = new Map(stored.map((r) => [r.properties.ai_external_id, r.id]));
      for (const r of created) {
        const n = Number(/note (\d+)/.exec(r.properties.hs_note_body!)![1]);
        expect(r.associations.contacts?.map((a) => a.id)).toEqual([idOf.get(`C-${n}`)]);
      }
      // Responses were lost on contact upserts and on note creates alike.
      const lost = (endpoint: string) => fake.core.log.filter((e) => e.fault === 'lost_response' && e.endpoint.includes(endpoint)).length;
      expect(lost('contacts/batch/upsert')).toBeGreaterThan(0);
      expect(lost('notes/batch/create')).toBeGreaterThanOrEqual(2);
      const entries = await workers[0]!.ledger.list();
      expect(entries.filter((e) => e.status !== 'completed').map((e) => e.key).sort()).toEqual([...orphanKeys].sort());
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await front.close();
      await ledger.drop();
    }
  }, 60_000);
});
