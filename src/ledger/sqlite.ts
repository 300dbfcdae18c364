/**
 * The embedded default ledger on better-sqlite3: one file, WAL, safe for several processes on
 * one machine. Every batch runs in one `BEGIN IMMEDIATE` transaction, so it is atomic and takes
 * the write lock once; concurrent writers wait up to `busyTimeoutMs` for it.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { LedgerError } from '../errors.js';
import type {
  ClaimRequest, ClaimResult, CompleteRequest, EntryStatus, FailRequest, Json, LedgerBackend, LedgerEntry,
  ListOptions, TokenRef, WindowAcquireRequest, WindowSettleRequest, WindowSlot,
} from './types.js';

export interface SqliteLedgerOptions {
  /** Database file (its directory is created), or `:memory:`. */
  path: string;
  /** How long a writer waits for another process's lock before failing. Default 5000. */
  busyTimeoutMs?: number;
}

const SCHEMA_VERSION = 1;

interface EntryRow {
  key: string;
  fingerprint: string;
  status: EntryStatus;
  token: number;
  lease_until: number | null;
  attempts: number;
  result: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
}

interface WindowRow {
  id: string;
  owner: string;
  confirmed: number;
  expires_at: number;
}

const parseJson = (text: string | null): Json | null => (text === null ? null : (JSON.parse(text) as Json));

const toEntry = (row: EntryRow): LedgerEntry => ({
  key: row.key,
  fingerprint: row.fingerprint,
  status: row.status,
  token: row.token,
  leaseUntil: row.lease_until,
  attempts: row.attempts,
  result: parseJson(row.result),
  error: parseJson(row.error),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  expiresAt: row.expires_at,
});

const toSlot = (row: WindowRow, acquired: boolean): WindowSlot => ({
  acquired,
  owner: row.owner,
  confirmed: row.confirmed === 1,
  expiresAt: row.expires_at,
});

function openDatabase(path: string, busyTimeoutMs: number): Database.Database {
  if (path !== ':memory:' && path !== '') mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Database(path);
  // busy_timeout first: switching to WAL needs a lock another process may hold.
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.transaction(() => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS entries (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
        token INTEGER NOT NULL,
        lease_until INTEGER,
        attempts INTEGER NOT NULL,
        result TEXT,
        error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS entries_expires_at ON entries (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE IF NOT EXISTS marks (id TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS windows (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        confirmed INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `);
    const row = db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number | null };
    if (row.v === null) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(SCHEMA_VERSION);
    else if (row.v > SCHEMA_VERSION) {
      throw new LedgerError(`sqlite ledger schema version ${row.v} is newer than this library (${SCHEMA_VERSION})`);
    }
  }).immediate();
  return db;
}

/** The embedded ledger on better-sqlite3 (WAL, `BEGIN IMMEDIATE` per batch). */
export function sqliteLedger(options: SqliteLedgerOptions): LedgerBackend {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  let db: Database.Database;
  try {
    db = openDatabase(options.path, busyTimeoutMs);
  } catch (err) {
    if (err instanceof LedgerError) throw err;
    throw new LedgerError(`cannot open sqlite ledger at ${options.path}: ${(err as Error).message}`, { cause: err });
  }

  const q = {
    get: db.prepare<[string], EntryRow>('SELECT * FROM entries WHERE key = ?'),
    fresh: db.prepare(`INSERT OR REPLACE INTO entries (key, fingerprint, status, token, lease_until, attempts, created_at, updated_at)
      VALUES (?, ?, 'in_progress', ?, ?, 1, ?, ?)`),
    takeOver: db.prepare(`UPDATE entries SET status = 'in_progress', token = token + 1, lease_until = ?,
      attempts = attempts + 1, updated_at = ?, expires_at = NULL WHERE key = ?`),
    mark: db.prepare<[string], { value: string }>('SELECT value FROM marks WHERE id = ?'),
    setMark: db.prepare('INSERT INTO marks (id, value) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value'),
    complete: db.prepare(`UPDATE entries SET status = 'completed', result = ?, error = NULL, lease_until = NULL,
      updated_at = ?, expires_at = ? WHERE key = ? AND token = ? AND status = 'in_progress'`),
    fail: db.prepare(`UPDATE entries SET status = 'failed', error = ?, lease_until = NULL, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress'`),
    release: db.prepare(`UPDATE entries SET lease_until = ?, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress'`),
    renew: db.prepare(`UPDATE entries SET lease_until = ?, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress' AND lease_until > ?`),
    pruneExpired: db.prepare('DELETE FROM entries WHERE expires_at IS NOT NULL AND expires_at <= ?'),
    pruneOld: db.prepare(`DELETE FROM entries WHERE status IN ('completed', 'failed') AND updated_at < ?`),
    pruneWindows: db.prepare('DELETE FROM windows WHERE expires_at <= ?'),
    window: db.prepare<[string], WindowRow>('SELECT * FROM windows WHERE id = ?'),
    putWindow: db.prepare(`INSERT INTO windows (id, owner, confirmed, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, confirmed = excluded.confirmed, expires_at = excluded.expires_at`),
    confirmWindow: db.prepare('UPDATE windows SET confirmed = 1, expires_at = ? WHERE id = ? AND owner = ?'),
    releaseWindow: db.prepare('DELETE FROM windows WHERE id = ? AND owner = ?'),
  };

  const claimOne = (req: ClaimRequest, now: number): ClaimResult => {
    const row = q.get.get(req.key);
    let outcome: ClaimResult['outcome'];
    if (!row || (row.expires_at !== null && row.expires_at <= now && row.status !== 'in_progress')) {
      // Past its retention the key is new again, but the token keeps counting so fencing never repeats.
      q.fresh.run(req.key, req.fingerprint, (row?.token ?? 0) + 1, now + req.leaseMs, now, now);
      outcome = 'claimed';
    } else if (row.fingerprint !== req.fingerprint) {
      outcome = 'conflict';
    } else if ((row.status === 'in_progress' && (row.lease_until ?? 0) <= now)
      || (row.status === 'failed' && req.retryFailed === true)) {
      q.takeOver.run(now + req.leaseMs, now, req.key);
      outcome = 'claimed';
    } else {
      outcome = row.status;
    }
    const entry = toEntry(outcome === 'claimed' ? q.get.get(req.key)! : row!);
    const result: ClaimResult = { key: req.key, outcome, entry };
    if (outcome === 'claimed') result.token = entry.token;
    if (req.markId !== undefined) {
      const mark = q.mark.get(req.markId);
      if (mark) result.mark = mark.value;
    }
    return result;
  };

  // A transaction function takes the batch and the caller's clock, so `now` never leaks between calls.
  const batch = <T, R>(what: string, fn: (items: T[], now: number, leaseMs: number) => R) => {
    const tx = db.transaction(fn);
    return async (items: T[], now: number, leaseMs = 0): Promise<R> => {
      try {
        return tx.immediate(items, now, leaseMs);
      } catch (err) {
        throw new LedgerError(`sqlite ledger ${what} failed: ${(err as Error).message}`, { cause: err });
      }
    };
  };

  const claimTx = batch('claim', (reqs: ClaimRequest[], now) => reqs.map((r) => claimOne(r, now)));
  const completeTx = batch('complete', (reqs: CompleteRequest[], now) => reqs.map((r) => {
    const expiresAt = r.retentionMs === null || r.retentionMs === undefined ? null : now + r.retentionMs;
    const ok = q.complete.run(JSON.stringify(r.result), now, expiresAt, r.key, r.token).changes === 1;
    // The mark belongs to the write that completed; a fenced-out worker must not move it.
    if (ok && r.mark) q.setMark.run(r.mark.id, r.mark.value);
    return ok;
  }));
  const failTx = batch('fail', (reqs: FailRequest[], now) =>
    reqs.map((r) => q.fail.run(JSON.stringify(r.error), now, r.key, r.token).changes === 1));
  const releaseTx = batch('release', (reqs: TokenRef[], now) =>
    reqs.map((r) => q.release.run(now, now, r.key, r.token).changes === 1));
  const renewTx = batch('renew', (reqs: TokenRef[], now, leaseMs) =>
    reqs.map((r) => q.renew.run(now + leaseMs, now, r.key, r.token, now).changes === 1));
  const acquireTx = batch('windowAcquire', (reqs: WindowAcquireRequest[], now) => reqs.map((r): WindowSlot => {
    const row = q.window.get(r.id);
    if (row && row.expires_at > now) return toSlot(row, row.owner === r.owner);
    q.putWindow.run(r.id, r.owner, 0, now + r.ttlMs);
    return { acquired: true, owner: r.owner, confirmed: false, expiresAt: now + r.ttlMs };
  }));
  const settleTx = batch('windowSettle', (reqs: WindowSettleRequest[], now) => {
    for (const r of reqs) {
      if (r.ttlMs === null) q.releaseWindow.run(r.id, r.owner);
      else q.confirmWindow.run(now + r.ttlMs, r.id, r.owner);
    }
  });
  const pruneTx = batch('prune', (olderThan: (number | undefined)[], now) => {
    let n = q.pruneExpired.run(now).changes;
    if (olderThan[0] !== undefined) n += q.pruneOld.run(olderThan[0]).changes;
    q.pruneWindows.run(now);
    return n;
  });

  const read = <R>(what: string, fn: () => R): Promise<R> => {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(new LedgerError(`sqlite ledger ${what} failed: ${(err as Error).message}`, { cause: err }));
    }
  };

  return {
    name: 'sqlite',
    claim: claimTx,
    complete: completeTx,
    fail: failTx,
    release: releaseTx,
    renew: (reqs, leaseMs, now) => renewTx(reqs, now, leaseMs),
    windowAcquire: acquireTx,
    windowSettle: settleTx,
    prune: (now, olderThan) => pruneTx([olderThan], now),
    get: (key) => read('get', () => {
      const row = q.get.get(key);
      return row ? toEntry(row) : null;
    }),
    list: (opts: ListOptions = {}) => read('list', () => {
      const where: string[] = [];
      const params: (string | number)[] = [];
      if (opts.status) { where.push('status = ?'); params.push(opts.status); }
      if (opts.after !== undefined) { where.push('key > ?'); params.push(opts.after); }
      const sql = `SELECT * FROM entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY key`
        + (opts.limit !== undefined ? ' LIMIT ?' : '');
      if (opts.limit !== undefined) params.push(Math.max(0, Math.floor(opts.limit)));
      return (db.prepare(sql).all(...params) as EntryRow[]).map(toEntry);
    }),
    close: async () => {
      if (db.open) db.close();
    },
  };
}
