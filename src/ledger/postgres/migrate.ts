/** The ledger's tables: their names from the options, and the migration to this schema version. */
import { ConfigError, LedgerError } from '../../errors.js';
import type { PgQueryable, PostgresTableOptions } from './options.js';

/**
 * 2: entries.owner and the token floor in `<prefix>meta`. `marks.prior` (the holder a claim moved a
 * holder mark from) is an addition a version 2 library ignores: added in place, version unchanged.
 */
const SCHEMA_VERSION = 2;
const IDENT = /^[a-z_][a-z0-9_]{0,40}$/;

export interface Tables { entries: string; marks: string; windows: string; meta: string; version: string; lockKey: string; schema: string; prefix: string }

export function tables(options: PostgresTableOptions): Tables {
  const prefix = options.tablePrefix ?? 'crm_upsert_';
  const schema = options.schema ?? 'public';
  if (!IDENT.test(schema)) throw new ConfigError(`postgres ledger schema "${schema}" must match ${IDENT}`);
  if (prefix !== '' && !IDENT.test(prefix)) throw new ConfigError(`postgres ledger tablePrefix "${prefix}" must match ${IDENT}`);
  const t = (name: string) => `"${schema}"."${prefix}${name}"`;
  return { entries: t('entries'), marks: t('marks'), windows: t('windows'), meta: t('meta'), version: t('schema_version'), lockKey: `crm-upsert-sync:${schema}.${prefix}`, schema, prefix };
}

/**
 * Create the ledger tables if missing and bring older ones to this version (idempotent, safe to
 * run from several processes at once).
 */
export async function migrate(pool: PgQueryable, options: PostgresTableOptions = {}): Promise<void> {
  const t = tables(options);
  // Read-only when the tables are current, so a role with only SELECT/INSERT/UPDATE/DELETE can run.
  const present = await pool.query(`SELECT to_regclass($1) IS NOT NULL AS present, EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = $2 AND table_name = $3 AND column_name = 'prior') AS prior`, [t.version, t.schema, `${t.prefix}marks`]);
  const row = present.rows[0] as { present?: boolean; prior?: boolean } | undefined;
  if (row?.present === true && row.prior === true && ((await currentVersion(pool, t)) ?? 0) >= SCHEMA_VERSION) return;
  // One simple-protocol query runs as one implicit transaction, so the xact lock serialises
  // concurrent first uses (CREATE TABLE IF NOT EXISTS alone races on the catalog).
  await pool.query(`
    SELECT pg_advisory_xact_lock(hashtext('${t.lockKey}'));
    ${t.schema === 'public' ? '' : `CREATE SCHEMA IF NOT EXISTS "${t.schema}";`}
    CREATE TABLE IF NOT EXISTS ${t.version} (version integer NOT NULL);
    CREATE TABLE IF NOT EXISTS ${t.entries} (
      key text COLLATE "C" PRIMARY KEY,
      fingerprint text NOT NULL,
      status text NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
      token bigint NOT NULL,
      lease_until bigint,
      attempts integer NOT NULL,
      result json,
      error json,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      expires_at bigint,
      owner text
    );
    ALTER TABLE ${t.entries} ADD COLUMN IF NOT EXISTS owner text;
    CREATE INDEX IF NOT EXISTS "${t.prefix}entries_expires_at" ON ${t.entries} (expires_at) WHERE expires_at IS NOT NULL;
    CREATE INDEX IF NOT EXISTS "${t.prefix}entries_status_key" ON ${t.entries} (status, key);
    CREATE TABLE IF NOT EXISTS ${t.marks} (id text PRIMARY KEY, value text NOT NULL, prior text);
    ALTER TABLE ${t.marks} ADD COLUMN IF NOT EXISTS prior text;
    CREATE TABLE IF NOT EXISTS ${t.windows} (id text PRIMARY KEY, owner text NOT NULL, confirmed boolean NOT NULL, expires_at bigint NOT NULL);
    CREATE TABLE IF NOT EXISTS ${t.meta} (name text PRIMARY KEY, value bigint NOT NULL);
    -- Tokens of entries pruned before the floor existed are unknown; the highest live one is a safe start.
    INSERT INTO ${t.meta} (name, value) SELECT 'token_floor', coalesce(max(token), 0) FROM ${t.entries}
      ON CONFLICT (name) DO NOTHING;
    INSERT INTO ${t.meta} (name, value) VALUES ('born_at', floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
      ON CONFLICT (name) DO NOTHING;
    INSERT INTO ${t.version} (version) SELECT ${SCHEMA_VERSION} WHERE NOT EXISTS (SELECT 1 FROM ${t.version});
    UPDATE ${t.version} SET version = ${SCHEMA_VERSION} WHERE version < ${SCHEMA_VERSION};
  `);
  await currentVersion(pool, t);
}

async function currentVersion(pool: PgQueryable, t: Tables): Promise<number | null> {
  const { rows } = await pool.query(`SELECT max(version) AS v FROM ${t.version}`);
  const v = rows[0]?.v === null || rows[0]?.v === undefined ? null : Number(rows[0].v);
  if (v !== null && v > SCHEMA_VERSION) {
    throw new LedgerError(`postgres ledger schema version ${v} is newer than this library (${SCHEMA_VERSION})`);
  }
  return v;
}
