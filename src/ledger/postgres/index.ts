/**
 * The Postgres ledger (`crm-upsert-sync/ledger/postgres`) on `pg`, for workers on several
 * machines. Every batch is one statement: a claim is `INSERT … ON CONFLICT … DO UPDATE … WHERE`
 * over `unnest(...)`, combined with reading the rows it did not take.
 *
 * Needs the optional peer `pg`: importing this entry without it throws a ConfigError naming the
 * package and the install command, as `openLedger('postgres://…')` does.
 *
 * Role files: options.ts, ledger.ts (the backend), sql.ts (its statements), migrate.ts (tables and versions).
 */

export type { PgQueryable, PostgresLedgerOptions, PostgresTableOptions } from './options.js';
export { postgresLedger } from './ledger.js';
export { migrate } from './migrate.js';
