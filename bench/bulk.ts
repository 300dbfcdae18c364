/**
 * bench:bulk — a Salesforce backfill through the bulk lane (one Bulk API 2.0 ingest job per
 * object) next to sObject Collections (200 records a request). N contact upserts, each linked to
 * one of A accounts (the accounts written first, in their own call), through createSync over
 * salesforceAdapter (real jsforce) and fakeSalesforce on loopback, SQLite ledger:
 *
 *   bulk          `bulk: 'auto'`: the accounts (under minRecords) by Collections, the contacts in
 *                 one job (`applyEach` with `bulkCallSize` N)
 *   collections   `bulk: 'never'`: everything by Collections, `concurrency` requests in flight
 *
 * What is measured and what is modelled. The fake answers every request after `latency` ms
 * (measured: it is real waiting on loopback). A real job is processed by Salesforce over minutes;
 * the fake processes one share of it per job-info read, so its processing time is modelled by
 * polling: the adapter polls every `poll-ms` (fixed interval: maxPollIntervalMs = pollIntervalMs)
 * and the fake finishes a job in ceil(rows / `rows-per-poll`) reads, i.e. a server rate of
 * rows-per-poll / poll-ms. The waits run on a clock scaled by `clock-scale` (0.01: a 5 s wait
 * sleeps 50 ms). `measured` figures are wall time on this machine with the scaled clock;
 * `modelled` figures put the waits back at full length (measured wall + requested waits − slept
 * waits). Collections has no waits: its modelled time is its measured time. Request counts are
 * the fake's own (every request counts against the daily API allocation, Bulk ones included; the
 * rows of a job count against the separate daily Bulk API records allocation, which the fake does
 * not enforce).
 *
 * Each pass runs both lanes on fresh fakes and ledgers (the lane that goes first alternates), then
 * the same actions again from a new Sync on each ledger: every outcome `replayed` and 0 requests,
 * or the bench fails. Times are medians over the passes.
 *
 *   npm run bench:bulk                   N = 100,000, A = 1,000, 150 ms per request, 2 passes (about 3 minutes)
 *   npm run bench:bulk -- --n=20000 --latency=300 --concurrency=4 --passes=3
 *   BENCH_N=2000 BENCH_LATENCY=5 npm run bench:bulk
 *
 * Options (flag or env BENCH_<NAME>): n, accounts, latency (ms per request), concurrency
 * (Collections requests in flight), poll-ms, rows-per-poll, clock-scale, passes.
 */
import { salesforceAdapter, type SalesforceAdapterOptions } from '../adapters/salesforce/index.js';
import { FakeSalesforceState, fakeSalesforceFromState, type FakeSalesforce } from '../adapters/salesforce/fake/salesforce-fake.js';
import { createSync, type Outcome } from '../src/engine/index.js';
import type { BulkMode } from '../src/engine/types.js';
import { openLedger } from '../src/ledger/index.js';
import { isMain, main, median, numberArg, round, seconds, tempDir, TOKEN } from './lib.js';

const EXT = 'AI_External_Id__c';
const objects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: EXT, fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: ['Email', 'FirstName', 'LastName'], links: { company: 'AccountId' } },
};

export interface BulkBenchOptions {
  /** Contacts. Default 100,000. */
  n: number;
  /** Accounts the contacts link to (contact i to account i mod A). Default 1,000. */
  accounts: number;
  /** The fake's latency per request, ms (measured: real waiting). Default 150. */
  latencyMs: number;
  /** Collections requests in flight (createSync `concurrency`, both lanes). Default 4. */
  concurrency: number;
  /** Modelled wait between two polls of a job, ms (the adapter's pollIntervalMs). Default 5,000. */
  pollMs: number;
  /** Rows Salesforce processes per poll interval (the fake's pollsToComplete = ceil(rows / this)). Default 10,000. */
  rowsPerPoll: number;
  /** How much of each modelled wait is really slept. Default 0.01. */
  clockScale: number;
  /** Passes (each both lanes, interleaved). Default 2. */
  passes: number;
  /**
   * For the estimate only (arithmetic, not run): what one Collections upsert of 200 records takes
   * on a real org, ms. Default 1,000 to 3,000.
   */
  collectionsMs: [number, number];
  /** Lanes to run. Default both. */
  only?: Lane[];
}

type Lane = 'bulk' | 'collections';
const MODE: Record<Lane, BulkMode> = { bulk: 'auto', collections: 'never' };

const occurredAt = '2026-12-01T09:00:00.000Z';
const account = (i: number) => ({ source: 'backfill', eventId: `co-${i}`, occurredAt, op: 'upsert', object: 'company', externalId: `a-${i}`, fields: { Name: `Account ${i}` } });
const contact = (i: number, accounts: number) => ({
  source: 'backfill', eventId: `ct-${i}`, occurredAt, op: 'upsert', object: 'contact', externalId: `c-${i}`,
  fields: { FirstName: `First ${i}`, LastName: `Last ${i}`, Email: `c${i}@example.com` },
  links: [{ object: 'company', externalId: `a-${i % accounts}` }],
});

interface LaneRun {
  /** Measured wall time of the first run (accounts, then contacts), ms. */
  wallMs: number;
  /** The same with every poll wait at its modelled length, ms. */
  modelledMs: number;
  /** Of the wall time, the fake's own handling of requests (a real org's share, on this thread here), ms. */
  fakeServerMs: number;
  /** Poll waits the adapter asked for (modelled) and what was slept, ms. */
  waitsRequestedMs: number;
  waitsSleptMs: number;
  requests: number;
  byEndpoint: Record<string, number>;
  apiCallsCounted: number;
  jobs: { object: string; rows: number; state: string }[];
  /** Bytes of CSV uploaded into the jobs (UTF-8). */
  uploadBytes: number;
  replayMs: number;
}

/** A sleep on the scaled clock that keeps account of what was asked and what was slept. */
function scaledClock(scale: number) {
  const t = { requested: 0, slept: 0, inFlight: 0 };
  const sleep = async (ms: number) => {
    // The modelled time adds waits end to end: true while one job is polled at a time.
    if (++t.inFlight > 1) throw new Error('bench:bulk: two poll waits at once; the modelled time assumes one job polled at a time');
    const started = performance.now();
    try {
      await new Promise((resolve) => setTimeout(resolve, ms * scale));
    } finally {
      t.inFlight -= 1;
      t.requested += ms;
      t.slept += performance.now() - started;
    }
  };
  return { t, sleep };
}

function expectAll(outcomes: readonly (Outcome | undefined)[], count: number, status: Outcome['status'], what: string): void {
  if (outcomes.length !== count) throw new Error(`bench:bulk ${what}: ${outcomes.length} outcomes for ${count} actions`);
  const i = outcomes.findIndex((o) => o?.status !== status);
  if (i < 0) return;
  const other = outcomes[i];
  throw new Error(`bench:bulk ${what}: action ${i} ${other ? `(${other.key}) ended ${other.status}${other.error ? ` (${other.error.message})` : ''}` : 'has no outcome'}, expected ${status}`);
}

/** Every contact once, linked to its account's Id; every account once. */
function checkStored(fake: FakeSalesforce, o: BulkBenchOptions, lane: Lane): void {
  const accounts = fake.records('Account');
  const accountId = new Map(accounts.map((r) => [String(r[EXT]), r.Id]));
  const contacts = fake.records('Contact');
  const byExt = new Map(contacts.map((r) => [String(r[EXT]), r]));
  if (accountId.size !== o.accounts || accounts.length !== o.accounts) throw new Error(`bench:bulk ${lane}: ${accounts.length} accounts stored, expected ${o.accounts}`);
  if (byExt.size !== o.n || contacts.length !== o.n) throw new Error(`bench:bulk ${lane}: ${contacts.length} contacts stored (${byExt.size} distinct), expected ${o.n}`);
  for (let i = 0; i < o.n; i++) {
    if (byExt.get(`c-${i}`)?.AccountId !== accountId.get(`a-${i % o.accounts}`)) throw new Error(`bench:bulk ${lane}: contact c-${i} is not linked to account a-${i % o.accounts}`);
  }
}

async function runLane(lane: Lane, o: BulkBenchOptions): Promise<LaneRun> {
  const state = new FakeSalesforceState({ accessToken: TOKEN, dailyLimit: 100_000_000, faults: { latencyMs: o.latencyMs }, bulk: { pollsToComplete: Math.ceil(o.n / o.rowsPerPoll) } });
  // The fake's handler runs on this thread: what a real org does on its own machines (writing the
  // records, processing a job's rows). Its time is counted apart so the client's share can be read.
  let serverMs = 0;
  const handle = state.handle.bind(state);
  state.handle = (req) => {
    const started = performance.now();
    try {
      return handle(req);
    } finally {
      serverMs += performance.now() - started;
    }
  };
  const fake = fakeSalesforceFromState(state);
  const front = await fake.open('loopback');
  const dir = tempDir('bulk');
  const clock = scaledClock(o.clockScale);
  // A new adapter and ledger connection per Sync, as a process started again builds them.
  const newSync = () => createSync({
    adapter: salesforceAdapter({
      instanceUrl: front.url, accessToken: TOKEN, objects,
      bulk: { pollIntervalMs: o.pollMs, maxPollIntervalMs: o.pollMs, timeoutMs: 24 * 3_600_000, sleep: clock.sleep },
    }),
    ledger: openLedger(`sqlite:${dir.path}/ledger.db`),
    concurrency: o.concurrency,
  });
  const accounts = Array.from({ length: o.accounts }, (_, i) => account(i));
  const contacts = Array.from({ length: o.n }, (_, i) => contact(i, o.accounts));
  const write = async (sync: ReturnType<typeof createSync>): Promise<Outcome[]> => {
    const out = await sync.applyMany(accounts, { bulk: MODE[lane] });
    for await (const settled of sync.applyEach(contacts, { bulk: MODE[lane], bulkCallSize: Math.max(o.n, 1) })) {
      for (const { index, outcome } of settled) out[o.accounts + index] = outcome;
    }
    return out;
  };
  try {
    const first = newSync();
    const t0 = performance.now();
    const written = await write(first);
    const wallMs = performance.now() - t0;
    const fakeServerMs = serverMs;
    await first.close();
    expectAll(written, o.accounts + o.n, 'created', `${lane} first run`);
    checkStored(fake, o, lane);
    const byEndpoint = fake.counts();
    const requests = fake.count();
    const apiCallsCounted = fake.apiUsage().used;
    const jobs = fake.bulkJobs().map((j) => ({ object: j.object, rows: j.rows, state: j.state }));
    const uploadBytes = fake.requests
      .filter((r) => r.method === 'PUT' && r.path.endsWith('/batches'))
      .reduce((sum, r) => sum + Buffer.byteLength(r.raw ?? (typeof r.body === 'string' ? r.body : '')), 0);

    const replay = newSync();
    const r0 = performance.now();
    const replayed = await write(replay);
    const replayMs = performance.now() - r0;
    await replay.close();
    expectAll(replayed, o.accounts + o.n, 'replayed', `${lane} replay`);
    const replayRequests = fake.count() - requests;
    if (replayRequests !== 0) throw new Error(`bench:bulk ${lane} replay: ${replayRequests} requests (${JSON.stringify(fake.counts())}), expected 0`);

    return {
      wallMs, fakeServerMs, modelledMs: wallMs + clock.t.requested - clock.t.slept, waitsRequestedMs: clock.t.requested, waitsSleptMs: clock.t.slept,
      requests, byEndpoint, apiCallsCounted, jobs, uploadBytes, replayMs,
    };
  } finally {
    await front.close();
    dir.remove();
  }
}

export async function runBulkBench(o: BulkBenchOptions): Promise<Record<string, unknown>> {
  const runs: Record<Lane, LaneRun[]> = { bulk: [], collections: [] };
  const lanes = (['bulk', 'collections'] as const).filter((l) => !o.only || o.only.includes(l));
  for (let p = 0; p < o.passes; p++) {
    for (const lane of p % 2 === 0 ? lanes : [...lanes].reverse()) runs[lane].push(await runLane(lane, o));
  }
  const rows = o.accounts + o.n;
  const lane = (name: Lane) => {
    const r = runs[name];
    const first = r[0]!;
    for (const x of r) {
      if (JSON.stringify(x.byEndpoint) !== JSON.stringify(first.byEndpoint)) throw new Error(`bench:bulk ${name}: requests differ between passes: ${JSON.stringify(x.byEndpoint)} vs ${JSON.stringify(first.byEndpoint)}`);
    }
    const wall = median(r.map((x) => x.wallMs));
    const modelled = median(r.map((x) => x.modelledMs));
    const server = median(r.map((x) => x.fakeServerMs));
    const bulkRows = first.jobs.reduce((s, j) => s + j.rows, 0);
    // Collections requests of one call go `concurrency` at a time; the job's requests one after another.
    const collections = Object.entries(first.byEndpoint).filter(([e]) => e.startsWith('PATCH /composite/sobjects/'));
    const collectionRounds = collections.reduce((s, [, count]) => s + Math.ceil(count / o.concurrency), 0);
    const otherRequests = first.requests - collections.reduce((s, [, count]) => s + count, 0);
    const estimate = (collectionMs: number) => seconds(collectionRounds * collectionMs + otherRequests * o.latencyMs + first.waitsRequestedMs);
    return {
      mode: MODE[name],
      requests: first.requests,
      byEndpoint: first.byEndpoint,
      apiCallsCounted: first.apiCallsCounted,
      bulkJobs: first.jobs,
      bulkRecordsCounted: bulkRows,
      uploadBytes: first.uploadBytes,
      uploadBytesPerRow: bulkRows > 0 ? round(first.uploadBytes / bulkRows, 1) : 0,
      measured: {
        wallSeconds: seconds(wall), rowsPerSecond: Math.round(rows / (wall / 1000)),
        fakeServerSeconds: seconds(server), passes: r.map((x) => seconds(x.wallMs)),
      },
      modelled: {
        wallSeconds: seconds(modelled), rowsPerSecond: Math.round(rows / (modelled / 1000)),
        pollWaitsSeconds: seconds(first.waitsRequestedMs), pollWaitsSleptSeconds: seconds(first.waitsSleptMs),
      },
      estimateRealOrg: {
        collectionRounds, otherRequests,
        seconds: [estimate(o.collectionsMs[0]), estimate(o.collectionsMs[1])],
      },
      replay: { requests: 0, seconds: seconds(median(r.map((x) => x.replayMs))) },
    };
  };
  const bulk = lanes.includes('bulk') ? lane('bulk') : undefined;
  const collections = lanes.includes('collections') ? lane('collections') : undefined;
  return {
    bench: 'bulk',
    contacts: o.n,
    accounts: o.accounts,
    rows,
    passes: o.passes,
    latencyMsPerRequest: o.latencyMs,
    concurrency: o.concurrency,
    model: {
      pollIntervalMs: o.pollMs,
      rowsPerPoll: o.rowsPerPoll,
      pollsToComplete: Math.ceil(o.n / o.rowsPerPoll),
      serverRowsPerSecond: Math.round(o.rowsPerPoll / (o.pollMs / 1000)),
      clockScale: o.clockScale,
    },
    collectionsMsForEstimate: o.collectionsMs,
    lanes: { ...(bulk ? { bulk } : {}), ...(collections ? { collections } : {}) },
    // Collections over the bulk lane (> 1: the bulk lane does better).
    ...(bulk && collections
      ? {
          ratios: {
            requests: round(collections.requests / bulk.requests, 1),
            apiCalls: round(collections.apiCallsCounted / bulk.apiCallsCounted, 1),
            measuredWall: round(collections.measured.wallSeconds / bulk.measured.wallSeconds, 2),
            modelledWall: round(collections.modelled.wallSeconds / bulk.modelled.wallSeconds, 2),
            estimateRealOrg: bulk.estimateRealOrg.seconds.map((b, i) => round(collections.estimateRealOrg.seconds[i]! / b, 2)),
          },
        }
      : {}),
  };
}

export function bulkOptionsFromArgs(): BulkBenchOptions {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',') as Lane[] | undefined;
  return {
    n: numberArg('n', 100_000),
    accounts: numberArg('accounts', 1_000),
    latencyMs: numberArg('latency', 150),
    concurrency: numberArg('concurrency', 4),
    pollMs: numberArg('poll-ms', 5_000),
    rowsPerPoll: numberArg('rows-per-poll', 10_000),
    clockScale: numberArg('clock-scale', 0.01),
    passes: numberArg('passes', 2),
    collectionsMs: [numberArg('collections-ms-min', 1_000), numberArg('collections-ms-max', 3_000)],
    ...(only ? { only } : {}),
  };
}

if (isMain(import.meta.url)) await main(() => runBulkBench(bulkOptionsFromArgs()));
