/**
 * `openLedger(url)`: pick a ledger backend by URL without loading its driver until first use,
 * so importing the package root never loads better-sqlite3, pg or ioredis.
 *
 * Rule for future backends: a backend must refuse construction (throw ConfigError) when its
 * store cannot do an atomic conditional write (compare-and-set / conditional upsert / script),
 * because claim and fencing are built on it. memory, sqlite, postgres and redis all can.
 */
import { ConfigError, LedgerError, redact } from '../errors.js';
import { readOnlyRefusal } from './kit/failures.js';
import type { LedgerBackend } from './types.js';

export * from './types.js';

export interface OpenLedgerOptions {
  /** sqlite: how long a writer waits for another process's lock. Default 5000. */
  busyTimeoutMs?: number;
  /** postgres: prefix of the ledger's table names. Default `crm_upsert_`. */
  tablePrefix?: string;
  /** postgres: schema holding the tables. Default `public`. */
  schema?: string;
  /** redis: prefix of every key the ledger writes. Default `{crm-upsert}:`. */
  keyPrefix?: string;
  /**
   * Create tables (and run migrations) on first use. Default true. False for read-only uses such
   * as `--dry-run`: reads of a ledger that was never created find nothing, and writes throw.
   */
  createSchema?: boolean;
  /** redis: treat the server as durable (AOF, no eviction) without asking it. Default: ask it. */
  durable?: boolean;
}

const ACCEPTED = 'memory:, sqlite:PATH, postgres://, postgresql://, redis://, rediss://';

const METHODS = [
  'claim', 'complete', 'fail', 'release', 'renew', 'get', 'list', 'prune', 'windowAcquire', 'windowSettle', 'close',
] as const;

/** True when `x` has every method of the LedgerBackend contract. */
export function isLedgerBackend(x: unknown): x is LedgerBackend {
  if (typeof x !== 'object' || x === null) return false;
  const o = x as Record<string, unknown>;
  return typeof o.name === 'string' && METHODS.every((m) => typeof o[m] === 'function');
}

/** The URL with any userinfo password removed (redact() alone misses `redis://:secret@host`). */
export function safeLedgerUrl(url: string): string {
  return redact(url.replace(/(\/\/[^/@:\s]*):[^@\s]*@/, '$1:[redacted]@'));
}

type Loader = () => Promise<LedgerBackend>;

/** `host:port` of a postgres:// or redis:// URL (default ports filled in), for messages; undefined for other URLs. */
export function ledgerEndpoint(url: string): string | undefined {
  try {
    const u = new URL(url);
    const redis = /^rediss?:$/.test(u.protocol);
    if (!redis && !/^postgres(ql)?:$/.test(u.protocol)) return undefined;
    const host = u.hostname || u.searchParams.get('host') || 'localhost';
    return `${host}:${u.port || (redis ? '6379' : '5432')}`;
  } catch {
    return undefined;
  }
}

/**
 * Every method of `backend`, with a driver failure's message naming the server it could not
 * reach (`redis ledger at 10.0.0.5:6379: clock failed: ...`): ioredis' own messages do not.
 */
function locateFailures(backend: LedgerBackend, name: string, where: string | undefined): LedgerBackend {
  if (!where) return backend;
  const locate = (err: unknown): never => {
    if (!(err instanceof LedgerError) || err.cause === undefined) throw err;
    const message = err.message.replace(/^\[crm-upsert\] /, '');
    if (!message.startsWith(`${name} ledger `)) throw err;
    throw new LedgerError(`${name} ledger at ${where}: ${message.slice(name.length + 8)}`, { cause: err.cause });
  };
  const located: Record<string, unknown> = { ...backend };
  for (const [method, fn] of Object.entries(backend)) {
    if (typeof fn === 'function') located[method] = (...args: unknown[]) => (fn as (...a: unknown[]) => Promise<unknown>)(...args).catch(locate);
  }
  return located as unknown as LedgerBackend;
}

/** `hasClock`: the backend has a clock of its own, so the wrapper offers `clock()` before loading it. */
function loaderFor(url: string, options: OpenLedgerOptions): { name: string; load: Loader; hasClock?: boolean } {
  const { createSchema } = options;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'memory':
      return { name: 'memory', load: async () => (await import('./memory.js')).memoryLedger() };
    case 'sqlite': {
      const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
      if (path === '') throw new ConfigError(`ledger URL ${safeLedgerUrl(url)} names no file: use sqlite:PATH or sqlite::memory:`);
      return {
        name: 'sqlite',
        load: async () => (await import('./sqlite.js')).sqliteLedger({ path, busyTimeoutMs: options.busyTimeoutMs, createSchema }),
      };
    }
    case 'postgres':
    case 'postgresql':
      return {
        name: 'postgres',
        hasClock: true,
        load: async () => (await import('./postgres/index.js')).postgresLedger({
          connectionString: url, tablePrefix: options.tablePrefix, schema: options.schema, createSchema,
        }),
      };
    case 'redis':
    case 'rediss':
      return {
        name: 'redis',
        hasClock: true,
        load: async () => (await import('./redis/index.js')).redisLedger({ url, prefix: options.keyPrefix, createSchema, durable: options.durable }),
      };
    default:
      throw new ConfigError(
        `unsupported ledger URL scheme ${scheme === undefined ? '(none)' : `"${scheme}:"`} in ${safeLedgerUrl(url)}; accepted: ${ACCEPTED}`,
      );
  }
}

/**
 * A ledger backend for `url`: `memory:`, `sqlite:PATH` (relative to the working directory;
 * `sqlite::memory:`), `postgres://…`/`postgresql://…`, `redis://…`/`rediss://…`.
 * Synchronous: the driver is imported on the first call. Unknown schemes throw ConfigError.
 */
export function openLedger(url: string, options: OpenLedgerOptions = {}): LedgerBackend {
  const { name, load, hasClock } = loaderFor(url, options);
  let backend: Promise<LedgerBackend> | undefined;
  let closed = false;

  const ready = (): Promise<LedgerBackend> => {
    if (closed) return Promise.reject(new LedgerError(`${name} ledger is closed`));
    backend ??= load().catch((err: unknown) => {
      backend = undefined;
      // A backend whose driver is missing throws its own ConfigError saying what to install.
      if (err instanceof ConfigError || err instanceof LedgerError) throw err;
      throw new LedgerError(`cannot open ${name} ledger ${safeLedgerUrl(url)}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    });
    return backend;
  };

  // Refused here too, so a read-only open of any backend (memory included) never even loads to write.
  const writable = async (what: string): Promise<LedgerBackend> => {
    if (options.createSchema === false) throw readOnlyRefusal(`${name} ledger`, what);
    return ready();
  };

  return locateFailures({
    name,
    claim: async (requests, now) => (await writable('claim')).claim(requests, now),
    complete: async (requests, now) => (await writable('complete')).complete(requests, now),
    fail: async (requests, now) => (await writable('fail')).fail(requests, now),
    release: async (requests, now) => (await writable('release')).release(requests, now),
    renew: async (requests, leaseMs, now) => (await writable('renew')).renew(requests, leaseMs, now),
    // Every backend this opens keeps notes: offered before loading, as clock() is.
    note: async (requests, now) => {
      const b = await writable('note');
      if (!b.note) throw new LedgerError(`${name} ledger keeps no notes`);
      return b.note(requests, now);
    },
    get: async (key) => (await ready()).get(key),
    // Every backend this opens has getMany; the engine claims every key of one that had not.
    getMany: async (keys) => {
      const b = await ready();
      return b.getMany ? b.getMany(keys) : Promise.all(keys.map((k) => b.get(k)));
    },
    // Every backend this opens has heldBy too; none found is what a backend without it can say.
    heldBy: async (ids) => {
      const b = await ready();
      return b.heldBy ? b.heldBy(ids) : ids.map(() => null);
    },
    // Every backend this opens reads marks too.
    readMarks: async (ids) => {
      const b = await ready();
      return b.readMarks ? b.readMarks(ids) : ids.map(() => null);
    },
    list: async (options) => (await ready()).list(options),
    prune: async (now, olderThan) => (await writable('prune')).prune(now, olderThan),
    windowAcquire: async (requests, now) => (await writable('windowAcquire')).windowAcquire(requests, now),
    windowSettle: async (requests, now) => (await writable('windowSettle')).windowSettle(requests, now),
    ...(hasClock ? {
      clock: async () => {
        const backend = await ready();
        return backend.clock ? backend.clock() : Date.now();
      },
    } : {}),
    isDurable: async () => {
      const backend = await ready();
      return backend.isDurable ? backend.isDurable() : false;
    },
    bornAt: async () => {
      const backend = await ready();
      return backend.bornAt ? backend.bornAt() : null;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      const opened = backend;
      backend = undefined;
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  }, name, ledgerEndpoint(url));
}
