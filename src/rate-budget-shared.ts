/**
 * A request budget shared by every worker of one CRM account (HubSpot's 10-second limit is
 * per account, so a limiter inside one process cannot see the others): a sliding-window log in
 * Redis (through rate-limiter-flexible's script hook) or in a Postgres table (one function call
 * per grant). Drivers load on the first `acquire`, never on import.
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { ConfigError, LedgerError, registerSecret } from './errors.js';
import { announceBudgetWait, type RateBudget } from './rate-budget.js';

export type SharedRateStore =
  /** An ioredis client (a private duplicate connection is used) or a `redis://` URL. */
  | { redis: Redis | string }
  /** A `pg.Pool` (the caller keeps ownership) or a `postgres://` connection string. */
  | { postgres: Pool | string };

export interface SharedRateBudgetOptions {
  /** Requests allowed per window, across all workers sharing `keyPrefix`. */
  points: number;
  /** Window length in ms (sliding), at least 1000. */
  durationMs: number;
  /**
   * Extra ms each grant stays counted. The CRM counts a request when it arrives, not when it was
   * granted; without a margin, a request granted the instant an older one aged out here and sent
   * faster than that one overruns the CRM's own window (a 429 at exactly `points`). Default 250.
   */
  marginMs?: number;
  /** Budgets with the same prefix share one allowance (one per CRM account). Default `crm-upsert:budget`. */
  keyPrefix?: string;
  /** Postgres table holding the grants (and `<table>_take`, the function that takes them). Default `crm_upsert_rate_budget`. */
  tableName?: string;
  /** What this budget stands for in a wait's description (`observeWaits`). Default `shared rate budget`. */
  label?: string;
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

/** Take `cost` grants: resolves to 0 when granted, else the ms to wait before asking again. */
type Take = (cost: number) => Promise<number>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The same sliding-window log in Postgres: one row per grant, taken under a transaction-scoped
 * advisory lock on the key so concurrent workers count one after another. Returns 0 when granted,
 * else the ms to wait until enough grants age out. Time is the database's clock, shared by all.
 */
const postgresTakeFunction = (table: string) => `
CREATE TABLE IF NOT EXISTS "${table}" (key text NOT NULL, at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS "${table}_key_at" ON "${table}" (key, at);
CREATE OR REPLACE FUNCTION "${table}_take"(k text, cost int, pts int, window_ms bigint) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  n int;
  oldest bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('${table}:' || k));
  DELETE FROM "${table}" WHERE key = k AND at <= now_ms - window_ms;
  SELECT count(*) INTO n FROM "${table}" WHERE key = k;
  IF n + cost <= pts THEN
    INSERT INTO "${table}" (key, at) SELECT k, now_ms FROM generate_series(1, cost);
    RETURN 0;
  END IF;
  SELECT at INTO oldest FROM "${table}" WHERE key = k ORDER BY at OFFSET (n + cost - pts - 1) LIMIT 1;
  RETURN greatest(1, oldest + window_ms - now_ms + 1);
END
$fn$;`;

/**
 * A budget shared through Redis or Postgres: `acquire` waits (never fails) until the request
 * fits. Both keep a sliding window: never more than `points` acquisitions in any `durationMs`
 * (plus `marginMs`).
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

  const build = async (): Promise<Take> => {
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
      const rlf = await import('rate-limiter-flexible');
      const limiter = new rlf.RateLimiterRedis({
        storeClient: client, points, duration: windowS, keyPrefix, customIncrTtlLuaScript: SLIDING_WINDOW_LUA,
      });
      return async (cost) => {
        try {
          await limiter.consume('crm', cost);
          return 0;
        } catch (refusal) {
          // rate-limiter-flexible rejects with its result (msBeforeNext) when over, with an Error when the store failed.
          const wait = (refusal as { msBeforeNext?: unknown }).msBeforeNext;
          if (refusal instanceof Error || typeof wait !== 'number') throw refusal;
          return Math.max(1, wait);
        }
      };
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
    const table = options.tableName ?? 'crm_upsert_rate_budget';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,50}$/.test(table)) throw new ConfigError(`shared rate budget tableName "${table}" must be a plain identifier`);
    const client = await pool.connect();
    try {
      // Several workers may start at once: one creates the table and function, the others wait.
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('crm-upsert-budget-ddl:${table}'))`);
      await client.query(postgresTakeFunction(table));
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    const windowMs = Math.round(windowS * 1000);
    return async (cost) => {
      const res = await pool.query<{ wait: string }>(`SELECT "${table}_take"($1, $2, $3, $4) AS wait`, [`${keyPrefix}:crm`, cost, points, windowMs]);
      return Number(res.rows[0]!.wait);
    };
  };

  let ready: Promise<Take> | undefined;
  let queue: Promise<void> = Promise.resolve();

  const take = async (cost: number) => {
    if (cost > points) throw new RangeError(`a cost of ${cost} can never fit a budget of ${points} per window`);
    ready ??= build().catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
    let takeGrants: Take;
    try {
      takeGrants = await ready;
    } catch (err) {
      throw new LedgerError(`shared rate budget cannot connect: ${(err as Error).message}`, { cause: err });
    }
    for (;;) {
      let wait: number;
      try {
        wait = await takeGrants(cost);
      } catch (err) {
        throw new LedgerError(`shared rate budget failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
      }
      if (wait <= 0) return;
      announceBudgetWait(wait, options.label ?? 'shared rate budget');
      await sleep(wait);
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
