/** The Redis ledger's options. */
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
