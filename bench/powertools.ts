/**
 * bench:powertools — side by side with AWS Powertools' idempotency utility on the same Redis
 * (127.0.0.1:6379): 10,000 guarded calls, 30% of them duplicates (seeded shuffle), each guarded
 * function trivial so the guard's cost is what is measured.
 *
 *   powertools:  makeIdempotent(fn, { persistenceStore: CachePersistenceLayer(@redis/client) })
 *   ours-once:   sync.once(key, fn) with the Redis ledger, one call at a time (the same shape),
 *                then both again with `--concurrency` callers in flight (default 50): concurrent
 *                once calls share their claim and completion round trips
 *   ours-batch:  applyMany of the same 10,000 as actions in chunks of 1,000 (accepting CRM)
 *
 * Round trips are counted on the client side: @redis/client get/set/del calls for Powertools,
 * every command ioredis sends (sendCommand) for ours; each is one network round trip.
 *
 * `--passes=N` runs the whole interleaved sequence N times and reports each approach's median
 * rate (its pass rates beside it) and the ratios of the medians: on a shared machine one pass
 * swings with whatever else runs.
 *
 *   npm run bench:powertools
 *   npm run bench:powertools -- --calls=2000 --concurrency=20
 *   npm run bench:powertools -- --passes=5
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { CrmAdapter } from '../src/adapter.js';
import { createSync } from '../src/engine/index.js';
import { CrmError } from '../src/errors.js';
import { redisLedger } from '../src/ledger/redis/index.js';
import { seededRandom } from '../adapters/testing/fake-http.js';
import { isMain, main, numberArg, pool, round, seconds } from './lib.js';

export interface PowertoolsOptions {
  calls: number;
  /** Callers in flight at once in the concurrent runs. */
  concurrency: number;
  duplicateShare: number;
  redisUrl: string;
  seed: number;
  /** Whole interleaved sequences to run; the report takes each approach's median. Default 1. */
  passes?: number;
}

/** Event ids in call order: distinct ones plus repeats, shuffled. */
export function callOrder(o: PowertoolsOptions): string[] {
  const distinct = Math.round(o.calls * (1 - o.duplicateShare));
  const random = seededRandom(o.seed);
  const ids = Array.from({ length: distinct }, (_, i) => `evt-${i}`);
  while (ids.length < o.calls) ids.push(`evt-${Math.floor(random() * distinct)}`);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids;
}

/** Count every command an ioredis client sends. */
function countCommands(client: Redis): Record<string, number> {
  const counts: Record<string, number> = {};
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, stream?: unknown) => {
    counts[command.name] = (counts[command.name] ?? 0) + 1;
    return send(command as never, stream as never);
  }) as typeof client.sendCommand;
  return counts;
}

async function scanDelete(client: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 5_000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const packageVersion = (name: string): string => {
  try {
    return (JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
};

const total = (c: Record<string, number>) => Object.values(c).reduce((s, n) => s + n, 0);

async function powertools(o: PowertoolsOptions, order: string[], run: string, concurrency = 1): Promise<Record<string, unknown>> {
  let mod: typeof import('@aws-lambda-powertools/idempotency');
  let cache: typeof import('@aws-lambda-powertools/idempotency/cache');
  let redis: typeof import('@redis/client');
  try {
    mod = await import('@aws-lambda-powertools/idempotency');
    cache = await import('@aws-lambda-powertools/idempotency/cache');
    redis = await import('@redis/client');
  } catch (err) {
    return { approach: 'powertools', error: `does not load on Node ${process.version}: ${(err as Error).message}` };
  }
  const client = await redis.createClient({ url: o.redisUrl }).connect();
  const counts: Record<string, number> = {};
  const counted = {
    get: (k: string) => ((counts.get = (counts.get ?? 0) + 1), client.get(k)),
    set: (k: string, v: unknown, opts?: unknown) => ((counts.set = (counts.set ?? 0) + 1), client.set(k, v as string, opts as never)),
    del: (keys: string[]) => ((counts.del = (counts.del ?? 0) + 1), client.del(keys)),
  };
  const persistenceStore = new cache.CachePersistenceLayer({ client: counted as never });
  const config = new mod.IdempotencyConfig({ eventKeyJmesPath: 'id' });
  // Outside Lambda there is no remaining-time context; without one it warns on every call.
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 60_000 } as never);
  let executions = 0;
  const guarded = mod.makeIdempotent(async (event: { id: string }) => {
    executions += 1;
    return { handled: event.id };
  }, { persistenceStore, config, keyPrefix: `bench-pt-${run}` });
  try {
    const t0 = performance.now();
    // Concurrent duplicates: Powertools refuses the second caller while the first runs (the caller
    // would retry later); counted, not retried, so its rate is not charged for the wait.
    let inProgress = 0;
    await pool(order, concurrency, async (id) => {
      await guarded({ id }).catch((err: unknown) => {
        if ((err as Error).name !== 'IdempotencyAlreadyInProgressError') throw err;
        inProgress += 1;
      });
    });
    const wall = performance.now() - t0;
    return {
      approach: 'powertools', concurrency, version: packageVersion('@aws-lambda-powertools/idempotency'),
      wallSeconds: seconds(wall), callsPerSecond: Math.round(order.length / (wall / 1000)),
      executions, alreadyInProgressErrors: inProgress, roundTrips: total(counts), roundTripsPerCall: round(total(counts) / order.length, 3), commands: counts,
    };
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `bench-pt-${run}*`, COUNT: 5_000 })) if (keys.length > 0) await client.del(keys);
    client.destroy();
  }
}

export async function oursOnce(o: PowertoolsOptions, order: string[], run: string, concurrency = 1): Promise<Record<string, unknown>> {
  const client = new Redis(o.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await client.connect();
  const prefix = `{bench-once-${run}-${concurrency}}:`;
  const ledger = redisLedger({ client, prefix });
  const sync = createSync({ adapter: noAdapter(), ledger });
  const counts = countCommands(client);
  let executions = 0;
  try {
    const t0 = performance.now();
    await pool(order, concurrency, async (id) => void (await sync.once(`webhook:${id}`, async () => ((executions += 1), { handled: id }))));
    const wall = performance.now() - t0;
    return {
      approach: 'ours-once', concurrency, wallSeconds: seconds(wall), callsPerSecond: Math.round(order.length / (wall / 1000)),
      executions, roundTrips: total(counts), roundTripsPerCall: round(total(counts) / order.length, 3), commands: { ...counts },
    };
  } finally {
    await sync.close();
    await scanDelete(client, `${prefix}*`);
    client.disconnect();
  }
}

async function oursBatch(o: PowertoolsOptions, order: string[], run: string): Promise<Record<string, unknown>> {
  const client = new Redis(o.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await client.connect();
  const prefix = `{bench-batch-${run}}:`;
  const adapter = noAdapter();
  const sync = createSync({ adapter, ledger: redisLedger({ client, prefix }) });
  const counts = countCommands(client);
  try {
    const actions = order.map((id) => ({ source: 'webhook', eventId: id, op: 'upsert', object: 'contact', externalId: id, fields: { email: `${id}@bench.example` } }));
    const t0 = performance.now();
    const statuses: Record<string, number> = {};
    for (let i = 0; i < actions.length; i += 1_000) {
      for (const out of await sync.applyMany(actions.slice(i, i + 1_000))) statuses[out.status] = (statuses[out.status] ?? 0) + 1;
    }
    const wall = performance.now() - t0;
    return {
      approach: 'ours-applyMany', wallSeconds: seconds(wall), callsPerSecond: Math.round(order.length / (wall / 1000)),
      executions: adapter.apiCalls(), statuses, roundTrips: total(counts), roundTripsPerCall: round(total(counts) / order.length, 4), commands: { ...counts },
    };
  } finally {
    await sync.close();
    await scanDelete(client, `${prefix}*`);
    client.disconnect();
  }
}

/** A CRM that accepts every write in-process (applyMany needs an adapter; once does not use it). */
function noAdapter(): CrmAdapter {
  let writes = 0;
  return {
    name: 'bench',
    capabilities: { maxBatch: 100, nativeActivityUpsert: true },
    objects: { contact: { kind: 'record', fields: ['email'] } },
    upsertRecords: async (_o, ws) => ws.map((w) => ((writes += 1), { ok: true as const, recordId: `r-${w.externalId}`, created: true })),
    createActivities: async () => [],
    findActivities: async () => new Map(),
    classifyError: (err) => (err instanceof CrmError ? err : new CrmError(String(err), { vendor: 'bench', kind: 'permanent' })),
    apiCalls: () => writes,
  };
}

/** One interleaved pass: sequential and concurrent runs alternate, so both sides meet the same machine load. */
async function onePass(o: PowertoolsOptions, order: string[], run: string): Promise<Record<string, unknown>[]> {
  const results: Record<string, unknown>[] = [];
  for (const concurrency of [1, o.concurrency]) {
    results.push(await powertools(o, order, `${run}c${concurrency}`, concurrency));
    results.push(await oursOnce(o, order, run, concurrency));
  }
  results.push(await oursBatch(o, order, run));
  return results;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Per approach, the row of the pass at its median rate, with every pass's rate beside it. */
export function medianRows(passes: readonly (readonly Record<string, unknown>[])[]): Record<string, unknown>[] {
  return passes[0]!.map((first, i) => {
    const rows = passes.map((p) => p[i]!);
    const rates = rows.map((r) => r.callsPerSecond as number);
    if (rows.length === 1 || rates.some((r) => typeof r !== 'number')) return first;
    const mid = median(rates);
    const nearest = rows.reduce((a, b) => (Math.abs((b.callsPerSecond as number) - mid) < Math.abs((a.callsPerSecond as number) - mid) ? b : a));
    return { ...nearest, callsPerSecond: Math.round(mid), passRates: rates };
  });
}

export async function runPowertoolsBench(o: PowertoolsOptions): Promise<Record<string, unknown>> {
  const order = callOrder(o);
  const run = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  const passes: Record<string, unknown>[][] = [];
  for (let p = 0; p < (o.passes ?? 1); p++) passes.push(await onePass(o, order, `${run}p${p}`));
  const results = medianRows(passes);
  const rate = (approach: string, c: number) => results.find((r) => r.approach === approach && r.concurrency === c)?.callsPerSecond as number | undefined;
  const ratio = (a?: number, b?: number) => (a && b ? round(a / b, 2) : undefined);
  return {
    bench: 'powertools', calls: o.calls, distinct: new Set(order).size, duplicateShare: o.duplicateShare, concurrency: o.concurrency, passes: passes.length,
    ratios: {
      onceVsPowertoolsSequential: ratio(rate('ours-once', 1), rate('powertools', 1)),
      onceVsPowertoolsConcurrent: ratio(rate('ours-once', o.concurrency), rate('powertools', o.concurrency)),
      onceConcurrentVsPowertoolsSequential: ratio(rate('ours-once', o.concurrency), rate('powertools', 1)),
    },
    results,
  };
}

if (isMain(import.meta.url)) {
  await main(() => runPowertoolsBench({
    calls: numberArg('calls', 10_000),
    concurrency: numberArg('concurrency', 50),
    duplicateShare: 0.3,
    redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    seed: numberArg('seed', 3),
    passes: numberArg('passes', 1),
  }));
}
