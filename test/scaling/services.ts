/**
 * The two shared ledgers the scaling tests run on: the first Postgres URL that answers and the
 * Redis at REDIS_URL. Each resolves to undefined (skip, with a message) when unreachable, and
 * fails its test file in CI.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { POSTGRES_URLS, REDIS_URL, requireService } from '../helpers/services.js';

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

export const postgresUrl = () => requireService('postgres', reachablePostgres, 10_000);
export const redisUrl = () => requireService(`redis at ${REDIS_URL}`, reachableRedis, 10_000);

/** Write outcomes (the worker that did the work for a key) summed over every worker's final report. */
export function writes(outcomes: unknown): number {
  let n = 0;
  for (const o of outcomes as { counts: Record<string, number> }[]) {
    n += (o.counts.created ?? 0) + (o.counts.updated ?? 0) + (o.counts.unchanged ?? 0);
  }
  return n;
}
