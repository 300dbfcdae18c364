import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, LedgerError } from '../../../src/errors.js';
import { isLedgerBackend, openLedger, safeLedgerUrl } from '../../../src/ledger/index.js';

const T0 = Date.UTC(2026, 0, 1);

describe('openLedger', () => {
  it.each([
    ['memory:', 'memory'],
    ['sqlite::memory:', 'sqlite'],
    ['sqlite:.crm-upsert/ledger.db', 'sqlite'],
    ['postgres://u:p@db.example:5432/x', 'postgres'],
    ['postgresql://db.example/x', 'postgres'],
    ['redis://127.0.0.1:6379', 'redis'],
    ['rediss://:secret@cache.example:6380/0', 'redis'],
  ])('picks the backend for %s without connecting', (url, name) => {
    const ledger = openLedger(url);
    expect(ledger.name).toBe(name);
    expect(isLedgerBackend(ledger)).toBe(true);
  });

  it('opens a working memory ledger on first use', async () => {
    const ledger = openLedger('memory:');
    const [r] = await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000, holds: 'h' }], T0);
    expect(r).toMatchObject({ outcome: 'claimed', token: 1 });
    expect((await ledger.get('k'))!.status).toBe('in_progress');
    // The claim's holder mark is read through the wrapper, as the engine reads it.
    expect(await ledger.heldBy!(['h', 'other'])).toEqual([await ledger.get('k'), null]);
    // Marks too, and a second claim of the record learns the first is writing it.
    expect(await ledger.readMarks!(['h', 'other'])).toEqual(['k', null]);
    const [second] = await ledger.claim([{ key: 'k2', fingerprint: 'f', leaseMs: 1000, holds: 'h' }], T0);
    expect(second!.holder).toEqual({ key: 'k', status: 'in_progress', leaseUntil: T0 + 1000 });
    // The holder's note, fenced by its token, reaches the backend through the wrapper.
    expect(await ledger.note!([{ key: 'k', token: 1, note: { bulkJob: '750xx' } }, { key: 'k', token: 2, note: 'stale' }], T0 + 1)).toEqual([true, false]);
    expect(await ledger.get('k')).toMatchObject({ status: 'in_progress', token: 1, result: { bulkJob: '750xx' }, updatedAt: T0 + 1 });
    await ledger.close();
  });

  it('opens a sqlite file relative to the working directory and creates its directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-open-'));
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      const ledger = openLedger('sqlite:nested/ledger.db');
      await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000 }], T0);
      await ledger.close();
      expect(existsSync(join(dir, 'nested/ledger.db'))).toBe(true);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes bornAt through: a sqlite file keeps its birth across opens, and a read-only open of none answers null', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-open-'));
    try {
      const url = `sqlite:${join(dir, 'ledger.db')}`;
      expect(await openLedger(url, { createSchema: false }).bornAt!()).toBeNull();
      const before = Date.now();
      const first = openLedger(url);
      const born = await first.bornAt!();
      await first.close();
      expect(born).toBeGreaterThanOrEqual(before);
      const again = openLedger(url);
      expect(await again.bornAt!()).toBe(born);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens an in-memory sqlite ledger', async () => {
    const ledger = openLedger('sqlite::memory:');
    expect((await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000 }], T0))[0]!.outcome).toBe('claimed');
    await ledger.close();
  });

  it('passes clock and isDurable through, offering clock only for backends that have one', async () => {
    const memory = openLedger('memory:');
    const sqlite = openLedger('sqlite::memory:');
    expect(memory.clock).toBeUndefined();
    expect(sqlite.clock).toBeUndefined();
    expect(typeof openLedger('postgres://u@db.example/x').clock).toBe('function');
    expect(typeof openLedger('redis://127.0.0.1:6379').clock).toBe('function');
    expect(await memory.isDurable!()).toBe(false);
    expect(await sqlite.isDurable!()).toBe(false);
    await memory.close();
    await sqlite.close();
  });

  it('takes the durable option for redis without asking the server', async () => {
    const ledger = openLedger('redis://127.0.0.1:1', { durable: true });
    expect(await ledger.isDurable!()).toBe(true);
    await ledger.close();
  });

  it.each(['memory:', 'sqlite:ledger.db'])('opens %s read-only with createSchema false: finds nothing, creates nothing, refuses writes', async (url) => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-open-'));
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      const ledger = openLedger(url, { createSchema: false });
      expect(await ledger.get('k')).toBeNull();
      expect(await ledger.list()).toEqual([]);
      await expect(ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: 1000 }], T0)).rejects.toThrow(/read-only/);
      await expect(ledger.prune(T0)).rejects.toBeInstanceOf(LedgerError);
      await expect(ledger.note!([{ key: 'k', token: 1, note: 1 }], T0)).rejects.toThrow(/read-only/);
      await ledger.close();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses calls after close', async () => {
    const ledger = openLedger('memory:');
    await ledger.close();
    await expect(ledger.get('k')).rejects.toBeInstanceOf(LedgerError);
  });

  it.each([
    ['mysql://root:hunter22@db.example/app', 'mysql'],
    ['mongodb+srv://admin:hunter22@cluster0.example/x', 'mongodb+srv'],
    ['file:///tmp/ledger.db', 'file'],
  ])('throws ConfigError naming the scheme of %s and the accepted ones, without the password', (url, scheme) => {
    let error: unknown;
    try {
      openLedger(url);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(`"${scheme}:"`);
    expect(message).toContain('sqlite:PATH');
    expect(message).toContain('redis://');
    expect(message).not.toContain('hunter22');
  });

  it('throws ConfigError for a URL without a scheme', () => {
    expect(() => openLedger('ledger.db')).toThrow(ConfigError);
    expect(() => openLedger('sqlite:')).toThrow(ConfigError);
  });

  it.each([
    'postgres://app:hunter22@127.0.0.1:1/none?connect_timeout=1',
    'redis://:hunter22@127.0.0.1:1/0',
  ])('reports an unreachable %s as a LedgerError without the password', async (url) => {
    const ledger = openLedger(url);
    const error = await ledger.get('k').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LedgerError);
    expect(String((error as Error).message)).not.toContain('hunter22');
    expect(JSON.stringify(error)).not.toContain('hunter22');
    await ledger.close();
  });
});

describe('safeLedgerUrl', () => {
  it.each([
    ['redis://:s3cretpw@host:6379', 's3cretpw'],
    ['postgres://user:s3cretpw@host/db', 's3cretpw'],
    ['postgresql://user:s3cret%40pw@host/db?sslmode=require', 's3cret%40pw'],
  ])('removes the password from %s', (url, secret) => {
    expect(safeLedgerUrl(url)).not.toContain(secret);
    expect(safeLedgerUrl(url)).toContain('host');
  });
});

describe('isLedgerBackend', () => {
  it('rejects objects missing a method', () => {
    expect(isLedgerBackend(null)).toBe(false);
    expect(isLedgerBackend({ name: 'x', claim: () => undefined })).toBe(false);
  });
});

describe('package root', () => {
  it('has no static import of a database driver in the ledger entry', () => {
    const source = readFileSync(new URL('../../../src/ledger/index.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\s[^;]*from\s+['"](better-sqlite3|pg|ioredis)['"]/m);
    expect(source).not.toMatch(/^\s*import\s[^;]*from\s+['"]\.\/(sqlite|postgres|redis)\.js['"]/m);
  });
});
