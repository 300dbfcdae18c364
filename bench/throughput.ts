/**
 * bench:throughput — how close a full sync gets to the CRM's rate ceiling. fakeHubSpot with 50 ms
 * latency and its ten-second limit at 100 requests, the adapter's rate budget at 100 per 10 s,
 * batches of 100 written 4 at a time so latency does not bound it. The records are updates of
 * `distinct` contacts in rotation (one applyMany per pass, new fields each pass), so every pass
 * is a write of changed values (never `unchanged`) and the budget alone bounds the rate.
 *
 * The ceiling is 100 requests (10,000 records) per 10 s. The account starts with a full window,
 * so under the limit the k-th accepted request cannot go before 10 s x floor((k - 1) / 100): the
 * share of the ceiling is that earliest possible time for the last request over the measured
 * wall time. 429s are counted: the budget must keep every request under the limit.
 *
 * The wall time splits in two at the last request's place in the first window (the fake's request
 * log stamps each arrival): the start, until that place was sent (a fresh process, its first
 * calls prepared and claimed, its window sent 4 at a time), and the chain of windows from there to
 * the last request, where the limit alone sets the pace. `sustainedShare` is the chain's share of
 * the ceiling, `startSeconds` and `chainSeconds` are set against their zero-CPU floors.
 *
 *   npm run bench:throughput                  45,000 contact upserts (about 35 s)
 *   npm run bench:throughput -- --records=15000 --concurrency=4
 *   npm run bench:throughput -- --budget-ms=10500      a budget with a margin for latency jitter
 */
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { createSync } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { localRateBudget } from '../src/rate-budget.js';
import { fakeHubSpot } from '../adapters/testing/index.js';
import { contactAction, hubspotObjects, isMain, main, numberArg, round, seconds, tempDir, TOKEN } from './lib.js';

export interface ThroughputOptions {
  records: number;
  concurrency: number;
  latencyMs: number;
  limit: number;
  /** Distinct contacts written in rotation. Default 2,000. */
  distinct?: number;
  /** The adapter's budget; default the fake's limit per 10 s exactly. */
  budget?: { points: number; durationMs: number };
}

/**
 * The wall time of this bench with no CPU at all, in seconds: the floor its share is measured
 * against. The limit slides, so request k + perWindow may leave once request k's answer is ten
 * seconds old: the last request lies one chain of windows after its place in the first window.
 * That place is sent in round ceil(j / concurrency) of the first window (j its position in the
 * last window), each round one latency long; every later window adds ten seconds and a latency
 * (the fake counts a request after its latency, the budget frees it at the answer); the last
 * request's own latency ends the run.
 */
export function chainFloorSeconds(o: FloorInput): number {
  if (o.requests <= 0) return 0;
  const { startSeconds, chainSeconds } = floorParts(o);
  return startSeconds + chainSeconds + o.latencyMs / 1000;
}

type FloorInput = { requests: number; perWindow: number; concurrency: number; latencyMs: number };

/** The floor's two parts (seconds): until the last request's place in the first window is sent, and the chain of windows after it. */
function floorParts(o: FloorInput): { startSeconds: number; chainSeconds: number } {
  const windows = Math.floor((o.requests - 1) / o.perWindow);
  const place = ((o.requests - 1) % o.perWindow) + 1;
  return { startSeconds: ((Math.ceil(place / o.concurrency) - 1) * o.latencyMs) / 1000, chainSeconds: (windows * (10_000 + o.latencyMs)) / 1000 };
}

/**
 * The run split at the last request's place in the first window, from the arrival times of the
 * accepted requests (in order) and the run's start (epoch ms): how long the start took, how long
 * the chain of windows after it, and the chain's share of the ceiling (null within one window).
 */
export function startAndChain(arrivals: readonly number[], startedAt: number, perWindow: number): { startSeconds: number; chainSeconds: number; windows: number; sustainedShare: number | null } {
  if (arrivals.length === 0) return { startSeconds: 0, chainSeconds: 0, windows: 0, sustainedShare: null };
  const last = arrivals.length - 1;
  const windows = Math.floor(last / perWindow);
  const place = arrivals[last % perWindow]!;
  const chain = (arrivals[last]! - place) / 1000;
  return { startSeconds: (place - startedAt) / 1000, chainSeconds: chain, windows, sustainedShare: windows === 0 ? null : (windows * 10) / chain };
}

export async function runThroughputBench(o: ThroughputOptions): Promise<Record<string, unknown>> {
  const budget = o.budget ?? { points: o.limit, durationMs: 10_000 };
  const fake = fakeHubSpot({ token: TOKEN, tenSecondLimit: o.limit, faults: { latencyMs: o.latencyMs } });
  const server = await fake.listen();
  const dir = tempDir('throughput');
  const sync = createSync({
    adapter: hubspotAdapter({ accessToken: TOKEN, basePath: server.basePath, objects: hubspotObjects, rateBudget: localRateBudget(budget) }),
    ledger: openLedger(`sqlite:${dir.path}/ledger.db`),
    concurrency: o.concurrency,
  });
  try {
    const distinct = Math.min(o.distinct ?? 2_000, o.records);
    const startedAt = Date.now();
    const t0 = performance.now();
    let written = 0;
    for (let pass = 0; pass * distinct < o.records; pass++) {
      const actions = [];
      for (let i = 0; i < distinct && pass * distinct + i < o.records; i++) {
        const a = contactAction('hubspot', i, `tp${pass}`) as { fields: Record<string, string> };
        actions.push({ ...a, fields: { ...a.fields, firstname: `First${i} pass ${pass}` } });
      }
      for (const out of await sync.applyMany(actions)) if (out.status === 'created' || out.status === 'updated') written += 1;
    }
    const elapsed = (performance.now() - t0) / 1000;
    const calls = fake.count();
    const limited = fake.core.log.filter((e) => e.status === 429).length;
    const accepted = calls - limited;
    const perWindow = o.limit;
    const split = startAndChain(fake.core.log.filter((e) => e.status !== 429).map((e) => e.at), startedAt, perWindow);
    const floorInput = { requests: accepted, perWindow, concurrency: o.concurrency, latencyMs: o.latencyMs };
    const parts = floorParts(floorInput);
    // The earliest the last accepted request could have gone under the limit.
    const ideal = 10 * Math.floor((accepted - 1) / perWindow);
    const floor = chainFloorSeconds(floorInput);
    return {
      bench: 'throughput',
      records: o.records,
      distinctContacts: distinct,
      written,
      calls,
      http429: limited,
      budget,
      latencyMs: o.latencyMs,
      concurrency: o.concurrency,
      limitPer10s: o.limit,
      ceilingRecordsPerSecond: (perWindow * 100) / 10,
      wallSeconds: seconds(elapsed * 1000),
      recordsPerSecond: Math.round(written / elapsed),
      idealSeconds: ideal,
      shareOfCeiling: round(ideal / elapsed, 3),
      floorSeconds: seconds(floor * 1000),
      shareAtFloor: round(ideal / floor, 3),
      ratioToFloor: round(elapsed / floor, 3),
      startSeconds: seconds(split.startSeconds * 1000),
      startFloorSeconds: seconds(parts.startSeconds * 1000),
      chainSeconds: seconds(split.chainSeconds * 1000),
      chainFloorSeconds: seconds(parts.chainSeconds * 1000),
      sustainedShare: split.sustainedShare === null ? null : round(split.sustainedShare, 4),
    };
  } finally {
    await sync.close();
    await server.close();
    dir.remove();
  }
}

if (isMain(import.meta.url)) {
  const limit = numberArg('limit', 100);
  await main(() => runThroughputBench({
    records: numberArg('records', 45_000),
    concurrency: numberArg('concurrency', 4),
    latencyMs: numberArg('latency', 50),
    limit,
    budget: { points: numberArg('budget-points', limit), durationMs: numberArg('budget-ms', 10_000) },
  }));
}
