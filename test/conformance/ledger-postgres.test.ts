import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, postgresLedger } from '../../src/ledger/postgres.js';
import { postgresUrl, runId } from '../helpers/services.js';
import { describeLedgerConformance, describeMultiProcessClaims } from './ledger.suite.js';

const url = await postgresUrl();

const pool = url ? new pg.Pool({ connectionString: url, max: 20 }) : undefined;
const prefixes: string[] = [];

afterAll(async () => {
  if (!pool) return;
  for (const prefix of prefixes) {
    await pool.query(['entries', 'marks', 'windows', 'schema_version'].map((t) => `DROP TABLE IF EXISTS "${prefix}${t}";`).join(''));
  }
  await pool.end();
});

describeLedgerConformance('postgres', async () => {
  const tablePrefix = `${runId()}_`;
  prefixes.push(tablePrefix);
  return postgresLedger({ pool: pool!, tablePrefix });
}, { skip: !url, clock: true, durable: true });

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
      GRANT SELECT ON "${tablePrefix}schema_version" TO "${role}";`);
    const appUrl = new URL(url!);
    appUrl.username = role;
    const ledger = postgresLedger({ connectionString: appUrl.href, tablePrefix });
    try {
      const [claim] = await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000 }], 1);
      expect(claim).toMatchObject({ outcome: 'claimed', token: 1 });
      expect(await ledger.complete([{ key: 'k', token: 1, result: 'ok', mark: { id: 'm', value: 'v' } }], 2)).toEqual([true]);
    } finally {
      await ledger.close();
      await pool!.query(`DROP OWNED BY "${role}"; DROP ROLE "${role}"`);
    }
  });
});
