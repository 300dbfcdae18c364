import pg from 'pg';
import { afterAll } from 'vitest';
import { postgresLedger } from '../../src/ledger/postgres.js';
import { POSTGRES_URLS, requireService, runId } from '../helpers/services.js';
import { describeLedgerConformance, describeMultiProcessClaims } from './ledger.suite.js';

const url = await requireService('postgres', async () => {
  const errors: string[] = [];
  for (const candidate of POSTGRES_URLS) {
    const client = new pg.Client({ connectionString: candidate, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return candidate;
    } catch (err) {
      errors.push((err as Error).message);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error(errors.join('; '));
});

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
}, { skip: !url });

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
