/**
 * The Postgres ledger (`crm-upsert-sync/ledger/postgres`) on `pg`, for workers on several
 * machines. Every batch is one statement: a claim is `INSERT … ON CONFLICT … DO UPDATE … WHERE`
 * over `unnest(...)`, combined with reading the rows it did not take.
 */
import pg from 'pg';
import { ConfigError, LedgerError, registerSecret } from '../errors.js';
import type {
  ClaimRequest, ClaimResult, CompleteRequest, EntryStatus, FailRequest, Json, LedgerBackend, LedgerEntry,
  ListOptions, TokenRef, WindowAcquireRequest, WindowSettleRequest, WindowSlot,
} from './types.js';
import { ClaimAction, decideClaim } from './decide-claim.js';

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

/** 2: entries.owner and the token floor in `<prefix>meta`. */
const SCHEMA_VERSION = 2;
const IDENT = /^[a-z_][a-z0-9_]{0,40}$/;

interface Tables { entries: string; marks: string; windows: string; meta: string; version: string; lockKey: string; schema: string; prefix: string }

function tables(options: PostgresTableOptions): Tables {
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
  const present = await pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [t.version]);
  if (present.rows[0]?.present === true && ((await currentVersion(pool, t)) ?? 0) >= SCHEMA_VERSION) return;
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
    CREATE TABLE IF NOT EXISTS ${t.marks} (id text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE IF NOT EXISTS ${t.windows} (id text PRIMARY KEY, owner text NOT NULL, confirmed boolean NOT NULL, expires_at bigint NOT NULL);
    CREATE TABLE IF NOT EXISTS ${t.meta} (name text PRIMARY KEY, value bigint NOT NULL);
    -- Tokens of entries pruned before the floor existed are unknown; the highest live one is a safe start.
    INSERT INTO ${t.meta} (name, value) SELECT 'token_floor', coalesce(max(token), 0) FROM ${t.entries}
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

/** The entry columns, in the order of the claim's RETURNING; `owner` is an expression for a version 1 table read read-only. */
const cols = (owner = 'owner') =>
  `key, fingerprint, status, token, lease_until, attempts, result::text AS result, error::text AS error, created_at, updated_at, expires_at, ${owner} AS owner`;
const COLS = cols();
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const json = (v: unknown): Json | null => (v === null || v === undefined ? null : (JSON.parse(String(v)) as Json));

const toEntry = (row: Record<string, unknown>): LedgerEntry => ({
  key: String(row.key),
  fingerprint: String(row.fingerprint),
  status: row.status as EntryStatus,
  token: num(row.token),
  leaseUntil: numOrNull(row.lease_until),
  attempts: num(row.attempts),
  result: json(row.result),
  error: json(row.error),
  createdAt: num(row.created_at),
  updatedAt: num(row.updated_at),
  owner: row.owner === null || row.owner === undefined ? null : String(row.owner),
  expiresAt: numOrNull(row.expires_at),
});

const pick = (row: Record<string, unknown>, acquired: boolean): WindowSlot => ({
  acquired, owner: String(row.owner), confirmed: row.confirmed === true, expiresAt: num(row.expires_at),
});

/** What a claim that did not take `entry` reports, or undefined when decideClaim says it should have: the row it read is stale. */
function notTaken(entry: LedgerEntry, r: ClaimRequest, now: number): ClaimResult['outcome'] | undefined {
  // The floor only sets a fresh token, never whether a claim takes the key.
  const decision = decideClaim(entry, r, now, 0);
  return decision.action === ClaimAction.answer ? decision.outcome : undefined;
}

/** Postgres error codes a read-only ledger that was never created answers with: undefined table, schema. */
const ABSENT = new Set(['42P01', '3F000']);

/** The ledger on Postgres; tables are created on first use (unless `createSchema` is false). */
export function postgresLedger(options: PostgresLedgerOptions): LedgerBackend {
  const t = tables(options);
  const readOnly = options.createSchema === false;
  let pool: PgQueryable;
  let owned: pg.Pool | undefined;
  if (options.pool) {
    pool = options.pool;
  } else if (options.connectionString) {
    try {
      registerSecret(decodeURIComponent(new URL(options.connectionString).password));
    } catch {
      // not a URL (key=value form): pg reports problems itself
    }
    owned = new pg.Pool({ connectionString: options.connectionString, max: options.max ?? 10 });
    // An idle client losing its connection must not crash the process; the next query reports it.
    owned.on('error', () => undefined);
    pool = owned;
  } else {
    throw new ConfigError('postgresLedger needs a connectionString or a pool');
  }

  let migrated: Promise<void> | undefined;
  const ready = () => {
    migrated ??= migrate(pool, options).catch((err: unknown) => {
      migrated = undefined;
      throw err;
    });
    return migrated;
  };
  const query = async (what: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        if (!readOnly) await ready();
        return (await pool.query(text, values)).rows;
      } catch (err) {
        const code = (err as { code?: string }).code;
        // Overlapping batches can deadlock on row locks; Postgres aborts one, which is safe to rerun.
        if ((code === '40P01' || code === '40001') && attempt < 4) continue;
        if (err instanceof LedgerError) throw err;
        throw new LedgerError(`postgres ledger ${what} failed: ${(err as Error).message}`, { cause: err });
      }
    }
  };
  const run = async (what: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> => {
    if (readOnly) {
      throw new LedgerError(`postgres ledger ${t.schema}.${t.prefix}* is opened read-only (createSchema: false): ${what} refused`);
    }
    return query(what, text, values);
  };
  const read = async (what: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> => {
    try {
      return await query(what, text, values);
    } catch (err) {
      if (readOnly && ABSENT.has(String(((err as Error).cause as { code?: unknown } | undefined)?.code))) return [];
      throw err;
    }
  };
  // Read-only opens may meet a version 1 table (no owner column): to_jsonb reads it either way.
  const readCols = readOnly ? cols(`to_jsonb(e) ->> 'owner'`) : COLS;

  // decideClaim in SQL: the conflict WHERE takes exactly the rows it answers fresh, take over or
  // retry failed for; the conformance suite's decideClaim table holds this statement to it.
  const claimSql = `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[], $5::text[], $7::text[])
        WITH ORDINALITY AS i(key, fingerprint, lease_ms, retry_failed, mark_id, owner, ord)
    ),
    floor AS (SELECT coalesce(max(value), 0) AS v FROM ${t.meta} WHERE name = 'token_floor'),
    taken AS (
      INSERT INTO ${t.entries} AS e (key, fingerprint, status, token, lease_until, attempts, created_at, updated_at, owner)
      -- Counting from this statement's snapshot row too: a prune that deletes it (and raises the
      -- floor) after the snapshot was taken must not send the token back.
      SELECT DISTINCT ON (i.key) i.key, i.fingerprint, 'in_progress',
        greatest((SELECT v FROM floor), coalesce((SELECT s.token FROM ${t.entries} s WHERE s.key = i.key), 0)) + 1,
        $6::bigint + i.lease_ms, 1, $6::bigint, $6::bigint, i.owner
        FROM input i ORDER BY i.key, i.ord
      ON CONFLICT (key) DO UPDATE SET
        fingerprint = excluded.fingerprint,
        status = 'in_progress',
        token = CASE WHEN e.expires_at <= $6::bigint THEN greatest(e.token, (SELECT v FROM floor)) + 1 ELSE e.token + 1 END,
        lease_until = excluded.lease_until,
        attempts = CASE WHEN e.expires_at <= $6::bigint THEN 1 ELSE e.attempts + 1 END,
        result = CASE WHEN e.expires_at <= $6::bigint THEN NULL ELSE e.result END,
        error = CASE WHEN e.expires_at <= $6::bigint THEN NULL ELSE e.error END,
        created_at = CASE WHEN e.expires_at <= $6::bigint THEN excluded.created_at ELSE e.created_at END,
        updated_at = excluded.updated_at,
        owner = excluded.owner,
        expires_at = NULL
      WHERE (e.status <> 'in_progress' AND e.expires_at <= $6::bigint)
        OR (e.fingerprint = excluded.fingerprint AND (
          (e.status = 'in_progress' AND coalesce(e.lease_until, 0) <= $6::bigint)
          OR (e.status = 'failed' AND EXISTS (
            SELECT 1 FROM input r WHERE r.key = e.key AND r.retry_failed AND r.fingerprint = e.fingerprint))))
      RETURNING e.key, e.fingerprint, e.status, e.token, e.lease_until, e.attempts, e.result::text AS result,
        e.error::text AS error, e.created_at, e.updated_at, e.expires_at, e.owner, true AS taken
    ),
    rows AS (
      SELECT * FROM taken
      UNION ALL
      SELECT ${COLS}, false FROM ${t.entries}
        WHERE key IN (SELECT key FROM input) AND key NOT IN (SELECT key FROM taken)
    )
    SELECT i.ord, r.*, m.value AS mark
      FROM input i LEFT JOIN rows r ON r.key = i.key LEFT JOIN ${t.marks} m ON m.id = i.mark_id
      ORDER BY i.ord`;

  const claimBatch = async (reqs: ClaimRequest[], now: number): Promise<(ClaimResult | undefined)[]> => {
    const rows = await run('claim', claimSql, [
      reqs.map((r) => r.key), reqs.map((r) => r.fingerprint), reqs.map((r) => Math.round(r.leaseMs)),
      reqs.map((r) => r.retryFailed === true), reqs.map((r) => r.markId ?? null), now, reqs.map((r) => r.owner ?? null),
    ]);
    const seen = new Set<string>();
    return reqs.map((r, i) => {
      const row = rows[i]!;
      const first = !seen.has(r.key);
      seen.add(r.key);
      // A row committed by a concurrent claim after this statement's snapshot is not visible to
      // it: undefined sends the key round again instead of guessing.
      if (row.key === null || row.key === undefined) return undefined;
      const entry = toEntry(row);
      const base = { key: r.key, entry, ...(row.mark === null || row.mark === undefined ? {} : { mark: String(row.mark) }) };
      if (row.taken === true && first) return { ...base, outcome: 'claimed', token: entry.token };
      if (row.taken === true) return { ...base, outcome: entry.fingerprint === r.fingerprint ? 'in_progress' : 'conflict' };
      const outcome = notTaken(entry, r, now);
      return outcome === undefined ? undefined : { ...base, outcome };
    });
  };

  const claim = async (reqs: ClaimRequest[], now: number): Promise<ClaimResult[]> => {
    const results = await claimBatch(reqs, now);
    for (let round = 0; round < 5; round++) {
      const pending = results.flatMap((r, i) => (r === undefined ? [i] : []));
      if (pending.length === 0) return results as ClaimResult[];
      const again = await claimBatch(pending.map((i) => reqs[i]!), now);
      pending.forEach((i, j) => { results[i] = again[j]; });
    }
    throw new LedgerError('postgres ledger claim did not settle after 5 rounds of concurrent changes');
  };

  /**
   * Only the first request per (key, token) in one batch is sent, as a sequential run would
   * answer its repeats: the first one changes the entry, so the repeats are refused.
   */
  const pair = (key: unknown, token: unknown) => `${String(key)}\u0000${String(token)}`;
  const once = <R extends TokenRef>(reqs: R[]): { unique: R[]; answer: (rows: Record<string, unknown>[]) => boolean[] } => {
    const firsts = new Map<string, number>();
    reqs.forEach((r, i) => { if (!firsts.has(pair(r.key, r.token))) firsts.set(pair(r.key, r.token), i); });
    return {
      unique: [...firsts.values()].map((i) => reqs[i]!),
      answer: (rows) => {
        const done = new Set(rows.map((row) => pair(row.key, row.token)));
        return reqs.map((r, i) => firsts.get(pair(r.key, r.token)) === i && done.has(pair(r.key, r.token)));
      },
    };
  };

  const update = (set: string, extraInput = '', extraWhere = '') => `
    WITH input AS (SELECT * FROM unnest($1::text[], $2::bigint[]${extraInput}) AS i(key, token${extraInput ? ', v' : ''}))
    UPDATE ${t.entries} e SET ${set} FROM input i
      WHERE e.key = i.key AND e.token = i.token AND e.status = 'in_progress'${extraWhere}
      RETURNING e.key, e.token`;

  /**
   * A fenced update that also stores each accepted item's mark, in one statement. Parameters:
   * $1 keys, $2 tokens, then one array per `columns` entry, the mark ids and values, and now.
   */
  const fencedWithMark = (columns: [name: string, type: string][], set: string) => {
    const n = columns.length;
    return `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::bigint[], ${columns.map(([, type], k) => `$${k + 3}::${type}[]`).join(', ')}, $${n + 3}::text[], $${n + 4}::text[])
        WITH ORDINALITY AS i(key, token, ${columns.map(([name]) => name).join(', ')}, mark_id, mark_value, ord)
    ),
    done AS (
      UPDATE ${t.entries} e SET ${set.replaceAll('$now', `$${n + 5}::bigint`)}
      FROM input i WHERE e.key = i.key AND e.token = i.token AND e.status = 'in_progress'
      RETURNING e.key, e.token
    ),
    marked AS (
      INSERT INTO ${t.marks} (id, value)
      SELECT DISTINCT ON (i.mark_id) i.mark_id, i.mark_value FROM input i JOIN done d ON d.key = i.key AND d.token = i.token
        WHERE i.mark_id IS NOT NULL ORDER BY i.mark_id, i.ord DESC
      ON CONFLICT (id) DO UPDATE SET value = excluded.value
    )
    SELECT key, token FROM done`;
  };
  const completeSql = fencedWithMark([['result', 'text'], ['retention_ms', 'bigint']],
    `status = 'completed', result = i.result::json, error = NULL, lease_until = NULL, updated_at = $now, expires_at = $now + i.retention_ms`);
  const failSql = fencedWithMark([['error', 'text']],
    `status = 'failed', error = i.error::json, lease_until = NULL, updated_at = $now`);

  // Requests with ttl 0 (probes) never insert; a probe ends its own owner's pending hold, as
  // extending it to now would, and an expired slot, unless the same batch takes that slot.
  const acquireSql = `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS i(id, owner, ttl_ms, ord)
    ),
    taken AS (
      INSERT INTO ${t.windows} AS w (id, owner, confirmed, expires_at)
      SELECT DISTINCT ON (id) id, owner, false, $4::bigint + ttl_ms FROM input WHERE ttl_ms > 0 ORDER BY id, ord
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, confirmed = false, expires_at = excluded.expires_at
      WHERE w.expires_at <= $4::bigint OR (w.owner = excluded.owner AND NOT w.confirmed)
      RETURNING w.id, w.owner, w.confirmed, w.expires_at, true AS taken
    ),
    probed AS (
      DELETE FROM ${t.windows} w USING input i
      WHERE i.ttl_ms <= 0 AND w.id = i.id AND (w.expires_at <= $4::bigint OR (w.owner = i.owner AND NOT w.confirmed))
        AND NOT EXISTS (SELECT 1 FROM input j WHERE j.id = i.id AND j.ttl_ms > 0)
      RETURNING w.id
    ),
    rows AS (
      SELECT * FROM taken
      UNION ALL
      SELECT id, owner, confirmed, expires_at, false FROM ${t.windows}
        WHERE id IN (SELECT id FROM input) AND id NOT IN (SELECT id FROM taken) AND id NOT IN (SELECT id FROM probed)
    )
    SELECT i.owner AS wanted, i.ttl_ms, r.owner, r.confirmed, r.expires_at, r.taken
      FROM input i LEFT JOIN rows r ON r.id = i.id ORDER BY i.ord`;

  const acquireBatch = async (reqs: WindowAcquireRequest[], now: number): Promise<(WindowSlot | undefined)[]> => {
    const rows = await run('windowAcquire', acquireSql, [
      reqs.map((r) => r.id), reqs.map((r) => r.owner), reqs.map((r) => Math.round(r.ttlMs)), now,
    ]);
    return rows.map((row) => {
      const live = row.owner !== null && row.owner !== undefined && num(row.expires_at) > now;
      if (row.taken === true) return pick(row, row.owner === row.wanted);
      if (live && (row.owner !== row.wanted || row.confirmed === true)) return pick(row, row.owner === row.wanted);
      if (num(row.ttl_ms) <= 0) return { acquired: true, owner: String(row.wanted), confirmed: false, expiresAt: now + num(row.ttl_ms) };
      // Free or this owner's pending hold, yet not taken: a concurrent change after this statement's snapshot.
      return undefined;
    });
  };

  return {
    name: 'postgres',
    claim: async (reqs, now) => (reqs.length === 0 ? [] : claim(reqs, now)),

    complete: async (reqs: CompleteRequest[], now) => {
      const { unique, answer } = once(reqs);
      if (unique.length === 0) return [];
      return answer(await run('complete', completeSql, [
        unique.map((r) => r.key), unique.map((r) => r.token), unique.map((r) => JSON.stringify(r.result)),
        unique.map((r) => (r.retentionMs === null || r.retentionMs === undefined ? null : Math.round(r.retentionMs))),
        unique.map((r) => r.mark?.id ?? null), unique.map((r) => r.mark?.value ?? null), now,
      ]));
    },

    fail: async (reqs: FailRequest[], now) => {
      const { unique, answer } = once(reqs);
      if (unique.length === 0) return [];
      return answer(await run('fail', failSql, [
        unique.map((r) => r.key), unique.map((r) => r.token), unique.map((r) => JSON.stringify(r.error)),
        unique.map((r) => r.mark?.id ?? null), unique.map((r) => r.mark?.value ?? null), now,
      ]));
    },

    release: async (reqs: TokenRef[], now) => {
      const { unique, answer } = once(reqs);
      if (unique.length === 0) return [];
      return answer(await run('release', update('lease_until = $3::bigint, updated_at = $3::bigint'), [
        unique.map((r) => r.key), unique.map((r) => r.token), now,
      ]));
    },

    renew: async (reqs: TokenRef[], leaseMs, now) => {
      const { unique, answer } = once(reqs);
      if (unique.length === 0) return [];
      return answer(await run('renew', update('lease_until = $3::bigint + $4::bigint, updated_at = $3::bigint', '', ' AND e.lease_until > $3::bigint'), [
        unique.map((r) => r.key), unique.map((r) => r.token), now, Math.round(leaseMs),
      ]));
    },

    get: async (key) => {
      const rows = await read('get', `SELECT ${readCols} FROM ${t.entries} e WHERE key = $1`, [key]);
      return rows[0] ? toEntry(rows[0]) : null;
    },

    list: async (opts: ListOptions = {}) => {
      const rows = await read('list', `SELECT ${readCols} FROM ${t.entries} e
        WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR key > $2)
        ORDER BY key LIMIT $3`, [opts.status ?? null, opts.after ?? null, opts.limit === undefined ? null : Math.max(0, Math.floor(opts.limit))]);
      return rows.map(toEntry);
    },

    prune: async (now, olderThan) => {
      const rows = await run('prune', `
        WITH gone AS (
          DELETE FROM ${t.entries}
          WHERE (expires_at IS NOT NULL AND expires_at <= $1::bigint)
             OR ($2::bigint IS NOT NULL AND status IN ('completed', 'failed') AND updated_at < $2::bigint)
          RETURNING token
        ),
        slots AS (DELETE FROM ${t.windows} WHERE expires_at <= $1::bigint),
        raised AS (
          UPDATE ${t.meta} SET value = greatest(value, (SELECT max(token) FROM gone))
          WHERE name = 'token_floor' AND EXISTS (SELECT 1 FROM gone)
        )
        SELECT count(*) AS n FROM gone`, [now, olderThan ?? null]);
      return num(rows[0]?.n ?? 0);
    },

    windowAcquire: async (reqs, now) => {
      if (reqs.length === 0) return [];
      const slots = await acquireBatch(reqs, now);
      for (let round = 0; round < 5; round++) {
        const pending = slots.flatMap((s, i) => (s === undefined ? [i] : []));
        if (pending.length === 0) return slots as WindowSlot[];
        const again = await acquireBatch(pending.map((i) => reqs[i]!), now);
        pending.forEach((i, j) => { slots[i] = again[j]; });
      }
      throw new LedgerError('postgres ledger windowAcquire did not settle after 5 rounds of concurrent changes');
    },

    windowSettle: async (reqs: WindowSettleRequest[], now) => {
      if (reqs.length === 0) return;
      await run('windowSettle', `
        WITH input AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) AS i(id, owner, ttl_ms)),
        confirmed AS (
          UPDATE ${t.windows} w SET confirmed = true, expires_at = $4::bigint + i.ttl_ms FROM input i
          WHERE w.id = i.id AND w.owner = i.owner AND i.ttl_ms IS NOT NULL RETURNING w.id
        ),
        released AS (
          DELETE FROM ${t.windows} w USING input i WHERE w.id = i.id AND w.owner = i.owner AND i.ttl_ms IS NULL RETURNING w.id
        )
        SELECT (SELECT count(*) FROM confirmed) + (SELECT count(*) FROM released) AS n`, [
        reqs.map((r) => r.id), reqs.map((r) => r.owner), reqs.map((r) => (r.ttlMs === null ? null : Math.round(r.ttlMs))), now,
      ]);
    },

    clock: async () => {
      try {
        const { rows } = await pool.query('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now');
        return num(rows[0]?.now);
      } catch (err) {
        throw new LedgerError(`postgres ledger clock failed: ${(err as Error).message}`, { cause: err });
      }
    },

    isDurable: async () => true,

    close: async () => {
      const p = owned;
      owned = undefined;
      await p?.end();
    },
  };
}
