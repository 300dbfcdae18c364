/**
 * bench:walk — a long list walked with `applyEach` (what `crm-upsert sync` does) against a CRM
 * that answers in 50 ms and sets no rate limit, so latency and the request slots bound the rate.
 * fakeHubSpot on loopback, SQLite ledger, new contacts (each written once), batches of 100.
 *
 * Each configuration is a fresh Sync, ledger and fake; passes interleave the configurations and
 * figures are medians. With 4 requests in flight, each `batchSize` is set against the same walk
 * one request at a time (`batchSize` 500), in the same pass: the ratio shows the slots are used.
 * The floor is the walk with no CPU: ceil(requests / concurrency) rounds of one latency each.
 *
 *   npm run bench:walk                               20,000 contacts, 3 passes (about 1 minute)
 *   npm run bench:walk -- --records=5000 --passes=1 --latency=20
 */
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { fakeHubSpot } from '../adapters/testing/index.js';
import { createSync } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { localRateBudget } from '../src/rate-budget.js';
import { contactAction, duplicates, hubspotObjects, isMain, main, median, numberArg, round, tempDir, TOKEN } from './lib.js';

export interface WalkOptions {
  records: number;
  latencyMs: number;
  passes: number;
  /** `batchSize`s walked with 4 requests in flight. Default 100, 500 and 2,000. */
  batchSizes?: number[];
}

export interface WalkRun {
  concurrency: number;
  batchSize: number;
  written: number;
  calls: number;
  duplicates: number;
  recordsPerSecond: number;
}

const MAX_BATCH = 100;

/** One walk of `records` new contacts; every record must come back created, once. */
export async function walkOnce(o: { records: number; latencyMs: number; concurrency: number; batchSize: number; tag: string }): Promise<WalkRun> {
  const fake = fakeHubSpot({ token: TOKEN, faults: { latencyMs: o.latencyMs } });
  const server = await fake.listen();
  const dir = tempDir('walk');
  const sync = createSync({
    adapter: hubspotAdapter({ accessToken: TOKEN, basePath: server.basePath, objects: hubspotObjects, rateBudget: localRateBudget({ points: 1_000_000_000, durationMs: 10_000 }) }),
    ledger: openLedger(`sqlite:${dir.path}/ledger.db`),
    concurrency: o.concurrency,
  });
  try {
    const actions = function* () {
      for (let i = 0; i < o.records; i++) yield contactAction('hubspot', i, o.tag);
    };
    let written = 0;
    const t0 = performance.now();
    for await (const settled of sync.applyEach(actions(), { batchSize: o.batchSize })) {
      for (const { outcome } of settled) if (outcome.status === 'created') written += 1;
    }
    const ms = performance.now() - t0;
    return {
      concurrency: o.concurrency,
      batchSize: o.batchSize,
      written,
      calls: fake.count(),
      duplicates: duplicates(fake.records('contacts'), (r) => r.properties.ai_external_id),
      recordsPerSecond: Math.round((written / ms) * 1000),
    };
  } finally {
    await sync.close();
    await server.close();
    dir.remove();
  }
}


export async function runWalkBench(o: WalkOptions): Promise<Record<string, unknown>> {
  const configs = [{ concurrency: 1, batchSize: 500 }, ...(o.batchSizes ?? [100, 500, 2_000]).map((batchSize) => ({ concurrency: 4, batchSize }))];
  const runs = configs.map(() => [] as WalkRun[]);
  for (let pass = 0; pass < o.passes; pass++) {
    for (const [c, config] of configs.entries()) {
      const run = await walkOnce({ records: o.records, latencyMs: o.latencyMs, ...config, tag: `w${pass}c${c}` });
      if (run.written !== o.records || run.duplicates !== 0) throw new Error(`walk ${JSON.stringify(config)}: ${run.written} of ${o.records} written, ${run.duplicates} duplicates`);
      runs[c]!.push(run);
    }
  }
  const requests = Math.ceil(o.records / MAX_BATCH);
  const oneAtATime = median(runs[0]!.map((r) => r.recordsPerSecond));
  const results = configs.map((config, c) => {
    const perSecond = median(runs[c]!.map((r) => r.recordsPerSecond));
    const floorSeconds = (Math.ceil(requests / config.concurrency) * o.latencyMs) / 1000;
    return {
      ...config,
      calls: runs[c]![0]!.calls,
      recordsPerSecond: perSecond,
      passes: runs[c]!.map((r) => r.recordsPerSecond),
      floorRecordsPerSecond: Math.round(o.records / floorSeconds),
      shareOfFloor: round(perSecond / (o.records / floorSeconds), 3),
      vsOneAtATime: round(perSecond / oneAtATime, 2),
    };
  });
  return { bench: 'walk', records: o.records, latencyMs: o.latencyMs, maxBatch: MAX_BATCH, passes: o.passes, results };
}

if (isMain(import.meta.url)) {
  await main(() => runWalkBench({ records: numberArg('records', 20_000), latencyMs: numberArg('latency', 50), passes: numberArg('passes', 3) }));
}
