/**
 * The seams on real services: two workers whose clocks are ten minutes apart share a Postgres or
 * Redis ledger, and a Redis ledger that loses its keys between runs. The CRM is the fake HubSpot
 * behind the real SDK; assertions are on its records and request counts.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSync } from '../../src/engine/index.js';
import { postgresLedger } from '../../src/ledger/postgres/index.js';
import { redisLedger } from '../../src/ledger/redis/index.js';
import type { LedgerBackend } from '../../src/ledger/types.js';
import { postgresUrl, redisUrl, runId } from '../helpers/services.js';
import { harness, type Harness } from './hubspot-helpers.js';

const pgUrl = await postgresUrl();
const rUrl = await redisUrl();
const redis = rUrl ? new Redis(rUrl) : undefined;
const run = runId();
const opened: LedgerBackend[] = [];
let n = 0;

const ledgers: [string, boolean, () => LedgerBackend][] = [
  ['postgres', !pgUrl, () => postgresLedger({ connectionString: pgUrl!, tablePrefix: `${run}_${n++}_` })],
  ['redis', !redis, () => redisLedger({ client: redis!, prefix: `{${run}}:${n++}:` })],
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});
afterAll(async () => {
  for (const l of opened) await l.close().catch(() => undefined);
  if (pgUrl) {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    const { rows } = await client.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE tablename LIKE $1`, [`${run}%`]);
    for (const r of rows) await client.query(`DROP TABLE IF EXISTS "${r.tablename}" CASCADE`);
    const fns = await client.query<{ proname: string }>(`SELECT proname FROM pg_proc WHERE proname LIKE $1`, [`${run}%`]);
    for (const f of fns.rows) await client.query(`DROP FUNCTION IF EXISTS "${f.proname}" CASCADE`);
    await client.end();
  }
  if (redis) {
    const keys = await redis.keys(`{${run}}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

const upsert = { source: 'zendesk', eventId: 'evt-c1', op: 'upsert', object: 'contact', externalId: 'C-1', fields: { email: 'c1@example.com' } };
const note = (eventId: string, body = 'AI summary') => ({
  source: 'zendesk', eventId, op: 'create', object: 'note', target: { object: 'contact', externalId: 'C-1' }, fields: { hs_note_body: body, hs_timestamp: '2026-11-29T10:00:00Z' },
});

describe.each(ledgers)('%s ledger', (_name, skip, open) => {
  it.skipIf(skip)('keeps a live claim held when another worker\'s clock is ten minutes ahead: one note', async () => {
    h = await harness('loopback', { faults: { latencyMs: 400 } });
    const ledger = open();
    opened.push(ledger);
    const fast = { minTimeoutMs: 5, maxTimeoutMs: 20 };
    const behind = createSync({ adapter: h.adapter, ledger, leaseMs: 5_000, retry: fast, now: () => Date.now() - 10 * 60_000 });
    const ahead = createSync({ adapter: h.adapter, ledger, leaseMs: 5_000, retry: fast, now: () => Date.now() + 10 * 60_000 });
    expect((await behind.apply(upsert)).status).toBe('created');
    const first = behind.apply(note('evt-skew', 'first wording'));
    await new Promise((r) => setTimeout(r, 300));
    expect((await ahead.apply(note('evt-skew', 'second wording'))).status).toBe('in_flight');
    expect((await first).status).toBe('created');
    expect((await ahead.apply(note('evt-skew', 'third wording'))).status).toBe('replayed');
    expect(h.fake.records('notes')).toHaveLength(1);
    expect(h.fake.count('notes/batch/create')).toBe(1);
  }, 30_000);
});

describe('a Redis ledger that loses its keys between runs', () => {
  it.skipIf(!redis)('finds the note a redelivery would duplicate (verifyCreates auto on a non-durable Redis)', async () => {
    h = await harness('loopback');
    const prefix = `{${run}}:lost:`;
    const ledger = redisLedger({ client: redis!, prefix });
    opened.push(ledger);
    const sync = createSync({ adapter: h.adapter, ledger, retry: { minTimeoutMs: 5, maxTimeoutMs: 20 } });
    await sync.applyMany([upsert, note('evt-lost')]);
    const keys = await redis!.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis!.del(...keys); // a restart without AOF, an eviction, a FLUSHDB
    const again = await sync.applyMany([upsert, note('evt-lost', 'a rewritten summary')]);
    // the contact is upserted again (its unchanged mark went with the keys); the note is found, not re-created
    expect(again.map((o) => o.status)).toEqual(['updated', 'created']);
    expect(h.fake.records('notes')).toHaveLength(1);
    expect(h.fake.records('contacts')).toHaveLength(1);
    expect(h.fake.count('notes/batch/create')).toBe(1);
  }, 30_000);
});
