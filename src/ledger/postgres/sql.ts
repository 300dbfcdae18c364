/**
 * The statements of the Postgres ledger, one per batch operation, over the tables `t` names.
 * Parameters are arrays (one element a request) unnested in the statement.
 */
import type { Tables } from './migrate.js';

/** The entry columns, in the order of the claim's RETURNING; `owner` is an expression for a version 1 table read read-only. */
export const entryColumns = (owner = 'owner') =>
  `key, fingerprint, status, token, lease_until, attempts, result::text AS result, error::text AS error, created_at, updated_at, expires_at, ${owner} AS owner`;

export function statements(t: Tables, readOnly: boolean) {
  const COLS = entryColumns();
  // Read-only opens may meet a version 1 table (no owner column): to_jsonb reads it either way.
  const readCols = readOnly ? entryColumns(`to_jsonb(e) ->> 'owner'`) : COLS;

  // decideClaim in SQL: the conflict WHERE takes exactly the rows it answers fresh, take over or
  // retry failed for; the conformance suite's decideClaim table holds this statement to it.
  const claimSql = `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[], $5::text[], $7::text[], $8::text[])
        WITH ORDINALITY AS i(key, fingerprint, lease_ms, retry_failed, mark_id, owner, holds, ord)
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
    -- A taken key's first request names what it writes (holds); the SELECT below still reads the
    -- marks as they were before this statement. The key the mark named (prior) is read under the
    -- row's lock, as last committed: a claim that took it a moment ago, after this statement's
    -- snapshot (even one that created the mark), is seen, and its entry read again by the caller.
    held AS (
      INSERT INTO ${t.marks} AS mk (id, value)
      SELECT DISTINCT ON (i.holds) i.holds, i.key FROM input i JOIN taken k ON k.key = i.key
        WHERE i.holds IS NOT NULL AND i.ord = (SELECT min(j.ord) FROM input j WHERE j.key = i.key)
        ORDER BY i.holds, i.ord DESC
      ON CONFLICT (id) DO UPDATE SET value = excluded.value, prior = mk.value
      RETURNING mk.id, mk.prior
    ),
    rows AS (
      SELECT * FROM taken
      UNION ALL
      SELECT ${COLS}, false FROM ${t.entries}
        WHERE key IN (SELECT key FROM input) AND key NOT IN (SELECT key FROM taken)
    )
    -- The holder a taken claim's holds mark named before the batch, with its entry where the
    -- statement's snapshot has it (not when it was claimed after the snapshot was taken).
    SELECT i.ord, r.*, m.value AS mark, h.prior AS holder_key, he.status AS holder_status, he.lease_until AS holder_lease
      FROM input i LEFT JOIN rows r ON r.key = i.key LEFT JOIN ${t.marks} m ON m.id = i.mark_id
        LEFT JOIN held h ON h.id = i.holds LEFT JOIN ${t.entries} he ON he.key = h.prior
      ORDER BY i.ord`;

  // Every statement that writes several entries locks them in key order, as the claim's insert
  // does: two workers settling and claiming overlapping keys then wait for each other instead of
  // deadlocking (each would otherwise lock in its own join order).
  const lockInKeyOrder = `locked AS (
      SELECT e.key FROM ${t.entries} e JOIN input i ON e.key = i.key AND e.token = i.token
        WHERE e.status = 'in_progress' ORDER BY e.key FOR UPDATE OF e
    )`;

  const update = (set: string, extraInput = '', extraWhere = '') => `
    WITH input AS (SELECT * FROM unnest($1::text[], $2::bigint[]${extraInput}) AS i(key, token${extraInput ? ', v' : ''})),
    ${lockInKeyOrder}
    UPDATE ${t.entries} e SET ${set} FROM input i
      WHERE e.key = i.key AND e.token = i.token AND e.status = 'in_progress'${extraWhere}
        AND e.key IN (SELECT key FROM locked)
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
    ${lockInKeyOrder},
    done AS (
      UPDATE ${t.entries} e SET ${set.replaceAll('$now', `$${n + 5}::bigint`)}
      FROM input i WHERE e.key = i.key AND e.token = i.token AND e.status = 'in_progress'
        AND e.key IN (SELECT key FROM locked)
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

  // decideWindow in SQL. Requests with ttl 0 (probes) never insert; a probe ends its own owner's pending hold, as
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

  return {
    claim: claimSql,
    complete: completeSql,
    fail: failSql,
    release: update('lease_until = $3::bigint, updated_at = $3::bigint'),
    renew: update('lease_until = $3::bigint + $4::bigint, updated_at = $3::bigint', '', ' AND e.lease_until > $3::bigint'),
    note: update('result = i.v::json, updated_at = $4::bigint', ', $3::text[]'),
    get: `SELECT ${readCols} FROM ${t.entries} e WHERE key = $1`,
    // Not `key = ANY($1)`: for a long array the planner prices each element as a filter and may
    // scan the whole table; a set from unnest is joined to the primary key, one probe per key.
    getMany: `SELECT ${readCols} FROM ${t.entries} e WHERE key IN (SELECT unnest($1::text[]))`,
    heldBy: `SELECT i.ord, ${readCols} FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord)
      JOIN ${t.marks} m ON m.id = i.id JOIN ${t.entries} e ON e.key = m.value`,
    readMarks: `SELECT i.ord, m.value FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord) JOIN ${t.marks} m ON m.id = i.id`,
    list: `SELECT ${readCols} FROM ${t.entries} e
      WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR key > $2)
      ORDER BY key LIMIT $3`,
    prune: `
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
      SELECT count(*) AS n FROM gone`,
    windowAcquire: acquireSql,
    windowSettle: `
      WITH input AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) AS i(id, owner, ttl_ms)),
      confirmed AS (
        UPDATE ${t.windows} w SET confirmed = true, expires_at = $4::bigint + i.ttl_ms FROM input i
        WHERE w.id = i.id AND w.owner = i.owner AND i.ttl_ms IS NOT NULL RETURNING w.id
      ),
      released AS (
        DELETE FROM ${t.windows} w USING input i WHERE w.id = i.id AND w.owner = i.owner AND i.ttl_ms IS NULL RETURNING w.id
      )
      SELECT (SELECT count(*) FROM confirmed) + (SELECT count(*) FROM released) AS n`,
    clock: 'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
    // Set-if-absent on the server's clock. A birth a concurrent statement committed after this
    // one's snapshot is not among its rows: the caller runs it again.
    bornAt: readOnly
      ? `SELECT value FROM ${t.meta} WHERE name = 'born_at'`
      : `WITH born AS (
          INSERT INTO ${t.meta} (name, value) VALUES ('born_at', floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
          ON CONFLICT (name) DO NOTHING RETURNING value
        )
        SELECT value FROM born UNION ALL SELECT value FROM ${t.meta} WHERE name = 'born_at'`,
  };
}
