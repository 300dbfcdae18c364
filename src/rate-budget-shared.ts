/**
 * A request budget shared by every worker of one CRM account (HubSpot's 10-second limit is
 * per account, so a limiter inside one process cannot see the others), kept in Redis or
 * Postgres through rate-limiter-flexible. Drivers load on the first `acquire`, never on import.
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { ConfigError, LedgerError, registerSecret } from './errors.js';
import type { RateBudget } from './rate-budget.js';

export type SharedRateStore =
  /** An ioredis client (a private duplicate connection is used) or a `redis://` URL. */
  | { redis: Redis | string }
  /** A `pg.Pool` (the caller keeps ownership) or a `postgres://` connection string. */
  | { postgres: Pool | string };

export interface SharedRateBudgetOptions {
  /** Requests allowed per window, across all workers sharing `keyPrefix`. */
  points: number;
  /** Window length in ms. Redis: sliding, at least 1000. Postgres: see below. */
  durationMs: number;
  /**
   * Extra ms each grant stays counted. The CRM counts a request when it arrives, not when it was
   * granted; without a margin, a request granted the instant an older one aged out here and sent
   * faster than that one overruns the CRM's own window (a 429 at exactly `points`). Default 250.
   */
  marginMs?: number;
  /** Budgets with the same prefix share one allowance (one per CRM account). Default `crm-upsert:budget`. */
  keyPrefix?: string;
  /** Postgres table holding the counters. Default `crm_upsert_rate_budget`. */
  tableName?: string;
}

export interface SharedRateBudget extends RateBudget {
  /** Closes connections this budget opened (not a pool you passed in). */
  close(): Promise<void>;
}

/**
 * Sliding-window log in one sorted set, run through rate-limiter-flexible's custom-script hook:
 * its own script is a fixed window, which lets 2×points through around a window boundary.
 * A refused request adds nothing, and the reply's ttl is the wait until enough entries age out.
 * ARGV: cost, whole seconds (unused), points, duration in seconds (may be fractional).
 */
const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local cost = tonumber(ARGV[1])
local points = tonumber(ARGV[3])
local windowMs = math.floor(tonumber(ARGV[4]) * 1000)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
local count = redis.call('ZCARD', key)
if count + cost <= points then
  for i = 1, cost do
    redis.call('ZADD', key, now, t[1] .. t[2] .. ':' .. count .. ':' .. i)
  end
  redis.call('PEXPIRE', key, windowMs)
  return {count + cost, windowMs}
end
local oldest = redis.call('ZRANGE', key, count + cost - points - 1, count + cost - points - 1, 'WITHSCORES')
local wait = windowMs
if oldest[2] then wait = tonumber(oldest[2]) + windowMs - now + 1 end
return {points + cost, math.max(1, wait)}
`;

interface Limiter {
  consume(key: string, points?: number): Promise<unknown>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A budget shared through Redis or Postgres: `acquire` waits (never fails) until the request
 * fits. Redis keeps a sliding window: never more than `points` acquisitions in any `durationMs`
 * (plus `marginMs`).
 * Postgres (rate-limiter-flexible's fixed windows) grants `floor(points / 2)` per window so that
 * two adjacent windows together still stay within `points` in any `durationMs`.
 */
export function sharedRateBudget(store: SharedRateStore, options: SharedRateBudgetOptions): SharedRateBudget {
  const { points, durationMs } = options;
  if (!Number.isInteger(points) || points < 1) throw new ConfigError('shared rate budget needs an integer points >= 1');
  if (!(durationMs >= 1000)) throw new ConfigError('shared rate budget needs durationMs >= 1000');
  const marginMs = options.marginMs ?? 250;
  if (!(marginMs >= 0) || !Number.isFinite(marginMs)) throw new ConfigError('shared rate budget needs a finite marginMs >= 0');
  const windowS = (durationMs + marginMs) / 1000;
  const keyPrefix = options.keyPrefix ?? 'crm-upsert:budget';
  const closers: (() => Promise<void>)[] = [];

  const build = async (): Promise<{ limiter: Limiter; perWindow: number }> => {
    const rlf = await import('rate-limiter-flexible');
    if ('redis' in store) {
      const { Redis: RedisClient } = await import('ioredis');
      let client: Redis;
      if (typeof store.redis === 'string') {
        try { registerSecret(decodeURIComponent(new URL(store.redis).password)); } catch { /* not a URL */ }
        client = new RedisClient(store.redis, { maxRetriesPerRequest: 2 });
      } else {
        // A private connection: rate-limiter-flexible defines its script under one fixed command
        // name, which would replace the script of any other limiter on a shared client.
        client = store.redis.duplicate();
      }
      client.on('error', () => undefined);
      closers.push(async () => { await client.quit().catch(() => client.disconnect()); });
      const limiter = new rlf.RateLimiterRedis({
        storeClient: client, points, duration: windowS, keyPrefix, customIncrTtlLuaScript: SLIDING_WINDOW_LUA,
      });
      return { limiter, perWindow: points };
    }
    let pool: Pool;
    if (typeof store.postgres === 'string') {
      try { registerSecret(decodeURIComponent(new URL(store.postgres).password)); } catch { /* not a URL */ }
      const pg = (await import('pg')).default;
      const owned = new pg.Pool({ connectionString: store.postgres, max: 2 });
      owned.on('error', () => undefined);
      closers.push(() => owned.end());
      pool = owned;
    } else {
      pool = store.postgres;
    }
    const perWindow = Math.max(1, Math.floor(points / 2));
    const limiter = await new Promise<Limiter>((resolve, reject) => {
      const l: Limiter = new rlf.RateLimiterPostgres({
        storeClient: pool, storeType: 'pool', points: perWindow, duration: windowS, keyPrefix,
        tableName: options.tableName ?? 'crm_upsert_rate_budget',
      }, (err?: unknown) => (err ? reject(err) : resolve(l)));
    });
    return { limiter, perWindow };
  };

  let ready: Promise<{ limiter: Limiter; perWindow: number }> | undefined;
  let queue: Promise<void> = Promise.resolve();

  const take = async (cost: number) => {
    ready ??= build().catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
    let setup: { limiter: Limiter; perWindow: number };
    try {
      setup = await ready;
    } catch (err) {
      throw new LedgerError(`shared rate budget cannot connect: ${(err as Error).message}`, { cause: err });
    }
    if (cost > setup.perWindow) throw new RangeError(`a cost of ${cost} can never fit a budget of ${setup.perWindow} per window`);
    for (;;) {
      try {
        await setup.limiter.consume('crm', cost);
        return;
      } catch (err) {
        const wait = (err as { msBeforeNext?: unknown }).msBeforeNext;
        if (err instanceof Error || typeof wait !== 'number') {
          throw new LedgerError(`shared rate budget failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
        }
        await sleep(Math.max(1, wait));
      }
    }
  };

  return {
    acquire(cost = 1) {
      // Serialised so that waiters in this process are served in arrival order.
      const turn = queue.then(() => take(cost));
      queue = turn.catch(() => undefined);
      return turn;
    },
    async close() {
      const all = closers.splice(0);
      ready = undefined;
      await Promise.all(all.map((c) => c()));
    },
  };
}
