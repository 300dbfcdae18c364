/**
 * The Redis ledger (`crm-upsert-sync/ledger/redis`) on ioredis 5. Each batch is one Lua script
 * (EVALSHA), which Redis runs atomically. Scripts take time from the caller's `now` (which the
 * engine derives from `clock()`, Redis TIME). Durability needs AOF and no eviction: see docs/ledger.md.
 *
 * Layout under `prefix` (default `{crm-upsert}:`; the braces keep every key in one Cluster slot):
 *   e:<key> hash per entry · m:<id> mark string · w:<id> window slot hash · idx sorted set of keys ·
 *   floor: above every token of an entry that was pruned or can expire
 *
 * Needs the optional peer `ioredis`: importing this entry without it throws a ConfigError naming
 * the package and the install command, as `openLedger('redis://…')` does.
 *
 * Role files: options.ts, ledger.ts (the backend), scripts.ts (its Lua), durability.ts (what INFO says).
 */
export type { RedisLedgerOptions } from './options.js';
export { redisLedger } from './ledger.js';
