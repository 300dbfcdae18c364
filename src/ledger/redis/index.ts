/**
 * The Redis ledger (`crm-upsert-sync/ledger/redis`) on ioredis 5. Each batch is one Lua script
 * (EVALSHA), which Redis runs atomically. Scripts take time from the caller's `now` (which the
 * engine derives from `clock()`, Redis TIME). Durability needs AOF and no eviction: see docs/ledger.md.
 *
 * Layout under `prefix` (default `{crm-upsert}:`; the braces keep every key in one Cluster slot):
 *   e:<key> hash per entry · m:<id> mark string · w:<id> window slot hash · idx sorted set of keys ·
 *   floor: above every token of an entry that was pruned or can expire
 *
 * Role files: ledger.ts (the backend), scripts.ts (its Lua), durability.ts (what INFO says).
 */
import type { Redis } from 'ioredis';

export interface RedisLedgerOptions {
  /** `redis://[:password@]host:6379[/db]` or `rediss://…`; the ledger owns (and quits) the client it builds. */
  url?: string;
  /** Or an existing ioredis client; the caller keeps ownership (close() does not quit it). */
  client?: Redis;
  /** Prefix of every key the ledger writes. Default `{crm-upsert}:`. */
  prefix?: string;
  /** False opens the ledger read-only: reads work, writes throw (Redis has no schema to create). Default true. */
  createSchema?: boolean;
  /**
   * What `isDurable()` answers, without asking the server. Default: ask it once (AOF on and
   * `maxmemory-policy noeviction`, from INFO).
   */
  durable?: boolean;
}

export { redisLedger } from './ledger.js';
