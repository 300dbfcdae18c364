/**
 * bench:verify — what `verifyCreates: 'auto'` costs on a Redis ledger that does not report itself
 * durable (no AOF): every note batch is looked up (association read, and a notes read when the
 * parents have notes) before it is created. N contacts and N notes through the real HubSpot SDK
 * against the fake on loopback, on a Redis ledger asked for its durability (`auto`: here no AOF,
 * so every create batch is verified) and on one told it is durable (`after-failure`). Passes
 * interleaved, median reported; API calls counted by the fake.
 *
 *   npm run bench:verify                 N = 2,000, 3 passes each
 *   npm run bench:verify -- --n=500 --passes=5
 */
import { Redis } from 'ioredis';
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { fakeHubSpot } from '../adapters/testing/index.js';
import { createSync } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { activityAction, contactAction, hubspotObjects, isMain, main, median, numberArg, round, TOKEN } from './lib.js';

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

async function pass(n: number, durable: boolean | undefined, prefix: string): Promise<{ calls: number; seconds: number; notes: number; reads: number }> {
  const fake = fakeHubSpot({ token: TOKEN });
  const { url, close } = await fake.open('loopback');
  const ledger = openLedger(REDIS_URL, { keyPrefix: prefix, ...(durable === undefined ? {} : { durable }) });
  // These actions have no occurredAt, so `auto` looks them up on any new ledger, durable or not:
  // the durable pass says `after-failure`, the cost of a durable ledger once it is older than its events.
  const sync = createSync({ adapter: hubspotAdapter({ accessToken: TOKEN, basePath: url, objects: hubspotObjects, rateBudget: unlimitedRateBudget }), ledger, ...(durable ? { verifyCreates: 'after-failure' as const } : {}) });
  const actions = Array.from({ length: n }, (_, i) => [contactAction('hubspot', i), activityAction('hubspot', i)]).flat();
  const started = performance.now();
  for (let i = 0; i < actions.length; i += 500) await sync.applyMany(actions.slice(i, i + 500));
  const seconds = (performance.now() - started) / 1000;
  const figures = { calls: fake.core.log.length, seconds, notes: fake.records('notes').length, reads: fake.count('associations') };
  await sync.close();
  await close();
  return figures;
}

export async function runVerifyBench(n: number, passes: number): Promise<Record<string, unknown>> {
  const redis = new Redis(REDIS_URL);
  const run = `{bench-verify-${process.pid}}:`;
  const runs = { auto: [] as Awaited<ReturnType<typeof pass>>[], durable: [] as Awaited<ReturnType<typeof pass>>[] };
  try {
    for (let p = 0; p < passes; p++) {
      runs.auto.push(await pass(n, undefined, `${run}a${p}:`));
      runs.durable.push(await pass(n, true, `${run}d${p}:`));
    }
  } finally {
    const keys = await redis.keys(`${run}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
  const summary = (xs: Awaited<ReturnType<typeof pass>>[]) => ({ apiCalls: median(xs.map((x) => x.calls)), associationReads: median(xs.map((x) => x.reads)), seconds: round(median(xs.map((x) => x.seconds)), 2), notes: median(xs.map((x) => x.notes)) });
  const auto = summary(runs.auto);
  const durable = summary(runs.durable);
  return {
    bench: 'verify-creates',
    n,
    passes,
    ledger: 'redis (no AOF: not durable)',
    auto,
    durable,
    extraCallsPerCreateBatch: round((auto.apiCalls - durable.apiCalls) / Math.ceil(n / 100), 2),
    callRatio: round(auto.apiCalls / durable.apiCalls, 3),
    timeRatio: round(auto.seconds / durable.seconds, 3),
  };
}

if (isMain(import.meta.url)) await main(() => runVerifyBench(numberArg('n', 2_000), numberArg('passes', 3)));
