import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresLedger } from '../../../src/ledger/postgres/index.js';
import { tables } from '../../../src/ledger/postgres/migrate.js';
import { statements } from '../../../src/ledger/postgres/sql.js';
import { postgresUrl, runId } from '../../helpers/services.js';

const url = await postgresUrl();
const pool = url ? new pg.Pool({ connectionString: url, max: 10 }) : undefined;
const prefixes: string[] = [];
const T0 = Date.UTC(2026, 0, 1);

afterAll(async () => {
  if (!pool) return;
  for (const prefix of prefixes) {
    await pool.query(['entries', 'marks', 'windows', 'meta', 'schema_version'].map((t) => `DROP TABLE IF EXISTS "${prefix}${t}";`).join(''));
  }
  await pool.end();
});

/** The tables as the schema-version-1 library created them, with one completed entry. */
async function versionOneLedger(prefix: string): Promise<void> {
  await pool!.query(`
    CREATE TABLE "${prefix}schema_version" (version integer NOT NULL);
    INSERT INTO "${prefix}schema_version" VALUES (1);
    CREATE TABLE "${prefix}entries" (key text COLLATE "C" PRIMARY KEY, fingerprint text NOT NULL, status text NOT NULL,
      token bigint NOT NULL, lease_until bigint, attempts integer NOT NULL, result json, error json,
      created_at bigint NOT NULL, updated_at bigint NOT NULL, expires_at bigint);
    CREATE TABLE "${prefix}marks" (id text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE "${prefix}windows" (id text PRIMARY KEY, owner text NOT NULL, confirmed boolean NOT NULL, expires_at bigint NOT NULL);
    INSERT INTO "${prefix}entries" VALUES ('done', 'f', 'completed', 7, NULL, 2, '"ok"', NULL, ${T0}, ${T0}, NULL);`);
}

describe.skipIf(!url)('postgresLedger', () => {
  it('migrates tables of the previous schema version in place, with concurrent first uses', async () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    await versionOneLedger(tablePrefix);

    const readOnly = postgresLedger({ pool: pool!, tablePrefix, createSchema: false });
    expect(await readOnly.get('done')).toMatchObject({ status: 'completed', token: 7, owner: null });
    // The batched lookup reads the old table too (no owner column) and answers as get does.
    expect(await readOnly.getMany!(['nope', 'done'])).toEqual([null, await readOnly.get('done')]);

    const ledgers = Array.from({ length: 4 }, () => postgresLedger({ pool: pool!, tablePrefix }));
    const claims = await Promise.all(ledgers.map((l, i) => l.claim([{ key: `k${i}`, fingerprint: 'f', leaseMs: 1000, owner: `w${i}` }], T0)));
    expect(claims.map(([c]) => [c!.outcome, c!.entry.owner])).toEqual([0, 1, 2, 3].map((i) => ['claimed', `w${i}`]));
    expect(await ledgers[0]!.get('done')).toMatchObject({ status: 'completed', result: 'ok', token: 7, owner: null });
    const { rows } = await pool!.query(`SELECT version FROM "${tablePrefix}schema_version"`);
    expect(rows).toEqual([{ version: 2 }]);

    // The floor starts at the highest token the old tables held, so pruning the old entry keeps it counting.
    expect(await ledgers[1]!.prune(T0 + 1, T0 + 1)).toBe(1);
    const [again] = await ledgers[2]!.claim([{ key: 'done', fingerprint: 'f', leaseMs: 1000 }], T0 + 2);
    expect(again).toMatchObject({ outcome: 'claimed', token: 8 });
  });

  it('records the birth of tables from before birth times at the first ask, on its own clock, and keeps it', async () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    await versionOneLedger(tablePrefix);
    expect(await postgresLedger({ pool: pool!, tablePrefix, createSchema: false }).bornAt!()).toBeNull();
    const ledger = postgresLedger({ pool: pool!, tablePrefix });
    await ledger.get('done');
    // Tables of the current version without a birth row (created before birth times were kept).
    await pool!.query(`DELETE FROM "${tablePrefix}meta" WHERE name = 'born_at'`);
    const asked = await ledger.clock!();
    const born = await Promise.all(Array.from({ length: 6 }, () => postgresLedger({ pool: pool!, tablePrefix }).bornAt!()));
    expect(new Set(born).size).toBe(1);
    expect(born[0]).toBeGreaterThanOrEqual(asked);
    expect(born[0]! - asked).toBeLessThan(5000);
    expect(await postgresLedger({ pool: pool!, tablePrefix, createSchema: false }).bornAt!()).toBe(born[0]);
  });

  it('reads its clock without creating its tables', async () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    const ledger = postgresLedger({ pool: pool!, tablePrefix });
    expect(Math.abs((await ledger.clock!()) - Date.now())).toBeLessThan(5000);
    const { rows } = await pool!.query('SELECT to_regclass($1) AS t', [`"${tablePrefix}entries"`]);
    expect(rows[0]!.t).toBeNull();
  });
  it('answers a batched lookup by one primary-key probe per key, never a scan of the table', async () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    const ledger = postgresLedger({ pool: pool!, tablePrefix });
    await ledger.get('migrate');
    // 100,000 completed entries: the size at which a long `key = ANY($1)` is planned as a scan.
    await pool!.query(`INSERT INTO "${tablePrefix}entries" (key, fingerprint, status, token, attempts, result, created_at, updated_at)
      SELECT md5(i::text), 'f', 'completed', 1, 1, '{"status":"created"}', ${T0}, ${T0} FROM generate_series(1, 100000) i`);
    await pool!.query(`ANALYZE "${tablePrefix}entries"`);
    const { rows: picked } = await pool!.query(`SELECT md5(i::text) AS key FROM generate_series(1, 100000, 100) i`);
    const keys = picked.map((r) => String(r.key));
    expect(keys).toHaveLength(1000);

    const { rows } = await pool!.query(`EXPLAIN (FORMAT JSON) ${statements(tables({ tablePrefix }), false).getMany}`, [keys]);
    type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
    const nodes: PlanNode[] = [];
    const walk = (n: PlanNode) => (nodes.push(n), n.Plans?.forEach(walk));
    walk((rows[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
    const onEntries = nodes.filter((n) => n['Relation Name'] === `${tablePrefix}entries`);
    expect(onEntries.map((n) => n['Node Type'])).toEqual(['Index Scan']);
    expect(onEntries[0]!['Index Name']).toBe(`${tablePrefix}entries_pkey`);

    const got = await ledger.getMany!([...keys, 'absent', keys[0]!]);
    expect(got.map((e) => e?.key ?? null)).toEqual([...keys, null, keys[0]]);
    await ledger.close();
  });

  it('locks the entries it settles in key order, as a claim does, so overlapping workers wait instead of deadlocking', async () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    const ledger = postgresLedger({ pool: pool!, tablePrefix });
    const t = `"${tablePrefix}entries"`;
    for (const settle of ['complete', 'fail', 'release', 'renew'] as const) {
      const keys = ['z', 'a'].map((k) => `${settle}-${k}`);
      const claims = await ledger.claim(keys.map((key) => ({ key, fingerprint: 'f', leaseMs: 60_000 })), T0);
      const refs = claims.map((c) => ({ key: c.key, token: c.token! }));
      // Another transaction holds the first key of the input (the last in key order).
      const other = await pool!.connect();
      try {
        await other.query('BEGIN');
        await other.query(`SELECT key FROM ${t} WHERE key = $1 FOR UPDATE`, [keys[0]]);
        const settling = settle === 'complete' ? ledger.complete(refs.map((r) => ({ ...r, result: '"ok"' })), T0 + 1)
          : settle === 'fail' ? ledger.fail(refs.map((r) => ({ ...r, error: '"boom"' })), T0 + 1)
            : settle === 'release' ? ledger.release(refs, T0 + 1) : ledger.renew(refs, 60_000, T0 + 1);
        await new Promise((r) => setTimeout(r, 300));
        // The settle took the earlier key first and now waits for the one held: the earlier key is locked.
        const tried = await other.query('SAVEPOINT s').then(() => other.query(`SELECT key FROM ${t} WHERE key = $1 FOR UPDATE NOWAIT`, [keys[1]]).then(() => 'free', (e: { code?: string }) => e.code));
        expect(tried, settle).toBe('55P03');
        await other.query('ROLLBACK');
        expect(await settling).toEqual([true, true]);
      } finally {
        other.release();
      }
    }
  });
});

