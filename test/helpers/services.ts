/**
 * External services (Postgres, Redis) for the tests that need them. Outside CI an unreachable
 * service skips those tests with a message saying why; in CI (CI=true) it fails them instead,
 * so a green CI run never hides a skipped backend.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
export const POSTGRES_URLS = [
  process.env.TEST_POSTGRES_URL,
  'postgres://postgres@127.0.0.1:5432/test',
  'postgres://root@127.0.0.1:5432/test',
].filter((u): u is string => typeof u === 'string' && u !== '');

export const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** A unique, identifier-safe name for this test run (table and key prefixes). */
export const runId = (): string => `t${process.pid.toString(36)}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/**
 * Resolves to the probe's value when the service answers, or undefined (skip) when it does not.
 * With CI=true an unreachable service throws, failing the test file with the reason.
 */
export async function requireService<T>(name: string, probe: () => Promise<T>, timeoutMs = 5000): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (process.env.CI === 'true') {
      throw new Error(`${name} is required in CI but unreachable: ${reason}`, { cause: err });
    }
    console.warn(`[skip] ${name} tests skipped: ${name} is unreachable (${reason}). Set CI=true to make this a failure.`);
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

async function reachablePostgres(): Promise<string> {
  const errors: string[] = [];
  for (const url of POSTGRES_URLS) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return url;
    } catch (err) {
      errors.push(`${url.replace(/:[^:@/]*@/, ':***@')}: ${(err as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error(errors.join('; '));
}

async function reachableRedis(): Promise<string> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return REDIS_URL;
  } finally {
    client.disconnect();
  }
}

/** The first Postgres URL that answers; undefined (skip) when none does, a failure in CI. */
export const postgresUrl = (): Promise<string | undefined> => requireService('postgres', reachablePostgres, 10_000);

/** REDIS_URL when Redis answers; undefined (skip) when it does not, a failure in CI. */
export const redisUrl = (): Promise<string | undefined> => requireService(`redis at ${REDIS_URL}`, reachableRedis, 10_000);

/** Deletes every Redis key under `prefix` (a test's own keys), in pages. */
export async function dropRedisKeys(prefix: string): Promise<void> {
  const c = new Redis(REDIS_URL);
  try {
    for (let cursor = '0'; ;) {
      const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
      if (keys.length > 0) await c.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    await c.quit();
  }
}

/** A ledger a test can open again at the same place (as a new process would), and remove after. */
export interface LedgerUnderTest {
  url: string;
  options: Record<string, string>;
  drop(): Promise<void>;
}

/** A SQLite file in a fresh temporary folder. */
export function sqliteLedgerUnderTest(): LedgerUnderTest {
  const dir = mkdtempSync(join(tmpdir(), 'crm-ledger-'));
  return { url: `sqlite:${join(dir, 'ledger.db')}`, options: {}, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** Tables of their own on the test Postgres; undefined (skip) when it does not answer, a failure in CI. */
export async function postgresLedgerUnderTest(): Promise<LedgerUnderTest | undefined> {
  const url = await postgresUrl();
  if (url === undefined) return undefined;
  const tablePrefix = `${runId()}_`;
  return {
    url, options: { tablePrefix },
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE tablename LIKE $1', [`${tablePrefix}%`]);
        for (const { tablename } of rows) await client.query(`DROP TABLE IF EXISTS "${tablename}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A key prefix of its own on the test Redis; undefined (skip) when it does not answer, a failure in CI. */
export async function redisLedgerUnderTest(): Promise<LedgerUnderTest | undefined> {
  const url = await redisUrl();
  if (url === undefined) return undefined;
  const prefix = `{${runId()}}:`;
  return { url, options: { keyPrefix: prefix }, drop: () => dropRedisKeys(prefix) };
}
