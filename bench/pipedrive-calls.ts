/**
 * bench:pipedrive — requests per record on Pipedrive, which has no upsert and no batch write.
 * N new persons through createSync against fakePipedrive on loopback (search index lagging
 * `lag` ms), then the same persons with new fields from a new process on the same ledger (known
 * records: updated by the id the ledger kept), then the first actions again (replays). Floors: a
 * new record needs a lookup and a create (2), a known one its update (1), a replay nothing.
 *
 *   npm run bench:pipedrive                 N = 1,000
 *   npm run bench:pipedrive -- --n=200 --lag=2000 --concurrency=4
 */
import { pipedriveAdapter } from '../adapters/pipedrive/index.js';
import { fakePipedrive } from '../adapters/testing/index.js';
import { createSync } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { isMain, main, numberArg, round, seconds } from './lib.js';

export interface PipedriveCallsOptions {
  n: number;
  /** Search index lag of the fake, ms. */
  lagMs: number;
  /** Batches (records) in flight. */
  concurrency: number;
}

const person = (n: number, variant: string) => ({ source: 'bench', eventId: `p-${n}-${variant}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `Person ${n} ${variant}`, email: `p${n}@example.test` } });

export async function runPipedriveCalls(options: PipedriveCallsOptions): Promise<Record<string, unknown>> {
  const fake = fakePipedrive({ searchLagMs: options.lagMs, burstLimit: false, searchLimit: false });
  const front = await fake.open('loopback');
  const objects = { contact: { kind: 'record' as const, entity: 'person' as const, idField: 'ai_external_id', fields: ['name', 'email'] } };
  const adapter = () => pipedriveAdapter({ apiToken: 'bench-token', basePath: front.url, objects, rateBudget: unlimitedRateBudget, searchRateBudget: unlimitedRateBudget });
  const ledger = openLedger('memory:');
  // One Sync per pass, each with its own adapter (a new process on the same ledger); the ledger is closed once, at the end.
  const syncs: ReturnType<typeof createSync>[] = [];
  try {
    const pass = async (variant: string) => {
      const before = fake.count();
      const started = Date.now();
      const sync = createSync({ adapter: adapter(), ledger, concurrency: options.concurrency });
      syncs.push(sync);
      const outcomes = await sync.applyMany(Array.from({ length: options.n }, (_, i) => person(i, variant)));
      const requests = fake.count() - before;
      return { requests, perRecord: round(requests / options.n), seconds: seconds(Date.now() - started), statuses: [...new Set(outcomes.map((o) => o.status))] };
    };
    const created = await pass('a');
    const known = await pass('b');
    const replayed = await pass('a');
    const ids = fake.records('person').map((r) => fake.customValue(r, 'ai_external_id'));
    return {
      bench: 'pipedrive', n: options.n, lagMs: options.lagMs, concurrency: options.concurrency,
      // New records: the id field, configured by name, costs one fields read per process beside the floor.
      newRecords: { ...created, floor: 2 * options.n }, knownRecords: { ...known, floor: options.n }, replays: { ...replayed, floor: 0 },
      persons: ids.length, duplicates: ids.length - new Set(ids).size,
    };
  } finally {
    await syncs.at(-1)?.close();
    await front.close();
  }
}

if (isMain(import.meta.url)) {
  void main(() => runPipedriveCalls({ n: numberArg('n', 1_000), lagMs: numberArg('lag', 2_000), concurrency: numberArg('concurrency', 4) }));
}
