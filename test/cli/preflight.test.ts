import { existsSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { checkSharedRateBudget } from '../../src/cli/preflight.js';
import { type FakeHubSpot } from '../../adapters/testing/index.js';
import { ensureBuilt, pairsFile, runCli, tempDir, writeHubSpotConfig, startFakeHubSpot } from './helpers.js';

const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-preflight' };

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('crm-upsert sync checks before the first write', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };

  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(async () => server?.close());

  /** Run `sync` on a one-pair file; returns the result, the CRM requests it made and whether the ledger file exists after. */
  async function syncWith(args: string[], extra: Record<string, unknown> = {}) {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath, extra);
    const file = join(dir, 'a.jsonl');
    pairsFile(file, 1);
    const before = fake.count();
    const started = Date.now();
    const result = await runCli(['sync', file, '--config', config, ...args.map((a) => a.replace('__DIR__', dir))], { env });
    return { result, requests: fake.count() - before, ms: Date.now() - started, ledgerCreated: existsSync(join(dir, 'ledger.db')), dir };
  }

  it.each([
    ['a directory that cannot be created', '/proc/crm-upsert-none/report.json', /--report \/proc\/crm-upsert-none\/report\.json: cannot create directory/],
    ['a path under a regular file', '__DIR__/a.jsonl/report.json', /--report .*a\.jsonl\/report\.json: .*is not a directory/],
    ['a path that is a directory', '__DIR__', /--report .*: cannot open it for writing: EISDIR/],
  ])('exits 2 before writing anything when --report is %s', async (_name, report, message) => {
    const { result, requests, ledgerCreated } = await syncWith(['--report', report]);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect(requests).toBe(0);
    expect(ledgerCreated).toBe(false);
  });

  it.each([
    ['redis', 'redis'],
    ['postgres', 'postgres'],
  ])('exits 2 before writing anything when the sharedRateBudget %s store is unreachable', async (_name, scheme) => {
    const url = `${scheme}://127.0.0.1:${await closedPort()}${scheme === 'postgres' ? '/test' : ''}`;
    const { result, requests, ledgerCreated } = await syncWith([], { sharedRateBudget: { url, points: 100, durationMs: 10_000 } });

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`sharedRateBudget.url ${scheme}://127\\.0\\.0\\.1:\\d+.* is unreachable: .*ECONNREFUSED`));
    expect(requests).toBe(0);
    expect(ledgerCreated).toBe(false);
  });

  it('names the package to install when the sharedRateBudget driver cannot be imported', async () => {
    const config = parseConfig({ crm: 'hubspot', hubspot: { objects: {} }, sharedRateBudget: { url: 'redis://127.0.0.1:6379', points: 10, durationMs: 10_000 } });
    const missing = async (name: string) => {
      throw Object.assign(new Error(`Cannot find package '${name}' imported from /app/dist/src/rate-budget-shared.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    };

    await expect(checkSharedRateBudget(config, missing)).rejects.toThrow(/sharedRateBudget\.url redis:\/\/127\.0\.0\.1:6379 needs the package ioredis, which cannot be loaded \(Cannot find package 'ioredis'.*\): install it with npm install ioredis/);
  });

  it('refuses --job on a memory: ledger, where two overlapping runs would both hold the lock', async () => {
    const { result, requests } = await syncWith(['--ledger', 'memory:', '--job', 'nightly']);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--job nightly needs a ledger other runs can see');
    expect(requests).toBe(0);
  });

  it('fails at once, without spinning, when the SQLite ledger directory cannot be created', async () => {
    const { result, requests, ms } = await syncWith(['--ledger', 'sqlite:/proc/crm-upsert-none/ledger.db']);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('sqlite ledger /proc/crm-upsert-none/ledger.db: cannot create directory /proc/crm-upsert-none');
    expect(requests).toBe(0);
    expect(ms).toBeLessThan(10_000);
  });
});

describe('crm-upsert sync --dry-run writes nothing anywhere', () => {
  beforeAll(() => ensureBuilt());

  it('creates no ledger table in a fresh Postgres table prefix', async () => {
    const prefix = `cli_dry_${process.pid.toString(36)}${Date.now().toString(36)}_`;
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, 'http://127.0.0.1:9', { ledger: POSTGRES_URL, ledgerOptions: { tablePrefix: prefix } });
    const file = join(dir, 'a.jsonl');
    pairsFile(file, 2);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const tables = async () => (await client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_name LIKE $1', [`${prefix}%`])).rows.map((r) => r.table_name);
    try {
      const result = await runCli(['sync', file, '--config', config, '--dry-run']);

      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const lines = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.slice(0, 4).map((l) => l.would)).toEqual(['upsert', 'create', 'upsert', 'create']);
      expect(await tables()).toEqual([]);
    } finally {
      for (const t of await tables()) await client.query(`DROP TABLE IF EXISTS "${t}" CASCADE`);
      await client.end();
    }
  });

  it('creates neither the SQLite file nor its directory', async () => {
    const dir = tempDir();
    const ledgerDir = join(dir, 'not-yet');
    const config = writeHubSpotConfig(dir, 'http://127.0.0.1:9', { ledger: `sqlite:${join(ledgerDir, 'ledger.db')}` });
    const file = join(dir, 'a.jsonl');
    pairsFile(file, 1);

    const result = await runCli(['sync', file, '--config', config, '--dry-run'], { env: {} });

    expect(result.code).toBe(0);
    expect(existsSync(ledgerDir)).toBe(false);
  });
});

describe('crm-upsert config keys', () => {
  beforeAll(() => ensureBuilt());

  it('defaults requireOccurredAt to true and verifyCreates to auto', () => {
    const config = parseConfig({ crm: 'hubspot', hubspot: { objects: {} } });

    expect(config).toMatchObject({ requireOccurredAt: true, verifyCreates: 'auto' });
    expect(parseConfig({ crm: 'hubspot', hubspot: { objects: {} }, requireOccurredAt: false, verifyCreates: 'always' })).toMatchObject({ requireOccurredAt: false, verifyCreates: 'always' });
  });

  it.each([
    ['requireOccurredAt', 'yes'],
    ['verifyCreates', 'never'],
  ])('exits 2 naming %s for a bad value', async (key, value) => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, 'http://127.0.0.1:9', { [key]: value });
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, '\n');

    const result = await runCli(['sync', file, '--config', config], { env });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`  ${key}: `);
  });
});
