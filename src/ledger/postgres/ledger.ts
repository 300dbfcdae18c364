/** The Postgres backend: one statement per batch (sql.ts), tables created on first use (migrate.ts). */
import type { Pool } from 'pg';
import { LedgerError } from '../../errors.js';
import { missingDriverMessage, PEERS, requireOptional } from '../../optional-package.js';
import { ClaimAction, decideClaim } from '../decide-claim.js';
import { connect, encodeJson, encodeNotes, entryFromRow, ledgerFailure, readOnlyRefusal } from '../kit/index.js';
import type {
  ClaimHolder, ClaimRequest, ClaimResult, CompleteRequest, EntryStatus, FailRequest, LedgerBackend, LedgerEntry,
  ListOptions, NoteRequest, TokenRef, WindowAcquireRequest, WindowSettleRequest, WindowSlot,
} from '../types.js';
import type { PgQueryable, PostgresLedgerOptions } from './options.js';
import { migrate, tables } from './migrate.js';
import { statements } from './sql.js';

type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v);

const pick = (row: Row, acquired: boolean): WindowSlot => ({
  acquired, owner: String(row.owner), confirmed: row.confirmed === true, expiresAt: num(row.expires_at),
});

/**
 * The holder a taken claim's row names, when it is another key. One whose entry the statement's
 * snapshot does not hold took its claim a moment ago (or its entry was pruned since): reported in
 * progress with no known lease, for the caller to read.
 */
function holderOf(row: Row, key: string): { holder?: ClaimHolder } {
  if (row.holder_key === null || row.holder_key === undefined || row.holder_key === key) return {};
  if (row.holder_status === null || row.holder_status === undefined) return { holder: { key: String(row.holder_key), status: 'in_progress', leaseUntil: null } };
  const lease = row.holder_lease === null || row.holder_lease === undefined ? null : num(row.holder_lease);
  return { holder: { key: String(row.holder_key), status: String(row.holder_status) as EntryStatus, leaseUntil: lease } };
}

/** What a claim that did not take `entry` reports, or undefined when decideClaim says it should have: the row it read is stale. */
function notTaken(entry: LedgerEntry, r: ClaimRequest, now: number): ClaimResult['outcome'] | undefined {
  // The floor only sets a fresh token, never whether a claim takes the key.
  const decision = decideClaim(entry, r, now, 0);
  return decision.action === ClaimAction.answer ? decision.outcome : undefined;
}

/**
 * Runs `batch` until every item is answered: an item left undefined met a row a concurrent
 * statement committed after this one's snapshot, so it goes round again instead of guessing.
 */
async function untilSettled<Q, R>(what: string, reqs: Q[], batch: (reqs: Q[]) => Promise<(R | undefined)[]>): Promise<R[]> {
  const results = await batch(reqs);
  for (let round = 0; round < 5; round++) {
    const pending = results.flatMap((r, i) => (r === undefined ? [i] : []));
    if (pending.length === 0) return results as R[];
    const again = await batch(pending.map((i) => reqs[i]!));
    pending.forEach((i, j) => { results[i] = again[j]; });
  }
  throw new LedgerError(`postgres ledger ${what} did not settle after 5 rounds of concurrent changes`);
}

/**
 * Only the first request per (key, token) in one batch is sent, as a sequential run would
 * answer its repeats: the first one changes the entry, so the repeats are refused.
 */
const pair = (key: unknown, token: unknown) => `${String(key)}\u0000${String(token)}`;
function once<R extends TokenRef>(reqs: R[]): { unique: R[]; answer: (rows: Row[]) => boolean[] } {
  const firsts = new Map<string, number>();
  reqs.forEach((r, i) => { if (!firsts.has(pair(r.key, r.token))) firsts.set(pair(r.key, r.token), i); });
  return {
    unique: [...firsts.values()].map((i) => reqs[i]!),
    answer: (rows) => {
      const done = new Set(rows.map((row) => pair(row.key, row.token)));
      return reqs.map((r, i) => firsts.get(pair(r.key, r.token)) === i && done.has(pair(r.key, r.token)));
    },
  };
}

/**
 * Only the last note per (key, token) in one batch is sent: an UPDATE meets each row once, and a
 * note leaves the entry's fencing as it was, so every repeat is answered as that one is.
 */
function lastNotes(reqs: NoteRequest[], texts: string[]): { keys: string[]; tokens: number[]; notes: string[]; answer: (rows: Row[]) => boolean[] } {
  const lasts = new Map<string, number>();
  reqs.forEach((r, i) => lasts.set(pair(r.key, r.token), i));
  const sent = [...lasts.values()];
  return {
    keys: sent.map((i) => reqs[i]!.key),
    tokens: sent.map((i) => reqs[i]!.token),
    notes: sent.map((i) => texts[i]!),
    answer: (rows) => {
      const done = new Set(rows.map((row) => pair(row.key, row.token)));
      return reqs.map((r) => done.has(pair(r.key, r.token)));
    },
  };
}

// Required, not imported: importing this module without pg is then one message, and the entry stays require()-able.
const pg = requireOptional<typeof import('pg')>(PEERS.pg.name, missingDriverMessage('postgres', PEERS.pg));

/** Postgres error codes a read-only ledger that was never created answers with: undefined table, schema. */
const ABSENT = new Set(['42P01', '3F000']);

/** The ledger on Postgres; tables are created on first use (unless `createSchema` is false). */
export function postgresLedger(options: PostgresLedgerOptions): LedgerBackend {
  const t = tables(options);
  const readOnly = options.createSchema === false;
  const sql = statements(t, readOnly);
  const { client: pool, release } = connect<PgQueryable, Pool>({
    given: options.pool,
    url: options.connectionString,
    build: (connectionString) => new pg.Pool({ connectionString, max: options.max ?? 10 }),
    end: (owned) => owned.end(),
    missing: 'postgresLedger needs a connectionString or a pool',
  });

  let migrated: Promise<void> | undefined;
  const ready = () => {
    migrated ??= migrate(pool, options).catch((err: unknown) => {
      migrated = undefined;
      throw err;
    });
    return migrated;
  };
  const query = async (what: string, text: string, values: unknown[]): Promise<Row[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        if (!readOnly) await ready();
        return (await pool.query(text, values)).rows;
      } catch (err) {
        const code = (err as { code?: string }).code;
        // Overlapping batches can still deadlock (rows of the marks table, a serialization
        // failure); Postgres aborts the whole statement, which is safe to run again. A short random
        // pause keeps the two from meeting again in the same order.
        if ((code === '40P01' || code === '40001') && attempt < 8) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
          continue;
        }
        if (err instanceof LedgerError) throw err;
        throw ledgerFailure('postgres', what, err);
      }
    }
  };
  const run = async (what: string, text: string, values: unknown[]): Promise<Row[]> => {
    if (readOnly) throw readOnlyRefusal(`postgres ledger ${t.schema}.${t.prefix}*`, what);
    return query(what, text, values);
  };
  const read = async (what: string, text: string, values: unknown[]): Promise<Row[]> => {
    try {
      return await query(what, text, values);
    } catch (err) {
      if (readOnly && ABSENT.has(String(((err as Error).cause as { code?: unknown } | undefined)?.code))) return [];
      throw err;
    }
  };

  const claimBatch = async (reqs: ClaimRequest[], now: number): Promise<(ClaimResult | undefined)[]> => {
    const rows = await run('claim', sql.claim, [
      reqs.map((r) => r.key), reqs.map((r) => r.fingerprint), reqs.map((r) => Math.round(r.leaseMs)),
      reqs.map((r) => r.retryFailed === true), reqs.map((r) => r.markId ?? null), now, reqs.map((r) => r.owner ?? null),
      reqs.map((r) => r.holds ?? null),
    ]);
    const seen = new Set<string>();
    return reqs.map((r, i) => {
      const row = rows[i]!;
      const first = !seen.has(r.key);
      seen.add(r.key);
      if (row.key === null || row.key === undefined) return undefined;
      const entry = entryFromRow(row);
      const base = { key: r.key, entry, ...(row.mark === null || row.mark === undefined ? {} : { mark: String(row.mark) }) };
      if (row.taken === true && first) return { ...base, outcome: 'claimed', token: entry.token, ...holderOf(row, r.key) };
      if (row.taken === true) return { ...base, outcome: entry.fingerprint === r.fingerprint ? 'in_progress' : 'conflict' };
      const outcome = notTaken(entry, r, now);
      return outcome === undefined ? undefined : { ...base, outcome };
    });
  };

  const acquireBatch = async (reqs: WindowAcquireRequest[], now: number): Promise<(WindowSlot | undefined)[]> => {
    const rows = await run('windowAcquire', sql.windowAcquire, [
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

  /** A fenced batch: each request's first (key, token) is sent, the rows it changed answer it. */
  const fenced = async <R extends TokenRef>(what: string, text: string, reqs: R[], values: (unique: R[]) => unknown[]) => {
    const { unique, answer } = once(reqs);
    if (unique.length === 0) return [];
    return answer(await run(what, text, [unique.map((r) => r.key), unique.map((r) => r.token), ...values(unique)]));
  };

  return {
    name: 'postgres',
    claim: async (reqs, now) => (reqs.length === 0 ? [] : untilSettled('claim', reqs, (batch) => claimBatch(batch, now))),

    complete: (reqs: CompleteRequest[], now) => fenced('complete', sql.complete, reqs, (unique) => [
      unique.map((r) => encodeJson(r.result)),
      unique.map((r) => (r.retentionMs === null || r.retentionMs === undefined ? null : Math.round(r.retentionMs))),
      unique.map((r) => r.mark?.id ?? null), unique.map((r) => r.mark?.value ?? null), now,
    ]),

    fail: (reqs: FailRequest[], now) => fenced('fail', sql.fail, reqs, (unique) => [
      unique.map((r) => encodeJson(r.error)), unique.map((r) => r.mark?.id ?? null), unique.map((r) => r.mark?.value ?? null), now,
    ]),

    release: (reqs: TokenRef[], now) => fenced('release', sql.release, reqs, () => [now]),

    renew: (reqs: TokenRef[], leaseMs, now) => fenced('renew', sql.renew, reqs, () => [now, Math.round(leaseMs)]),

    note: async (reqs: NoteRequest[], now) => {
      const texts = encodeNotes(reqs);
      if (reqs.length === 0) return [];
      const { keys, tokens, notes, answer } = lastNotes(reqs, texts);
      return answer(await run('note', sql.note, [keys, tokens, notes, now]));
    },

    get: async (key) => {
      const rows = await read('get', sql.get, [key]);
      return rows[0] ? entryFromRow(rows[0]) : null;
    },

    getMany: async (keys) => {
      if (keys.length === 0) return [];
      const byKey = new Map<string, LedgerEntry>();
      for (const row of await read('getMany', sql.getMany, [keys])) byKey.set(String(row.key), entryFromRow(row));
      return keys.map((k) => byKey.get(k) ?? null);
    },

    readMarks: async (ids) => {
      if (ids.length === 0) return [];
      const found = new Map<number, string>();
      for (const row of await read('readMarks', sql.readMarks, [ids])) found.set(num(row.ord), String(row.value));
      return ids.map((_, i) => found.get(i + 1) ?? null);
    },

    heldBy: async (ids) => {
      if (ids.length === 0) return [];
      const found = new Map<number, LedgerEntry>();
      for (const row of await read('heldBy', sql.heldBy, [ids])) found.set(num(row.ord), entryFromRow(row));
      return ids.map((_, i) => found.get(i + 1) ?? null);
    },

    list: async (opts: ListOptions = {}) => {
      const limit = opts.limit === undefined ? null : Math.max(0, Math.floor(opts.limit));
      return (await read('list', sql.list, [opts.status ?? null, opts.after ?? null, limit])).map(entryFromRow);
    },

    prune: async (now, olderThan) => {
      const rows = await run('prune', sql.prune, [now, olderThan ?? null]);
      return num(rows[0]?.n ?? 0);
    },

    windowAcquire: async (reqs, now) => (reqs.length === 0 ? [] : untilSettled('windowAcquire', reqs, (batch) => acquireBatch(batch, now))),

    windowSettle: async (reqs: WindowSettleRequest[], now) => {
      if (reqs.length === 0) return;
      await run('windowSettle', sql.windowSettle, [
        reqs.map((r) => r.id), reqs.map((r) => r.owner), reqs.map((r) => (r.ttlMs === null ? null : Math.round(r.ttlMs))), now,
      ]);
    },

    clock: async () => {
      try {
        const { rows } = await pool.query(sql.clock);
        return num(rows[0]?.now);
      } catch (err) {
        throw ledgerFailure('postgres', 'clock', err);
      }
    },

    isDurable: async () => true,

    bornAt: async () => {
      for (let round = 0; round < 3; round++) {
        const rows = await read('bornAt', sql.bornAt, []);
        if (rows[0]) return num(rows[0].value);
        if (readOnly) return null;
      }
      throw new LedgerError('postgres ledger bornAt did not settle after 3 rounds of concurrent changes');
    },

    close: release,
  };
}
