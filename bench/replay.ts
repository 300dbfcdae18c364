/**
 * bench:replay — the cost of a repeat. N already-completed actions go through `applyMany` (chunks
 * of 1,000) and come back `replayed`, next to a bare driver loop doing one primary-key read per
 * action on the same store, in the same run (passes interleaved, median reported). Also counts
 * ledger round trips through a counting proxy: one claim per applyMany, one completion per
 * adapter batch while writing; one read-only lookup (getMany) per applyMany and nothing else
 * while replaying (each replay pass is a new engine over the same ledger, as a re-run is). On
 * SQLite it also sets the first run's ledger cost against a bare INSERT of the same rows.
 *
 *   npm run bench:replay                       N = 100,000, sqlite + postgres + redis, 5 passes
 *   npm run bench:replay -- --n=20000 --only=sqlite --first-run-passes=1
 *   npm run bench:replay -- --only=definitions      first run and replay with field definitions against without
 */
import Database from 'better-sqlite3';
import type { ActivityWrite, CrmAdapter, RecordWrite, WriteResult } from '../src/adapter.js';
import { createSync } from '../src/engine/index.js';
import { CrmError } from '../src/errors.js';
import { ENTRY_COLUMNS, entryToRow, type EntryRow } from '../src/ledger/kit/index.js';
import { openLedger } from '../src/ledger/index.js';
import { sqliteLedger } from '../src/ledger/sqlite.js';
import type { FieldDefinition } from '../schemas/field-definitions.js';
import { countingLedger, isMain, main, median, numberArg, round, tempDir } from './lib.js';

const CHUNK = 1_000;
const MAX_BATCH = 100;

/** Definitions of the bench contact's fields, for the runs with field definitions loaded. */
const CONTACT_DEFINITIONS: Record<string, FieldDefinition> = {
  email: { type: 'email' },
  firstname: { type: 'string', maxLength: 40 },
};

/** An in-process CRM that accepts everything: the bench measures the ledger, not HTTP. */
function acceptingAdapter(definitions?: Record<string, FieldDefinition>): CrmAdapter & { batches(): number } {
  let calls = 0;
  const ok = (writes: (RecordWrite | ActivityWrite)[]): WriteResult[] => writes.map((w) => ({ ok: true, recordId: `r-${w.key.slice(-12)}`, created: true }));
  return {
    name: 'bench',
    capabilities: { maxBatch: MAX_BATCH, nativeActivityUpsert: true },
    objects: { contact: { kind: 'record', fields: ['email', 'firstname'], ...(definitions ? { definitions } : {}) } },
    upsertRecords: async (_object, writes) => ((calls += 1), ok(writes)),
    createActivities: async (_object, writes) => ((calls += 1), ok(writes)),
    findActivities: async () => new Map(),
    classifyError: (err) => (err instanceof CrmError ? err : new CrmError(String(err), { vendor: 'bench', kind: 'permanent' })),
    apiCalls: () => calls,
    batches: () => calls,
  };
}

const action = (i: number) => ({ source: 'bench', eventId: `evt-${i}`, op: 'upsert', object: 'contact', externalId: `c-${i}`, fields: { email: `c${i}@bench.example`, firstname: `F${i}` } });

export interface Backend {
  name: string;
  url: string;
  options: Parameters<typeof openLedger>[1];
  /** One primary-key read per key, with the store's own driver; returns rows found. */
  bareReads(keys: string[]): Promise<number>;
  cleanup(): Promise<void>;
}

export async function sqliteBackend(): Promise<Backend> {
  const dir = tempDir('replay');
  const file = `${dir.path}/ledger.db`;
  let db: Database.Database | undefined;
  return {
    name: 'sqlite', url: `sqlite:${file}`, options: {},
    async bareReads(keys) {
      db ??= new Database(file, { readonly: true });
      const get = db.prepare('SELECT * FROM entries WHERE key = ?');
      let found = 0;
      for (const k of keys) if (get.get(k)) found += 1;
      return found;
    },
    async cleanup() {
      db?.close();
      dir.remove();
    },
  };
}

async function postgresBackend(url: string): Promise<Backend> {
  const pg = (await import('pg')).default;
  const prefix = `bench_${process.pid.toString(36)}${Date.now().toString(36)}_`;
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  return {
    name: 'postgres', url, options: { tablePrefix: prefix },
    async bareReads(keys) {
      let found = 0;
      for (const k of keys) if ((await pool.query({ name: 'bare-read', text: `SELECT * FROM "${prefix}entries" WHERE key = $1`, values: [k] })).rowCount) found += 1;
      return found;
    },
    async cleanup() {
      await pool.query(['entries', 'marks', 'windows', 'meta', 'schema_version'].map((t) => `DROP TABLE IF EXISTS "${prefix}${t}";`).join(''));
      await pool.end();
    },
  };
}

async function redisBackend(url: string): Promise<Backend> {
  const { Redis } = await import('ioredis');
  const prefix = `{bench-${process.pid.toString(36)}${Date.now().toString(36)}}:`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  return {
    name: 'redis', url, options: { keyPrefix: prefix },
    async bareReads(keys) {
      let found = 0;
      for (const k of keys) if ((await client.hmget(`${prefix}e:${k}`, 'st'))[0] !== null) found += 1;
      return found;
    },
    async cleanup() {
      let cursor = '0';
      do {
        const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5_000);
        if (batch.length > 0) await client.del(...batch);
        cursor = next;
      } while (cursor !== '0');
      client.disconnect();
    },
  };
}


export interface ReplayOptions {
  n: number;
  /** Keys read by the bare loop per pass (round-trip stores are slow one key at a time). */
  bareSample?: number;
  passes?: number;
}

export async function replayBackend(backend: Backend, o: ReplayOptions): Promise<Record<string, unknown>> {
  const counted = countingLedger(openLedger(backend.url, backend.options));
  const adapter = acceptingAdapter();
  // Each pass is a re-run: a new engine over the same ledger, as a new process would be.
  const engine = () => createSync({ adapter, ledger: counted.ledger });
  const actions = Array.from({ length: o.n }, (_, i) => action(i));
  const chunks: unknown[][] = [];
  for (let i = 0; i < actions.length; i += CHUNK) chunks.push(actions.slice(i, i + CHUNK));
  try {
    // Seed: every action written once (this is the first run).
    const seed = engine();
    const t0 = performance.now();
    const keys: string[] = [];
    for (const chunk of chunks) {
      for (const out of await seed.applyMany(chunk)) {
        if (out.status !== 'created') throw new Error(`seed: ${out.key} ended ${out.status}`);
        keys.push(out.key);
      }
    }
    const firstRun = {
      seconds: round((performance.now() - t0) / 1000, 2), applyManyCalls: chunks.length, adapterBatches: adapter.batches(),
      ledgerCalls: { ...counted.calls }, ledgerSeconds: round(Object.values(counted.ms).reduce((a, b) => a + b, 0) / 1000, 2),
    };
    const perBatch = {
      claimsPerApplyMany: round((counted.calls.claim ?? 0) / chunks.length, 3),
      completesPerAdapterBatch: round((counted.calls.complete ?? 0) / adapter.batches(), 3),
      lookupsInFirstRun: counted.calls.getMany ?? 0,
    };

    const passes = o.passes ?? 3;
    const bareSample = Math.min(o.bareSample ?? o.n, o.n);
    const ours: number[] = [];
    const bare: number[] = [];
    let replayCalls: Record<string, number> = {};
    const replayLedgerMs: number[] = [];
    for (let p = 0; p < passes; p++) {
      const sync = engine();
      counted.reset();
      const s = performance.now();
      for (const chunk of chunks) {
        for (const out of await sync.applyMany(chunk)) if (out.status !== 'replayed') throw new Error(`replay: ${out.key} ended ${out.status}`);
      }
      ours.push(o.n / ((performance.now() - s) / 1000));
      replayCalls = { ...counted.calls };
      replayLedgerMs.push(Object.values(counted.ms).reduce((a, b) => a + b, 0));
      const b = performance.now();
      const found = await backend.bareReads(keys.slice(0, bareSample));
      if (found !== bareSample) throw new Error(`bare loop found ${found} of ${bareSample}`);
      bare.push(bareSample / ((performance.now() - b) / 1000));
    }
    const oursRate = median(ours);
    const bareRate = median(bare);
    return {
      backend: backend.name,
      replayedPerSecond: Math.round(oursRate),
      bareReadsPerSecond: Math.round(bareRate),
      slowdownVsBare: round(bareRate / oursRate, 2),
      passes: { ours: ours.map(Math.round), bare: bare.map(Math.round), bareSample },
      // Of a replay pass, the share spent waiting on the ledger (the rest: validation, keying, the engine).
      ledgerShareOfReplay: round(median(replayLedgerMs) / (o.n / median(ours) * 1000), 2),
      roundTrips: { ...perBatch, replayPerApplyMany: Object.fromEntries(Object.entries(replayCalls).map(([k, v]) => [k, round(v / chunks.length, 3)])) },
      firstRun,
      adapterCallsDuringReplay: adapter.apiCalls() - firstRun.adapterBatches,
    };
  } finally {
    await counted.ledger.close();
    await backend.cleanup();
  }
}

/**
 * The first run's ledger cost on SQLite next to two floors: the time spent in ledger calls while N
 * new actions are written (claims, completions and marks), a bare better-sqlite3 INSERT of the
 * same entry rows in the same order into the same schema, one transaction per adapter batch (100
 * rows), and that with the same mark rows too (a batch's 100 entries, then 100 marks in the order
 * the completions wrote them). Passes interleaved, each on fresh files; medians reported.
 */
export async function firstRunCost(o: { n: number; passes?: number }): Promise<Record<string, unknown>> {
  const ours: number[] = [];
  const bare: number[] = [];
  const bareWithMarks: number[] = [];
  let inserted = 0;
  let byMethod: Record<string, number> = {};
  for (let p = 0; p < (o.passes ?? 3); p++) {
    const dir = tempDir('first-run');
    try {
      const ledger = sqliteLedger({ path: `${dir.path}/ledger.db` });
      // The marks in the order the completions wrote them, for the second floor.
      const marks: { id: string; value: string }[] = [];
      const complete: typeof ledger.complete = (reqs, now) => {
        for (const r of reqs) if (r.mark) marks.push(r.mark);
        return ledger.complete(reqs, now);
      };
      const counted = countingLedger({ ...ledger, complete }, { timeUntilReturn: true });
      const sync = createSync({ adapter: acceptingAdapter(), ledger: counted.ledger });
      const order: string[] = [];
      for (let i = 0; i < o.n; i += CHUNK) {
        const outs = await sync.applyMany(Array.from({ length: Math.min(CHUNK, o.n - i) }, (_, j) => action(i + j)));
        if (outs.some((x) => x.status !== 'created')) throw new Error('first run: not every action was created');
        order.push(...outs.map((x) => x.key));
      }
      ours.push(Object.values(counted.ms).reduce((a, b) => a + b, 0));
      byMethod = Object.fromEntries(Object.entries(counted.ms).map(([k, v]) => [k, round(v / 1000, 3)]));
      // In the order the first run wrote them: keys are hashes, so both land all over the B-tree.
      const byKey = new Map((await counted.ledger.list()).map((e) => [e.key, entryToRow(e)]));
      const rows = order.map((k) => byKey.get(k)!);
      await counted.ledger.close();
      if (marks.length !== rows.length) throw new Error(`first run: ${marks.length} marks for ${rows.length} entries`);
      bare.push(await bareInsert(`${dir.path}/bare.db`, rows, []));
      bareWithMarks.push(await bareInsert(`${dir.path}/bare-marks.db`, rows, marks));
      inserted = rows.filter((r) => r.status === 'completed').length;
    } finally {
      dir.remove();
    }
  }
  const oursMs = median(ours);
  const bareMs = median(bare);
  const bareWithMarksMs = median(bareWithMarks);
  const s = (xs: number[]) => xs.map((x) => round(x / 1000, 3));
  return {
    backend: 'sqlite', n: o.n, rowsInserted: inserted, ledgerSeconds: round(oursMs / 1000, 3), bareInsertSeconds: round(bareMs / 1000, 3),
    bareInsertWithMarksSeconds: round(bareWithMarksMs / 1000, 3),
    ratioToBareInsert: round(oursMs / bareMs, 2), ratioToBareInsertWithMarks: round(oursMs / bareWithMarksMs, 2),
    ledgerSecondsByMethod: byMethod, passes: { ours: s(ours), bare: s(bare), bareWithMarks: s(bareWithMarks) },
  };
}

/**
 * A bare INSERT of `rows` (and of `marks`, when given: batch i's marks after its entries) into a
 * fresh file with the schema the ledger makes, one transaction per adapter batch; milliseconds.
 */
async function bareInsert(path: string, rows: EntryRow[], marks: { id: string; value: string }[]): Promise<number> {
  await sqliteLedger({ path }).close();
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const insert = db.prepare(`INSERT INTO entries (${ENTRY_COLUMNS.join(', ')}) VALUES (${ENTRY_COLUMNS.map((c) => `$${c}`).join(', ')})`);
    const insertMark = db.prepare('INSERT INTO marks (id, value) VALUES ($id, $value)');
    const tx = db.transaction((i: number) => {
      for (const row of rows.slice(i, i + MAX_BATCH)) insert.run(row);
      for (const mark of marks.slice(i, i + MAX_BATCH)) insertMark.run(mark);
    });
    const b = performance.now();
    for (let i = 0; i < rows.length; i += MAX_BATCH) tx.immediate(i);
    const ms = performance.now() - b;
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    if (count('entries') !== rows.length || count('marks') !== marks.length) throw new Error(`bare insert into ${path}: rows missing`);
    return ms;
  } finally {
    db.close();
  }
}

/**
 * What field definitions cost: N actions written once then replayed, on a fresh SQLite ledger
 * per pass, with and without definitions of their fields, passes interleaved, medians. Every
 * value is valid, so each is checked and none rejected.
 */
export async function definitionsCost(o: { n: number; passes?: number }): Promise<Record<string, unknown>> {
  const actions = Array.from({ length: o.n }, (_, i) => action(i));
  const chunks: unknown[][] = [];
  for (let i = 0; i < actions.length; i += CHUNK) chunks.push(actions.slice(i, i + CHUNK));
  const run = async (definitions?: Record<string, FieldDefinition>) => {
    const dir = tempDir('definitions');
    try {
      const ledger = openLedger(`sqlite:${dir.path}/ledger.db`);
      const adapter = acceptingAdapter(definitions);
      let t = performance.now();
      const first = createSync({ adapter, ledger });
      for (const chunk of chunks) await first.applyMany(chunk);
      const firstRun = performance.now() - t;
      t = performance.now();
      const again = createSync({ adapter, ledger });
      for (const chunk of chunks) for (const out of await again.applyMany(chunk)) if (out.status !== 'replayed') throw new Error(`replay: ${out.key} ended ${out.status}`);
      const replay = performance.now() - t;
      await ledger.close();
      return { firstRun, replay };
    } finally {
      dir.remove();
    }
  };
  const without: { firstRun: number; replay: number }[] = [];
  const withDefs: { firstRun: number; replay: number }[] = [];
  for (let p = 0; p < (o.passes ?? 3); p++) {
    without.push(await run());
    withDefs.push(await run(CONTACT_DEFINITIONS));
  }
  const med = (xs: { firstRun: number; replay: number }[], k: 'firstRun' | 'replay') => median(xs.map((x) => x[k]));
  return {
    n: o.n, passes: o.passes ?? 3,
    firstRunSeconds: { without: round(med(without, 'firstRun') / 1000, 2), with: round(med(withDefs, 'firstRun') / 1000, 2) },
    replaySeconds: { without: round(med(without, 'replay') / 1000, 2), with: round(med(withDefs, 'replay') / 1000, 2) },
    ratio: { firstRun: round(med(withDefs, 'firstRun') / med(without, 'firstRun')), replay: round(med(withDefs, 'replay') / med(without, 'replay')) },
  };
}

export async function runReplayBench(o: ReplayOptions & { only?: string[]; postgresUrl?: string; redisUrl?: string; firstRunPasses?: number }): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  const wanted = (name: string) => !o.only || o.only.includes(name);
  if (wanted('sqlite')) results.push(await replayBackend(await sqliteBackend(), o));
  if (wanted('postgres')) {
    const url = o.postgresUrl ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    results.push(await replayBackend(await postgresBackend(url), { ...o, bareSample: o.bareSample ?? 20_000 }).catch((err: unknown) => ({ backend: 'postgres', error: String(err) })));
  }
  if (wanted('redis')) {
    const url = o.redisUrl ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    results.push(await replayBackend(await redisBackend(url), { ...o, bareSample: o.bareSample ?? 20_000 }).catch((err: unknown) => ({ backend: 'redis', error: String(err) })));
  }
  const firstRun = wanted('sqlite') && o.firstRunPasses !== 0 ? await firstRunCost({ n: o.n, passes: o.firstRunPasses }) : undefined;
  const definitions = wanted('definitions') ? await definitionsCost({ n: Math.min(o.n, 50_000), passes: o.passes ?? 3 }) : undefined;
  return { bench: 'replay', n: o.n, chunk: CHUNK, adapterMaxBatch: MAX_BATCH, results, ...(firstRun ? { firstRun } : {}), ...(definitions ? { definitions } : {}) };
}

if (isMain(import.meta.url)) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  await main(() => runReplayBench({ n: numberArg('n', 100_000), passes: numberArg('passes', 5), firstRunPasses: numberArg('first-run-passes', 3), ...(only ? { only } : {}) }));
}
