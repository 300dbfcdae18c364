/** The Postgres ledger's options and the one pool method it calls. */

/** The one method of a `pg.Pool` (or `pg.Client`) the ledger calls. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

export interface PostgresTableOptions {
  /** Prefix of the table names (`<prefix>entries`, `marks`, `windows`, `schema_version`). Default `crm_upsert_`. */
  tablePrefix?: string;
  /** Schema holding the tables; created if missing (needs CREATE on the database). Default `public`. */
  schema?: string;
}

export interface PostgresLedgerOptions extends PostgresTableOptions {
  /** `postgres://user:password@host:5432/db`; the ledger owns (and ends) the pool it builds. */
  connectionString?: string;
  /** Or an existing `pg.Pool`; the caller keeps ownership (close() does not end it). */
  pool?: PgQueryable;
  /** Pool size when built from connectionString. Default 10. */
  max?: number;
  /**
   * Create the schema and tables (and migrate them) on first use. Default true. False opens the
   * ledger read-only and creates nothing: a ledger whose tables do not exist reads as empty, and
   * writes throw.
   */
  createSchema?: boolean;
}
