/**
 * bench:order — what order over time costs. N deal upserts with event times through `createSync`
 * and the real HubSpot SDK against the fake on loopback (batches of 100), on a SQLite ledger and
 * on the memory ledger, with `order: 'event'` (field times kept in each record's mark, an upsert's
 * fields checked against them) and with `order: 'arrival'` (none kept). Each pass, on a fresh fake
 * and ledger, times three runs of the same N deals:
 *
 *   first run   every deal created (no times stored yet; the marks take them)
 *   replay      the same events again, a new engine over the same ledger: every one `replayed`
 *   update      a newer event per deal (other stage and amount): every field checked, every one `updated`
 *
 * Each mode has its own fake and ledger; within a pass each run of one mode goes next to the same
 * run of the other (the mode that goes first alternates by pass), the replay 10 times each (their
 * mean). One warm-up pass not counted. Reported per run: the median seconds of each mode, and the
 * ratio event / arrival (1.0: no cost) as the median of each pass's ratio, whose two runs went side
 * by side (`ratio`), and as the ratio of the medians (`ratioOfMedians`); the same for this
 * process's CPU time (`cpuSeconds`, `cpuRatio`), which other work on the machine moves less. Both
 * modes must make the same requests, and every outcome must be the expected one.
 *
 *   npm run bench:order                     N = 2,000, sqlite + memory, 15 passes
 *   npm run bench:order -- --n=500 --passes=3
 */
import { hubspotAdapter, type HubSpotAdapterOptions } from '../adapters/hubspot/index.js';
import { fakeHubSpot } from '../adapters/testing/index.js';
import { createSync } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import type { LedgerBackend } from '../src/ledger/types.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { isMain, main, median, numberArg, round, tempDir, TOKEN } from './lib.js';

const CHUNK = 500;
/** Replays per mode and pass (a replay of N is short; their mean is what a pass counts). */
const REPLAYS = 10;
const objects: HubSpotAdapterOptions['objects'] = {
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'dealstage', 'amount'] },
};

type Order = 'event' | 'arrival';
type Run = 'firstRun' | 'replay' | 'update';
const RUNS: Run[] = ['firstRun', 'replay', 'update'];
const EXPECTED: Record<Run, string> = { firstRun: 'created', replay: 'replayed', update: 'updated' };

/** Deal i's event: `update` is an hour newer, with another stage and amount. */
function dealAction(i: number, update: boolean): Record<string, unknown> {
  return {
    source: 'bench', eventId: `${update ? 'u' : 'f'}-deal-${i}`, occurredAt: new Date(Date.UTC(2026, 10, 30, update ? 11 : 10, 0, 0, i % 1000)).toISOString(),
    op: 'upsert', object: 'deal', externalId: `d-${i}`,
    fields: update ? { dealstage: 'closedwon', amount: 1_000 + i } : { dealname: `Deal ${i}`, dealstage: 'appointmentscheduled', amount: i },
  };
}

interface PassResult {
  seconds: Record<Run, number>;
  /** CPU seconds of this process (the engine, the SDK and the fake alike): less moved by other work on the machine. */
  cpu: Record<Run, number>;
  requests: Record<Run, number>;
}

/** What one mode runs against: its own fake and ledger, and a new engine over that ledger per run. */
async function stand(order: Order, ledgerKind: 'sqlite' | 'memory') {
  const fake = fakeHubSpot({ token: TOKEN });
  const front = await fake.open('loopback');
  const dir = ledgerKind === 'sqlite' ? tempDir('order') : undefined;
  // The memory ledger lives in this object: each run's engine gets it, and only `close` closes it.
  const memory = ledgerKind === 'memory' ? openLedger('memory:') : undefined;
  const ledger = (): LedgerBackend => memory ? { ...memory, close: async () => undefined } : openLedger(`sqlite:${dir!.path}/ledger.db`);
  const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: front.url, objects, rateBudget: unlimitedRateBudget });
  return {
    /** The N deals of `run` through a new engine (as a new process would be): seconds and requests. */
    async run(run: Run, n: number): Promise<{ seconds: number; cpu: number; requests: number }> {
      const sync = createSync({ adapter, ledger: ledger(), order });
      const actions = Array.from({ length: n }, (_, i) => dealAction(i, run === 'update'));
      const before = fake.count();
      const started = performance.now();
      const cpu = process.cpuUsage();
      for (let i = 0; i < n; i += CHUNK) {
        for (const out of await sync.applyMany(actions.slice(i, i + CHUNK))) {
          if (out.status !== EXPECTED[run]) throw new Error(`${order} ${run}: ${out.key} ended ${out.status}${out.error ? ` (${out.error.message})` : ''}`);
        }
      }
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      await sync.close();
      return { seconds, cpu: (used.user + used.system) / 1e6, requests: fake.count() - before };
    },
    async close() {
      await memory?.close();
      await front.close();
      dir?.remove();
    },
  };
}

/**
 * One pass: both modes on fresh fakes and ledgers, each run of one mode next to the same run of
 * the other (`first` goes first), so a change in the machine's load falls on both. A replay is
 * short: it runs REPLAYS times and counts their mean.
 */
async function pass(n: number, ledgerKind: 'sqlite' | 'memory', first: Order): Promise<Record<Order, PassResult>> {
  const modes: Order[] = first === 'event' ? ['event', 'arrival'] : ['arrival', 'event'];
  const stands = { event: await stand('event', ledgerKind), arrival: await stand('arrival', ledgerKind) };
  const out = { event: { seconds: {}, cpu: {}, requests: {} }, arrival: { seconds: {}, cpu: {}, requests: {} } } as Record<Order, PassResult>;
  try {
    for (const run of RUNS) {
      for (const mode of modes) {
        const times = run === 'replay' ? REPLAYS : 1;
        let seconds = 0;
        let cpu = 0;
        let requests = 0;
        for (let k = 0; k < times; k++) {
          const r = await stands[mode].run(run, n);
          seconds += r.seconds;
          cpu += r.cpu;
          requests += r.requests;
        }
        out[mode].seconds[run] = seconds / times;
        out[mode].cpu[run] = cpu / times;
        out[mode].requests[run] = requests / times;
      }
    }
    return out;
  } finally {
    await stands.event.close();
    await stands.arrival.close();
  }
}

export async function orderBackend(ledgerKind: 'sqlite' | 'memory', o: { n: number; passes: number }): Promise<Record<string, unknown>> {
  const passes: Record<Order, PassResult[]> = { event: [], arrival: [] };
  await pass(o.n, ledgerKind, 'event');
  for (let p = 0; p < o.passes; p++) {
    const both = await pass(o.n, ledgerKind, p % 2 === 0 ? 'event' : 'arrival');
    passes.event.push(both.event);
    passes.arrival.push(both.arrival);
  }
  const med = (mode: Order, run: Run, k: 'seconds' | 'cpu' = 'seconds') => median(passes[mode].map((x) => x[k][run]));
  const paired = (run: Run, k: 'seconds' | 'cpu') => round(median(passes.event.map((x, p) => x[k][run] / passes.arrival[p]![k][run])));
  const per = <T>(fn: (run: Run) => T) => Object.fromEntries(RUNS.map((run) => [run, fn(run)])) as Record<Run, T>;
  const requests = per((run) => ({ event: passes.event[0]!.requests[run], arrival: passes.arrival[0]!.requests[run] }));
  for (const run of RUNS) if (requests[run].event !== requests[run].arrival) throw new Error(`${run}: ${requests[run].event} requests with event order, ${requests[run].arrival} without`);
  return {
    ledger: ledgerKind,
    seconds: per((run) => ({ event: round(med('event', run)), arrival: round(med('arrival', run)) })),
    ratio: per((run) => paired(run, 'seconds')),
    ratioOfMedians: per((run) => round(med('event', run) / med('arrival', run))),
    cpuSeconds: per((run) => ({ event: round(med('event', run, 'cpu')), arrival: round(med('arrival', run, 'cpu')) })),
    cpuRatio: per((run) => paired(run, 'cpu')),
    requests: per((run) => requests[run].event),
    passes: per((run) => ({ event: passes.event.map((x) => round(x.seconds[run])), arrival: passes.arrival.map((x) => round(x.seconds[run])) })),
  };
}

export async function runOrderBench(o: { n: number; passes: number; only?: string[] }): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  for (const kind of ['sqlite', 'memory'] as const) if (!o.only || o.only.includes(kind)) results.push(await orderBackend(kind, o));
  return { bench: 'order', n: o.n, passes: o.passes, chunk: CHUNK, results };
}

if (isMain(import.meta.url)) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  await main(() => runOrderBench({ n: numberArg('n', 2_000), passes: numberArg('passes', 15), ...(only ? { only } : {}) }));
}
