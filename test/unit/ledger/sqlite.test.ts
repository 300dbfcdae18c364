import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { LedgerError } from '../../../src/errors.js';
import { sqliteLedger } from '../../../src/ledger/sqlite.js';
import type { ClaimRequest } from '../../../src/ledger/types.js';

const T0 = Date.UTC(2026, 0, 1);
const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-sqlite-unit-'));
let n = 0;
const fresh = () => join(dir, `ledger-${n++}.db`);
const req = (key: string, extra: Partial<ClaimRequest> = {}): ClaimRequest => ({ key, fingerprint: 'f', leaseMs: 1000, ...extra });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A ledger file made by `sql`, in WAL mode as every version left it. */
function oldLedgerFile(path: string, sql: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(sql);
  db.close();
}

/** A ledger file as the schema-version-1 library left it. */
function versionOneLedger(path: string): void {
  oldLedgerFile(path, `
    CREATE TABLE schema_version (version INTEGER NOT NULL);
    INSERT INTO schema_version (version) VALUES (1);
    CREATE TABLE entries (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, token INTEGER NOT NULL,
      lease_until INTEGER, attempts INTEGER NOT NULL, result TEXT, error TEXT, created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL, expires_at INTEGER) WITHOUT ROWID;
    CREATE TABLE marks (id TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE windows (id TEXT PRIMARY KEY, owner TEXT NOT NULL, confirmed INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO entries VALUES ('done', 'f', 'completed', 7, NULL, 2, '"ok"', NULL, ${T0}, ${T0}, NULL);
  `);
}

/** A ledger file as the schema-version-2 library left it, with a row of every kind. */
function versionTwoLedger(path: string): void {
  oldLedgerFile(path, `
    CREATE TABLE schema_version (version INTEGER NOT NULL);
    INSERT INTO schema_version (version) VALUES (2);
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
      expires_at INTEGER,
      owner TEXT
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS entries_expires_at ON entries (expires_at) WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS marks (id TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS windows (
      id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      confirmed INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO entries VALUES ('done', 'f', 'completed', 7, NULL, 2, '"ok"', NULL, ${T0}, ${T0 + 5}, ${T0 + 86_400_000}, 'host 1 a');
    INSERT INTO entries VALUES ('busy', 'f', 'in_progress', 3, ${T0 + 60_000}, 1, NULL, NULL, ${T0}, ${T0}, NULL, 'host 2 b');
    INSERT INTO entries VALUES ('broke', 'g', 'failed', 12, NULL, 4, NULL, '"boom"', ${T0 - 9}, ${T0 - 1}, NULL, NULL);
    INSERT INTO marks VALUES ('m1:contact', '{"h":"hash-1","id":"r-1"}'), ('m1:deal', '{"h":null,"id":"r-2"}');
    INSERT INTO windows VALUES ('w1', 'done', 1, ${T0 + 600_000});
    INSERT INTO meta VALUES ('token_floor', 20);
  `);
}

const TABLES = ['entries', 'marks', 'windows', 'meta'] as const;
/** Every row of every ledger table, straight from the file. */
function allRows(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1`).all()]));
  } finally {
    db.close();
  }
}

describe('sqliteLedger', () => {
  it('migrates a version 2 ledger to rowid tables with every row kept', async () => {
    const path = fresh();
    versionTwoLedger(path);
    const before = allRows(path);
    const readOnly = sqliteLedger({ path, createSchema: false });
    expect(await readOnly.get('broke')).toMatchObject({ status: 'failed', error: 'boom', token: 12, owner: null });
    // A ledger from before birth times were kept: none yet, and a read-only open records none.
    expect(await readOnly.bornAt!()).toBeNull();
    await readOnly.close();

    const opening = Date.now();
    const ledger = sqliteLedger({ path });
    try {
      // Every row kept; its first writable open since counts as its birth.
      const born = await ledger.bornAt!();
      expect(born).toBeGreaterThanOrEqual(opening);
      expect(born).toBeLessThanOrEqual(Date.now());
      expect(allRows(path)).toEqual({ ...before, meta: [{ name: 'born_at', value: born }, ...before.meta!] });
      const [done, broke, added] = await ledger.claim([
        req('done', { markId: 'm1:contact' }), req('broke', { fingerprint: 'g', retryFailed: true }), req('added', { markId: 'm1:deal' }),
      ], T0 + 10);
      expect(done).toMatchObject({ outcome: 'completed', mark: '{"h":"hash-1","id":"r-1"}', entry: { result: 'ok', token: 7, owner: 'host 1 a' } });
      expect(broke).toMatchObject({ outcome: 'claimed', token: 13, entry: { attempts: 5 } });
      expect(added).toMatchObject({ outcome: 'claimed', token: 21, mark: '{"h":null,"id":"r-2"}' });
      expect(await ledger.complete([{ key: 'added', token: 21, result: 'r-2', mark: { id: 'm1:deal', value: 'new' } }], T0 + 11)).toEqual([true]);
      expect((await ledger.claim([req('again', { markId: 'm1:deal' })], T0 + 12))[0]).toMatchObject({ mark: 'new' });
      expect(await ledger.getMany!(['busy', 'added', 'nope'])).toMatchObject([{ status: 'in_progress', leaseUntil: T0 + 60_000 }, { status: 'completed', result: 'r-2' }, null]);
    } finally {
      await ledger.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: 3 }]);
      const sql = db.prepare(`SELECT name, sql FROM sqlite_master WHERE tbl_name IN ('entries', 'marks') ORDER BY name`).all();
      expect(sql).toEqual([
        { name: 'entries', sql: expect.not.stringMatching(/WITHOUT ROWID|_old/) },
        { name: 'entries_expires_at', sql: expect.stringContaining('ON entries (expires_at)') },
        { name: 'marks', sql: expect.not.stringMatching(/WITHOUT ROWID|_old/) },
        { name: 'sqlite_autoindex_entries_1', sql: null },
        { name: 'sqlite_autoindex_marks_1', sql: null },
      ]);
    } finally {
      db.close();
    }
    const reopened = sqliteLedger({ path, createSchema: false });
    expect(await reopened.list({ status: 'completed' })).toMatchObject([{ key: 'added' }, { key: 'done' }]);
    await reopened.close();
  });

  it('keeps entries and marks in insertion order, not key order', async () => {
    const path = fresh();
    const ledger = sqliteLedger({ path });
    const keys = ['k3', 'k1', 'k4', 'k2'];
    try {
      const claims = await ledger.claim(keys.map((k) => req(k, { markId: `m-${k}` })), T0);
      await ledger.complete(claims.map((c) => ({ key: c.key, token: c.token!, result: 'ok', mark: { id: `m-${c.key}`, value: 'v' } })), T0 + 1);
    } finally {
      await ledger.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare('SELECT key FROM entries ORDER BY rowid').pluck().all()).toEqual(keys);
      expect(db.prepare('SELECT id FROM marks ORDER BY rowid').pluck().all()).toEqual(keys.map((k) => `m-${k}`));
    } finally {
      db.close();
    }
  });


  it('migrates a ledger of the previous schema version in place, once', async () => {
    const path = fresh();
    versionOneLedger(path);
    const readOnly = sqliteLedger({ path, createSchema: false });
    expect(await readOnly.get('done')).toMatchObject({ status: 'completed', token: 7, owner: null });
    await readOnly.close();

    const first = sqliteLedger({ path });
    const second = sqliteLedger({ path });
    try {
      expect(await first.get('done')).toMatchObject({ status: 'completed', result: 'ok', token: 7, owner: null });
      const [claim] = await second.claim([req('new', { owner: 'host 1 t' })], T0);
      expect(claim).toMatchObject({ outcome: 'claimed', entry: { owner: 'host 1 t' } });
      expect(await first.get('new')).toMatchObject({ owner: 'host 1 t' });
    } finally {
      await first.close();
      await second.close();
    }
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: 3 }]);
    db.close();
  });

  it('refuses a ledger of a newer schema version', () => {
    const path = fresh();
    const db = new Database(path);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (99);');
    db.close();
    expect(() => sqliteLedger({ path })).toThrow(/schema version 99 is newer/);
  });

  it.each([
    ['deleted', (path: string) => { for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true }); }],
    ['replaced', (path: string) => {
      const other = `${path}.other`;
      sqliteLedger({ path: other }).close();
      renameSync(other, path);
    }],
  ])('refuses to write once its file was %s while open', async (_how, change) => {
    const path = fresh();
    const ledger = sqliteLedger({ path });
    try {
      expect((await ledger.claim([req('k1')], T0))[0]!.outcome).toBe('claimed');
      change(path);
      for (const write of [
        () => ledger.claim([req('k2')], T0 + 1),
        () => ledger.complete([{ key: 'k1', token: 1, result: 'ok' }], T0 + 1),
        () => ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: 1000 }], T0 + 1),
      ]) {
        const error = await write().then(() => undefined, (err: unknown) => err);
        expect(error).toBeInstanceOf(LedgerError);
        expect((error as Error).message).toContain(path);
        expect((error as Error).message).toMatch(/deleted or replaced while the ledger was open/);
      }
    } finally {
      await ledger.close();
    }
  });

  it('keeps writing after its file was copied (a backup is no replacement)', async () => {
    const path = fresh();
    const ledger = sqliteLedger({ path });
    try {
      await ledger.claim([req('k1')], T0);
      copyFileSync(path, `${path}.bak`);
      expect((await ledger.claim([req('k2')], T0 + 1))[0]!.outcome).toBe('claimed');
    } finally {
      await ledger.close();
    }
  });

  it('is durable on a file and not in memory', async () => {
    const onFile = sqliteLedger({ path: fresh() });
    const inMemory = sqliteLedger({ path: ':memory:' });
    expect(await onFile.isDurable!()).toBe(true);
    expect(await inMemory.isDurable!()).toBe(false);
    await onFile.close();
    await inMemory.close();
  });

  it('creates neither the file nor its directory when opened with createSchema false', async () => {
    const path = join(dir, 'absent/dir/ledger.db');
    const ledger = sqliteLedger({ path, createSchema: false });
    expect(await ledger.list()).toEqual([]);
    await expect(ledger.claim([req('k1')], T0)).rejects.toThrow(/read-only/);
    await ledger.close();
    expect(existsSync(join(dir, 'absent'))).toBe(false);
  });
});
