import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, postgresLedger } from '../../src/ledger/postgres/index.js';
import { postgresUrl, runId } from '../helpers/services.js';
import { ledgerConformance } from '../../src/ledger/conformance/index.js';
import { describeMultiProcessClaims } from './ledger-multi-process.js';

const url = await postgresUrl();

const pool = url ? new pg.Pool({ connectionString: url, max: 20 }) : undefined;
const prefixes: string[] = [];
const schemas: string[] = [];
let last = '';

afterAll(async () => {
  if (!pool) return;
  for (const prefix of prefixes) {
    await pool.query(['entries', 'marks', 'windows', 'meta', 'schema_version'].map((t) => `DROP TABLE IF EXISTS "${prefix}${t}";`).join(''));
  }
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

/** Schemas and tables named by a schema or a table prefix, as information_schema lists them. */
async function existing(schema: string, tablePrefix: string): Promise<string[]> {
  const { rows } = await pool!.query(`
    SELECT 'schema ' || schema_name AS name FROM information_schema.schemata WHERE schema_name = $1
    UNION ALL
    SELECT 'table ' || table_schema || '.' || table_name FROM information_schema.tables
      WHERE table_schema = $1 OR starts_with(table_name, $2)`, [schema, tablePrefix]);
  return rows.map((r) => String(r.name));
}

let fresh = { schema: '', tablePrefix: '' };
ledgerConformance('postgres', async () => {
  last = `${runId()}_`;
  prefixes.push(last);
  return postgresLedger({ pool: pool!, tablePrefix: last });
}, {
  describe, it, expect, beforeEach, afterEach,
  skip: !url,
  clock: true,
  durable: true,
  readOnly: {
    openLast: async () => postgresLedger({ pool: pool!, tablePrefix: last, createSchema: false }),
    openFresh: async () => {
      fresh = { schema: `${runId()}_s`, tablePrefix: `${runId()}_` };
      schemas.push(fresh.schema);
      return postgresLedger({ pool: pool!, ...fresh, createSchema: false });
    },
    created: () => existing(fresh.schema, fresh.tablePrefix),
  },
});

describeMultiProcessClaims('postgres', {
  backend: 'postgres',
  factory: 'postgresLedger',
  // A fresh prefix: the four children race on the first-use migration too.
  options: () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    return { connectionString: url, tablePrefix };
  },
  open: async (options) => postgresLedger({ pool: pool!, tablePrefix: String(options.tablePrefix) }),
  skip: !url,
});

// docs/ledger.md promises that once migrate() ran, the application role needs no DDL rights.
describe.skipIf(!url)('postgres ledger with DML-only rights', () => {
  it('claims and completes after the owner migrated', async () => {
    const tablePrefix = `${runId()}_`;
    prefixes.push(tablePrefix);
    const role = `${tablePrefix}app`;
    await migrate(pool!, { tablePrefix });
    await pool!.query(`CREATE ROLE "${role}" LOGIN;
      GRANT USAGE ON SCHEMA public TO "${role}";
      GRANT SELECT, INSERT, UPDATE, DELETE ON "${tablePrefix}entries", "${tablePrefix}marks", "${tablePrefix}windows" TO "${role}";
      GRANT SELECT, UPDATE ON "${tablePrefix}meta" TO "${role}";
      GRANT SELECT ON "${tablePrefix}schema_version" TO "${role}";`);
    const appUrl = new URL(url!);
    appUrl.username = role;
    const ledger = postgresLedger({ connectionString: appUrl.href, tablePrefix });
    try {
      const [claim] = await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000 }], 1);
      expect(claim).toMatchObject({ outcome: 'claimed', token: 1 });
      expect(await ledger.complete([{ key: 'k', token: 1, result: 'ok', mark: { id: 'm', value: 'v' }, retentionMs: 0 }], 2)).toEqual([true]);
      expect(await ledger.prune(3)).toBe(1);
      expect((await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000 }], 4))[0]).toMatchObject({ outcome: 'claimed', token: 2 });
    } finally {
      await ledger.close();
      await pool!.query(`DROP OWNED BY "${role}"; DROP ROLE "${role}"`);
    }
  });
});
