/**
 * The embedded default ledger on better-sqlite3: one file, WAL, safe for several processes on
 * one machine. Every batch runs in one `BEGIN IMMEDIATE` transaction, so it is atomic and takes
 * the write lock once; concurrent writers wait up to `busyTimeoutMs` for it.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { LedgerError } from '../errors.js';
import type {
  EntryStatus,
  ClaimRequest, ClaimResult, CompleteRequest, FailRequest, LedgerBackend, LedgerEntry,
  ListOptions, NoteRequest, TokenRef, WindowAcquireRequest, WindowSettleRequest, WindowSlot,
} from './types.js';
import { ENTRY_COLUMNS, encodeJson, encodeNotes, entryFromRow, entryFromValues, entryToRow, ledgerFailure, readOnlyRefusal, type EntryRow } from './kit/index.js';
import { ClaimAction, decideClaim, takenEntry } from './decide-claim.js';
import { decideWindow, type StoredSlot } from './decide-window.js';

export interface SqliteLedgerOptions {
  /** Database file (its directory is created), or `:memory:`. */
  path: string;
  /** How long a writer waits for another process's lock before failing. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Create the file, its tables and run migrations on open. Default true. False opens the ledger
   * read-only and creates nothing: a file that does not exist reads as empty, and writes throw.
   */
  createSchema?: boolean;
}

/**
 * 2: entries.owner and the token floor in `meta`. 3: `entries` and `marks` are rowid tables with
 * a unique key, so rows sit in insertion order and a batch's claims and completions share pages.
 */
const SCHEMA_VERSION = 3;

/**
 * Rowid tables (no `WITHOUT ROWID`): keys are hashes, and a table clustered on them puts every
 * new ~300-byte row, and again its completion, on a random page of a large B-tree. In insertion
 * order they append, and only the unique index (key and rowid) takes the random insert. The rowid
 * is implicit, so `SELECT *` reads the same columns as before; nothing relies on its value.
 */
const ENTRIES_TABLE = `CREATE TABLE entries (
  key TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
  token INTEGER NOT NULL,
  lease_until INTEGER,
  attempts INTEGER NOT NULL,
  result TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER,
  owner TEXT
)`;
const ENTRIES_INDEX = 'CREATE INDEX entries_expires_at ON entries (expires_at) WHERE expires_at IS NOT NULL';
const MARKS_TABLE = 'CREATE TABLE marks (id TEXT NOT NULL UNIQUE, value TEXT NOT NULL)';

/** Absent in a ledger of schema version 1 opened read-only. */
type StoredRow = Omit<EntryRow, 'owner'> & { owner?: string | null };

interface WindowRow {
  id: string;
  owner: string;
  confirmed: number;
  expires_at: number;
}

const toSlot = (row: WindowRow): StoredSlot => ({
  owner: row.owner,
  confirmed: row.confirmed === 1,
  expiresAt: row.expires_at,
});

function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const { v } = db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number | null };
    if (v !== null && v > SCHEMA_VERSION) {
      throw new LedgerError(`sqlite ledger schema version ${v} is newer than this library (${SCHEMA_VERSION})`);
    }
    const tables = new Set((db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((t) => t.name));
    if (!tables.has('entries')) db.exec(`${ENTRIES_TABLE}; ${ENTRIES_INDEX}`);
    if (!tables.has('marks')) db.exec(MARKS_TABLE);
    db.exec(`
      CREATE TABLE IF NOT EXISTS windows (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        confirmed INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    `);
    // Older ledgers: the write lock held by this transaction makes every check-then-alter safe.
    const columns = db.prepare('SELECT name FROM pragma_table_info(?)').all('entries') as { name: string }[];
    if (!columns.some((c) => c.name === 'owner')) db.exec('ALTER TABLE entries ADD COLUMN owner TEXT');
    if (v !== null && v < 3) {
      rebuild(db, 'entries', ENTRIES_TABLE, ENTRY_COLUMNS, ENTRIES_INDEX);
      rebuild(db, 'marks', MARKS_TABLE, ['id', 'value']);
    }
    // Tokens of entries pruned before the floor existed are unknown; the highest live one is a safe start.
    db.exec(`INSERT OR IGNORE INTO meta (name, value) SELECT 'token_floor', coalesce(max(token), 0) FROM entries`);
    // Its birth: a file from before birth times were kept is born at its first open since.
    db.prepare(`INSERT OR IGNORE INTO meta (name, value) VALUES ('born_at', ?)`).run(Date.now());
    if (v === null) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(SCHEMA_VERSION);
    else if (v < SCHEMA_VERSION) db.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION);
  }).immediate();
}

/** Moves a table's rows into its current definition (inside the caller's transaction); the old table and its indexes go. */
function rebuild(db: Database.Database, table: string, create: string, columns: readonly string[], indexes = ''): void {
  const list = columns.join(', ');
  // In the old table's key order: the new unique index is then built by appends.
  db.exec(`
    ALTER TABLE ${table} RENAME TO ${table}_old;
    ${create};
    INSERT INTO ${table} (${list}) SELECT ${list} FROM ${table}_old;
    DROP TABLE ${table}_old;
    ${indexes};
  `);
}

function openDatabase(path: string, busyTimeoutMs: number, createSchema: boolean): Database.Database | undefined {
  const inMemory = path === ':memory:' || path === '';
  if (!createSchema && (inMemory || !existsSync(path))) return undefined;
  if (createSchema && !inMemory) mkdirSync(dirname(resolve(path)), { recursive: true });
  // Read-write even when read-only, so the last closer still removes the -wal and -shm files.
  const db = new Database(path, { fileMustExist: !createSchema });
  // busy_timeout first: switching to WAL needs a lock another process may hold.
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  if (!createSchema) return db;
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  migrate(db);
  return db;
}

/** The file's identity at open, and a check that it is still the file this connection writes to. */
function fileGuard(path: string): () => void {
  if (path === ':memory:' || path === '') return () => undefined;
  const file = resolve(path);
  const opened = statSync(file, { bigint: true });
  return () => {
    const now = statSync(file, { bigint: true, throwIfNoEntry: false });
    // The connection keeps writing to the unlinked inode: every later write would vanish with it.
    if (!now || now.dev !== opened.dev || now.ino !== opened.ino) {
      throw new LedgerError(`sqlite ledger file ${file} was deleted or replaced while the ledger was open; nothing was written, reopen the ledger`);
    }
  };
}

/**
 * The read-only lookup of many keys: one prepared primary-key read per key (raw rows, no column
 * names) inside one deferred transaction, so the batch reads one snapshot and takes no write lock.
 * Measured against `key IN (?, ...)` with fixed chunk sizes and `json_each`: the same or faster,
 * and the rows come back in the order asked.
 */
const lookups = new WeakMap<Database.Database, (keys: readonly string[]) => (LedgerEntry | null)[]>();
function lookup(db: Database.Database): (keys: readonly string[]) => (LedgerEntry | null)[] {
  let fn = lookups.get(db);
  if (!fn) {
    // SELECT *: a version 1 file opened read-only has no owner column (it is the last one when present).
    const one = db.prepare<[string], unknown[]>('SELECT * FROM entries WHERE key = ?');
    const inOrder = one.columns().every((c, i) => c.name === ENTRY_COLUMNS[i]);
    const decode = inOrder ? entryFromValues : (row: unknown) => entryFromRow(row as StoredRow);
    if (inOrder) one.raw();
    const tx = db.transaction((keys: readonly string[]) => keys.map((k) => {
      const row = one.get(k);
      return row ? decode(row) : null;
    }));
    fn = (keys) => (keys.length === 0 ? [] : tx.deferred(keys));
    lookups.set(db, fn);
  }
  return fn;
}

/** heldBy: the entry each mark names (a claim's `holds`), one join per id inside one deferred transaction. */
const holderReads = new WeakMap<Database.Database, (ids: readonly string[]) => (LedgerEntry | null)[]>();
function holders(db: Database.Database): (ids: readonly string[]) => (LedgerEntry | null)[] {
  let fn = holderReads.get(db);
  if (!fn) {
    const one = db.prepare<[string], StoredRow>('SELECT e.* FROM marks m JOIN entries e ON e.key = m.value WHERE m.id = ?');
    const tx = db.transaction((ids: readonly string[]) => ids.map((id) => {
      const row = one.get(id);
      return row ? entryFromRow(row) : null;
    }));
    fn = (ids) => (ids.length === 0 ? [] : tx.deferred(ids));
    holderReads.set(db, fn);
  }
  return fn;
}

/** The embedded ledger on better-sqlite3 (WAL, `BEGIN IMMEDIATE` per batch). */
export function sqliteLedger(options: SqliteLedgerOptions): LedgerBackend {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const createSchema = options.createSchema ?? true;
  let db: Database.Database | undefined;
  let checkFile: () => void;
  try {
    db = openDatabase(options.path, busyTimeoutMs, createSchema);
    checkFile = db ? fileGuard(options.path) : () => undefined;
  } catch (err) {
    db?.close();
    if (err instanceof LedgerError) throw err;
    throw new LedgerError(`cannot open sqlite ledger at ${options.path}: ${(err as Error).message}`, { cause: err });
  }
  const read = <R>(what: string, empty: R, fn: (d: Database.Database) => R): Promise<R> => {
    if (!db) return Promise.resolve(empty);
    try {
      return Promise.resolve(fn(db));
    } catch (err) {
      // Read-only over a file that holds no ledger (yet): nothing to find.
      if (!createSchema && /no such table/i.test((err as Error).message)) return Promise.resolve(empty);
      return Promise.reject(ledgerFailure('sqlite', what, err));
    }
  };
  const reads = {
    get: (key: string) => read('get', null, (d) => {
      const row = d.prepare<[string], StoredRow>('SELECT * FROM entries WHERE key = ?').get(key);
      return row ? entryFromRow(row) : null;
    }),
    getMany: (keys: readonly string[]) => read('getMany', keys.map(() => null) as (LedgerEntry | null)[], (d) => lookup(d)(keys)),
    heldBy: (ids: readonly string[]) => read('heldBy', ids.map(() => null) as (LedgerEntry | null)[], (d) => holders(d)(ids)),
    readMarks: (ids: readonly string[]) => read('readMarks', ids.map(() => null) as (string | null)[], (d) => {
      if (ids.length === 0) return [];
      const out: (string | null)[] = ids.map(() => null);
      const rows = d.prepare<[string], { i: number; value: string }>('SELECT j.key AS i, m.value AS value FROM json_each(?) j JOIN marks m ON m.id = j.value').all(JSON.stringify(ids));
      for (const row of rows) out[row.i] = row.value;
      return out;
    }),
    list: (opts: ListOptions = {}) => read('list', [] as LedgerEntry[], (d) => {
      const where: string[] = [];
      const params: (string | number)[] = [];
      if (opts.status) { where.push('status = ?'); params.push(opts.status); }
      if (opts.after !== undefined) { where.push('key > ?'); params.push(opts.after); }
      const sql = `SELECT * FROM entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY key`
        + (opts.limit !== undefined ? ' LIMIT ?' : '');
      if (opts.limit !== undefined) params.push(Math.max(0, Math.floor(opts.limit)));
      return (d.prepare(sql).all(...params) as StoredRow[]).map(entryFromRow);
    }),
    isDurable: async () => options.path !== ':memory:' && options.path !== '',
    bornAt: () => read('bornAt', null as number | null, (d) =>
      d.prepare<[], { value: number }>(`SELECT value FROM meta WHERE name = 'born_at'`).get()?.value ?? null),
    close: async () => {
      if (db?.open) db.close();
    },
  };
  if (!db || !createSchema) {
    const refuse = (what: string) => () => Promise.reject(readOnlyRefusal(`sqlite ledger at ${options.path}`, what));
    return {
      name: 'sqlite',
      claim: refuse('claim'), complete: refuse('complete'), fail: refuse('fail'), release: refuse('release'),
      renew: refuse('renew'), note: refuse('note'), windowAcquire: refuse('windowAcquire'), windowSettle: refuse('windowSettle'), prune: refuse('prune'),
      ...reads,
    };
  }
  return writableLedger(db, checkFile, reads);
}

type Reads = Pick<LedgerBackend, 'get' | 'list' | 'close'> & Required<Pick<LedgerBackend, 'getMany' | 'heldBy' | 'readMarks' | 'isDurable' | 'bornAt'>>;

function writableLedger(db: Database.Database, checkFile: () => void, reads: Reads): LedgerBackend {
  const q = {
    get: db.prepare<[string], StoredRow>('SELECT * FROM entries WHERE key = ?'),
    floor: db.prepare<[], { value: number }>(`SELECT value FROM meta WHERE name = 'token_floor'`),
    put: db.prepare<[EntryRow]>(`INSERT OR REPLACE INTO entries (key, fingerprint, status, token, lease_until, attempts, result, error,
      created_at, updated_at, expires_at, owner) VALUES ($key, $fingerprint, $status, $token, $lease_until, $attempts, $result, $error,
      $created_at, $updated_at, $expires_at, $owner)`),
    insert: db.prepare<[EntryRow]>(`INSERT INTO entries (key, fingerprint, status, token, lease_until, attempts, result, error,
      created_at, updated_at, expires_at, owner) VALUES ($key, $fingerprint, $status, $token, $lease_until, $attempts, $result, $error,
      $created_at, $updated_at, $expires_at, $owner) ON CONFLICT (key) DO NOTHING`),
    mark: db.prepare<[string], { value: string }>('SELECT value FROM marks WHERE id = ?'),
    // The entries the batch's holder marks name ([id or null, ...] as JSON), before any claim of it moves them.
    holders: db.prepare<[string], { i: number; key: string; status: EntryStatus; lease_until: number | null }>(`SELECT j.key AS i,
      e.key AS key, e.status AS status, e.lease_until AS lease_until FROM json_each(?) j JOIN marks m ON m.id = j.value JOIN entries e ON e.key = m.value`),
    setMark: db.prepare('INSERT INTO marks (id, value) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value'),
    // [[id, value], ...] as JSON, in order: a later pair for the same id wins.
    setMarks: db.prepare(`INSERT INTO marks (id, value) SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j WHERE true
      ON CONFLICT (id) DO UPDATE SET value = excluded.value`),
    complete: db.prepare(`UPDATE entries SET status = 'completed', result = ?, error = NULL, lease_until = NULL,
      updated_at = ?, expires_at = ? WHERE key = ? AND token = ? AND status = 'in_progress'`),
    fail: db.prepare(`UPDATE entries SET status = 'failed', error = ?, lease_until = NULL, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress'`),
    release: db.prepare(`UPDATE entries SET lease_until = ?, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress'`),
    renew: db.prepare(`UPDATE entries SET lease_until = ?, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress' AND lease_until > ?`),
    note: db.prepare(`UPDATE entries SET result = ?, updated_at = ?
      WHERE key = ? AND token = ? AND status = 'in_progress'`),
    // $old is null when prune got no olderThan; both statements use one condition so the floor covers every deleted token.
    raiseFloor: db.prepare(`UPDATE meta SET value = max(value, coalesce((SELECT max(token) FROM entries
      WHERE (expires_at IS NOT NULL AND expires_at <= $now) OR (status IN ('completed', 'failed') AND updated_at < $old)), 0))
      WHERE name = 'token_floor'`),
    prune: db.prepare(`DELETE FROM entries
      WHERE (expires_at IS NOT NULL AND expires_at <= $now) OR (status IN ('completed', 'failed') AND updated_at < $old)`),
    pruneWindows: db.prepare('DELETE FROM windows WHERE expires_at <= ?'),
    window: db.prepare<[string], WindowRow>('SELECT * FROM windows WHERE id = ?'),
    putWindow: db.prepare(`INSERT INTO windows (id, owner, confirmed, expires_at) VALUES (?, ?, 0, ?)
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, confirmed = 0, expires_at = excluded.expires_at`),
    dropWindow: db.prepare('DELETE FROM windows WHERE id = ?'),
    confirmWindow: db.prepare('UPDATE windows SET confirmed = 1, expires_at = ? WHERE id = ? AND owner = ?'),
    releaseWindow: db.prepare('DELETE FROM windows WHERE id = ? AND owner = ?'),
  };

  const claimOne = (req: ClaimRequest, now: number, floor: number): ClaimResult => {
    const fresh = freshClaim(req, now, floor);
    if (fresh) return fresh;
    const row = q.get.get(req.key);
    const existing = row ? entryFromRow(row) : null;
    const decision = decideClaim(existing, req, now, floor);
    let result: ClaimResult;
    if (decision.action === ClaimAction.answer) {
      result = { key: req.key, outcome: decision.outcome, entry: existing! };
    } else {
      const entry = takenEntry(existing, req, now, decision);
      q.put.run(entryToRow(entry));
      result = { key: req.key, outcome: 'claimed', token: entry.token, entry };
    }
    if (req.markId !== undefined) {
      const mark = q.mark.get(req.markId);
      if (mark) result.mark = mark.value;
    }
    return result;
  };

  // An absent key (the first run's every key) is claimed by one insert, without reading it first.
  const freshClaim = (req: ClaimRequest, now: number, floor: number): ClaimResult | undefined => {
    const entry = takenEntry(null, req, now, { action: ClaimAction.fresh, token: floor + 1, attempts: 1 });
    if (q.insert.run(entryToRow(entry)).changes !== 1) return undefined;
    const result: ClaimResult = { key: req.key, outcome: 'claimed', token: entry.token, entry };
    const mark = req.markId === undefined ? undefined : q.mark.get(req.markId);
    if (mark) result.mark = mark.value;
    return result;
  };

  const acquireOne = (r: WindowAcquireRequest, now: number): WindowSlot => {
    const row = q.window.get(r.id);
    const { acquired, slot, store } = decideWindow(row ? toSlot(row) : null, r, now);
    if (store === 'put') q.putWindow.run(r.id, r.owner, slot.expiresAt);
    else if (store === 'delete') q.dropWindow.run(r.id);
    return { acquired, ...slot };
  };

  // A transaction function takes the batch and the caller's clock, so `now` never leaks between calls.
  const batch = <T, R>(what: string, fn: (items: T[], now: number, leaseMs: number) => R) => {
    const tx = db.transaction(fn);
    return async (items: T[], now: number, leaseMs = 0): Promise<R> => {
      checkFile();
      try {
        return tx.immediate(items, now, leaseMs);
      } catch (err) {
        throw ledgerFailure('sqlite', what, err);
      }
    };
  };

  // The mark belongs to the write that was accepted; a fenced-out worker must not move it.
  const setMark = (ok: boolean, mark: { id: string; value: string } | undefined) => {
    if (ok && mark) q.setMark.run(mark.id, mark.value);
    return ok;
  };
  const completeTx = batch('complete', (reqs: CompleteRequest[], now) => reqs.map((r) => {
    const expiresAt = r.retentionMs === null || r.retentionMs === undefined ? null : now + r.retentionMs;
    return setMark(q.complete.run(encodeJson(r.result), now, expiresAt, r.key, r.token).changes === 1, r.mark);
  }));
  const failTx = batch('fail', (reqs: FailRequest[], now) =>
    reqs.map((r) => setMark(q.fail.run(encodeJson(r.error), now, r.key, r.token).changes === 1, r.mark)));
  const renewTx = batch('renew', (reqs: TokenRef[], now, leaseMs) =>
    reqs.map((r) => q.renew.run(now + leaseMs, now, r.key, r.token, now).changes === 1));
  const noteTx = batch('note', (reqs: { r: NoteRequest; text: string }[], now) =>
    reqs.map(({ r, text }) => q.note.run(text, now, r.key, r.token).changes === 1));
  const pruneTx = batch('prune', (olderThan: (number | undefined)[], now) => {
    const params = { now, old: olderThan[0] ?? null };
    q.raiseFloor.run(params);
    const n = q.prune.run(params).changes;
    q.pruneWindows.run(now);
    return n;
  });

  return {
    name: 'sqlite',
    // Only prune raises the floor, and not inside this transaction: one read serves the batch.
    claim: batch('claim', (reqs: ClaimRequest[], now) => {
      const floor = q.floor.get()?.value ?? 0;
      const before = reqs.some((r) => r.holds !== undefined) ? q.holders.all(JSON.stringify(reqs.map((r) => r.holds ?? null))) : [];
      const results = reqs.map((r) => claimOne(r, now, floor));
      for (const h of before) {
        const result = results[h.i]!;
        if (result.outcome === 'claimed' && h.key !== result.key) result.holder = { key: h.key, status: h.status, leaseUntil: h.lease_until === null ? null : Number(h.lease_until) };
      }
      // One statement for the batch's holder marks, after every mark was read (as Postgres reads
      // its snapshot): a statement per claim would double the cost of a first run's claims.
      const held = reqs.flatMap((r, i) => (r.holds !== undefined && results[i]!.outcome === 'claimed' ? [[r.holds, r.key]] : []));
      if (held.length > 0) q.setMarks.run(JSON.stringify(held));
      return results;
    }),
    complete: completeTx,
    fail: failTx,
    release: batch('release', (reqs: TokenRef[], now) => reqs.map((r) => q.release.run(now, now, r.key, r.token).changes === 1)),
    renew: (reqs, leaseMs, now) => renewTx(reqs, now, leaseMs),
    note: async (reqs, now) => {
      const texts = encodeNotes(reqs);
      return noteTx(reqs.map((r, i) => ({ r, text: texts[i]! })), now);
    },
    windowAcquire: batch('windowAcquire', (reqs: WindowAcquireRequest[], now) => reqs.map((r) => acquireOne(r, now))),
    windowSettle: batch('windowSettle', (reqs: WindowSettleRequest[], now) => {
      for (const r of reqs) {
        if (r.ttlMs === null) q.releaseWindow.run(r.id, r.owner);
        else q.confirmWindow.run(now + r.ttlMs, r.id, r.owner);
      }
    }),
    prune: (now, olderThan) => pruneTx([olderThan], now),
    ...reads,
  };
}
