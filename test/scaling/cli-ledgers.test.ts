/**
 * The crm-upsert CLI on the shared ledgers, unchanged: `sync file.jsonl --ledger postgres://…`
 * and `--ledger redis://…`, run twice each against a fakeHubSpot on loopback. The first run
 * writes every line; the second replays every line with 0 API calls. Each run gets its own
 * Postgres database / Redis key prefix (ioredis reads `?keyPrefix=` from the URL), dropped after.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import { ensureBuilt, pairsFile, runCli, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { runId } from '../helpers/services.js';
import { postgresUrl, redisUrl } from './services.js';

const PAIRS = 150;
const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-scaling-cli' };

interface Store {
  /** The --ledger URL, isolated for this run. */
  url: string;
  drop(): Promise<void>;
}

async function postgresStore(base: string): Promise<Store> {
  const database = `crm_upsert_cli_${runId()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await c.end();
    },
  };
}

async function redisStore(base: string): Promise<Store> {
  const keyPrefix = `${runId()}:`;
  const url = new URL(base);
  url.searchParams.set('keyPrefix', keyPrefix);
  return {
    url: url.toString(),
    async drop() {
      const c = new Redis(base);
      for (let cursor = '0'; ;) {
        const [next, keys] = await c.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1_000);
        if (keys.length > 0) await c.del(...keys);
        cursor = next;
        if (cursor === '0') break;
      }
      await c.quit();
    },
  };
}

const pgBase = await postgresUrl();
const redisBase = await redisUrl();
const backends = [
  { name: 'postgres', base: pgBase, open: postgresStore },
  { name: 'redis', base: redisBase, open: redisStore },
];

beforeAll(() => ensureBuilt(), 180_000);

describe.each(backends)('crm-upsert sync --ledger $name://…', ({ base, open }) => {
  const stores: Store[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.drop()));
  });

  it.skipIf(base === undefined)('writes every line on the first run and replays every line with 0 API calls on the second', async () => {
    const store = await open(base!);
    stores.push(store);
    const fake = fakeHubSpot();
    const server = await fake.listen();
    try {
      const dir = tempDir();
      const config = writeHubSpotConfig(dir, server.basePath);
      const file = join(dir, 'actions.jsonl');
      pairsFile(file, PAIRS);
      const run = async (n: number) => {
        const report = join(dir, `report-${n}.json`);
        const result = await runCli(['sync', file, '--config', config, '--ledger', store.url, '--report', report], { env });
        return { ...result, report: JSON.parse(readFileSync(report, 'utf8')) as { counts: Record<string, number>; apiCalls: number } };
      };

      const first = await run(1);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.report.counts).toEqual({ created: 2 * PAIRS });
      const callsAfterFirst = fake.count();
      expect(callsAfterFirst).toBeGreaterThan(0);
      expect(fake.records('contacts')).toHaveLength(PAIRS);
      expect(fake.records('notes')).toHaveLength(PAIRS);

      const second = await run(2);
      expect(second.code).toBe(0);
      expect(second.report.counts).toEqual({ replayed: 2 * PAIRS });
      expect(second.report.apiCalls).toBe(0);
      expect(fake.count()).toBe(callsAfterFirst);
      expect(fake.records('contacts')).toHaveLength(PAIRS);
      expect(fake.records('notes')).toHaveLength(PAIRS);
      // The shared store holds the ledger, not the config's SQLite file.
      expect(existsSync(join(dir, 'ledger.db'))).toBe(false);
      const ledger = openLedger(store.url);
      try {
        expect((await ledger.list({ status: 'completed', limit: 1_000 })).length).toBeGreaterThanOrEqual(2 * PAIRS);
      } finally {
        await ledger.close();
      }
    } finally {
      await server.close();
    }
  }, 120_000);
});
