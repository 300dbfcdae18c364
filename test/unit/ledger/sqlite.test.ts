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

/** A ledger file as the schema-version-1 library left it. */
function versionOneLedger(path: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE schema_version (version INTEGER NOT NULL);
    INSERT INTO schema_version (version) VALUES (1);
    CREATE TABLE entries (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, token INTEGER NOT NULL,
      lease_until INTEGER, attempts INTEGER NOT NULL, result TEXT, error TEXT, created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL, expires_at INTEGER) WITHOUT ROWID;
    CREATE TABLE marks (id TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE windows (id TEXT PRIMARY KEY, owner TEXT NOT NULL, confirmed INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO entries VALUES ('done', 'f', 'completed', 7, NULL, 2, '"ok"', NULL, ${T0}, ${T0}, NULL);
  `);
  db.close();
}

describe('sqliteLedger', () => {
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
    expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: 2 }]);
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
