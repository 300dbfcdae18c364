/**
 * Checks made before the first write, so a run that cannot finish fails at once with exit 2
 * instead of after it has written half its input: the report path, the ledger's location, and
 * the shared rate budget's driver and store.
 */
import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from './config.js';
import { UsageError } from './exit.js';

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err)) || (err as NodeJS.ErrnoException).code || 'unknown error';

/**
 * `mkdir -p`, one level at a time. Node's own recursive mkdir never returns on paths such as
 * /proc/x (the kernel answers ENOENT for every level and it retries forever, blocking the
 * thread, so not even SIGTERM is handled): this one fails with the level it could not create.
 */
export function ensureDir(dir: string, what: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    try {
      if (!statSync(at).isDirectory()) throw new UsageError(`${what}: ${at} is not a directory`);
      break;
    } catch (err) {
      if (err instanceof UsageError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(`${what}: cannot use directory ${at}: ${reasonOf(err)}`);
      missing.unshift(at);
      const up = dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new UsageError(`${what}: cannot create directory ${level}: ${reasonOf(err)}`);
    }
  }
}

/** The report file can be written: its directory exists (created if missing) and the file opens for writing. */
export function checkReportPath(path: string): void {
  ensureDir(dirname(path), `--report ${path}`);
  try {
    // Append mode: an existing report is left as it is until this run replaces it.
    closeSync(openSync(path, 'a'));
  } catch (err) {
    throw new UsageError(`--report ${path}: cannot open it for writing: ${reasonOf(err)}`);
  }
}

/** The SQLite file of a `sqlite:PATH` URL, or undefined for other ledgers and `sqlite::memory:`. */
export function sqlitePath(url: string): string | undefined {
  const m = /^sqlite:(.+)$/i.exec(url);
  if (!m || m[1] === ':memory:') return undefined;
  return m[1]!.replace(/^\/\/(?=\/)/, '');
}

/** The ledger can hold this run: a SQLite ledger's directory exists or can be made and is writable; `--job` has a shared ledger. */
export function checkLedgerTarget(url: string, options: { job?: string } = {}): void {
  if (options.job && /^memory:/i.test(url)) {
    throw new UsageError(`--job ${options.job} needs a ledger other runs can see: a memory: ledger lives inside this process, so two overlapping runs would both hold the lock; use sqlite:PATH, postgres:// or redis://`);
  }
  const file = sqlitePath(url);
  if (file === undefined) return;
  const dir = dirname(resolve(file));
  ensureDir(dir, `sqlite ledger ${file}`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new UsageError(`sqlite ledger ${file}: directory ${dir} is not writable: ${reasonOf(err)}`);
  }
}

/** Imports a driver by package name; injectable so a missing driver can be tested. */
export type Importer = (name: string) => Promise<unknown>;

const PROBE_TIMEOUT_MS = 5_000;

async function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms (${what})`)), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface RedisLike { readonly status: string; connect(): Promise<void>; ping(): Promise<unknown>; on(event: string, fn: (err: Error) => void): void; disconnect(): void }
interface PgClientLike { connect(): Promise<void>; query(sql: string): Promise<unknown>; end(): Promise<void>; on(event: string, fn: (err: Error) => void): void }

/** `sharedRateBudget`: its driver (ioredis or pg, and rate-limiter-flexible for Redis) is installed and its store answers. */
export async function checkSharedRateBudget(config: Config, load: Importer = (name) => import(name)): Promise<void> {
  const shared = config.sharedRateBudget;
  if (!shared) return;
  const redis = /^rediss?:/i.test(shared.url);
  const where = `sharedRateBudget.url ${shared.url.replace(/(\/\/[^/@:\s]*):[^@\s]*@/, '$1:[redacted]@')}`;
  const drivers = redis ? ['ioredis', 'rate-limiter-flexible'] : ['pg'];
  const modules: Record<string, unknown> = {};
  for (const name of drivers) {
    try {
      modules[name] = await load(name);
    } catch (err) {
      throw new UsageError(`${where} needs the package ${name}, which cannot be loaded (${reasonOf(err)}): install it with npm install ${name}`);
    }
  }
  // ioredis rejects connect() with "Connection is closed."; the socket's own error says why.
  let socketError: Error | undefined;
  try {
    if (redis) {
      const { Redis } = modules.ioredis as { Redis: new (url: string, o: object) => RedisLike };
      const client = new Redis(shared.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: PROBE_TIMEOUT_MS });
      client.on('error', (err) => (socketError ??= err));
      try {
        await withTimeout('PING', client.connect().then(() => client.ping()));
      } finally {
        // After a failed connect the client is already ended; disconnect() would arm a 2 s timer.
        if (client.status !== 'end') client.disconnect();
      }
    } else {
      const pg = (modules.pg as { default?: unknown }).default ?? modules.pg;
      const { Client } = pg as { Client: new (o: object) => PgClientLike };
      const client = new Client({ connectionString: shared.url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
      client.on('error', () => undefined);
      try {
        await withTimeout('SELECT 1', client.connect().then(() => client.query('SELECT 1')));
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  } catch (err) {
    throw new UsageError(`${where} is unreachable: ${reasonOf(socketError ?? err)}; the run needs it for every CRM request`);
  }
}
