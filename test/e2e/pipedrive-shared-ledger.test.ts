/**
 * Two workers (each its own adapter and its own connection to one Postgres ledger) apply the same
 * 200 persons and 200 notes, each in its own order, at once, into a Pipedrive whose search index
 * lags 2 s: the ledger's claim on each key serializes them, so Pipedrive holds 200 persons and 200
 * notes. In CI an unreachable Postgres fails this file.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { postgresUrl, runId } from '../helpers/services.js';
import { externalIds, harness, statuses } from './pipedrive-helpers.js';

const N = 200;
const url = await postgresUrl();

const actions = Array.from({ length: N }, (_, n) => [
  { source: 'pd-shared', eventId: `p-${n}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `Person ${n}` } },
  { source: 'pd-shared', eventId: `n-${n}`, occurredAt: '2026-12-05T10:00:00Z', op: 'create', object: 'note', target: { object: 'contact', externalId: `P-${n}` }, fields: { content: `Call ${n}` } },
]).flat();

describe('two workers on one Postgres ledger (fakePipedrive over loopback)', () => {
  it.skipIf(url === undefined)('apply the same 200 persons and 200 notes at once: 200 and 200 in Pipedrive', async () => {
    const tablePrefix = `${runId()}_`;
    const h = await harness({ searchLagMs: 2_000 });
    const retry = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
    const a = createSync({ adapter: h.adapter, ledger: openLedger(url!, { tablePrefix }), retry, concurrency: 2 });
    const b = createSync({ adapter: h.another(), ledger: openLedger(url!, { tablePrefix }), retry, concurrency: 2 });
    try {
      // Persons first in both (a note needs its person), each worker in its own order.
      const persons = actions.filter((x) => x.op === 'upsert');
      const notes = actions.filter((x) => x.op === 'create');
      const run = async (sync: typeof a, reversed: boolean) => {
        const order = <T,>(xs: T[]) => (reversed ? [...xs].reverse() : xs);
        const first = await sync.applyMany(order(persons));
        const second = await sync.applyMany(order(notes));
        return [...first, ...second];
      };
      const [ra, rb] = await Promise.all([run(a, false), run(b, true)]);
      // Between them, each key was created by one worker at most (the other saw it in flight or replayed it).
      expect([...ra, ...rb].filter((o) => o.status === 'created').length).toBeLessThanOrEqual(2 * N);
      // What was in flight elsewhere (or waited for a person in flight) finishes on a second pass; then everything is a replay.
      await a.applyMany(actions);
      expect(statuses(await b.applyMany(actions))).toEqual({ replayed: 2 * N });
      const ids = externalIds(h.fake, 'person');
      expect(ids).toHaveLength(N);
      expect(new Set(ids).size).toBe(N);
      expect(h.fake.notes()).toHaveLength(N);
      expect(h.fake.count('POST /api/v2/persons')).toBe(N);
    } finally {
      await a.close();
      await b.close();
      await h.stop();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE tablename LIKE $1', [`${tablePrefix}%`]);
        for (const { tablename } of rows) await client.query(`DROP TABLE IF EXISTS "${tablename}" CASCADE`);
      } finally {
        await client.end();
      }
    }
  }, 120_000);
});
