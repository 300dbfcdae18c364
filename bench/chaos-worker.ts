/**
 * One chaos worker process: createSync + hubspotAdapter(basePath) + a Postgres or Redis ledger over its
 * share of the action list (a JSON file), walked with `applyEach` (CHAOS_CHUNK actions looked up at a
 * time, calls of CHAOS_CHUNK actions that need a write: a restarted worker's walk over what it did
 * before sends what is left of it in full batches). Failed and in-flight actions are retried in
 * later rounds (bounded), as `crm-upsert retry-failed` would. Prints JSON lines to stdout:
 * `{"type":"progress","done":n}` after each step, `{"type":"done",...}` at the end.
 *
 * Environment: CHAOS_BASE_PATH, CHAOS_LEDGER_URL, CHAOS_TABLE_PREFIX, CHAOS_SHARE (file),
 * CHAOS_LEASE_MS, CHAOS_CHUNK, CHAOS_TOKEN; optional shared rate budget: CHAOS_BUDGET_URL (redis:// or
 * postgres://), CHAOS_BUDGET_POINTS, CHAOS_BUDGET_MS, CHAOS_BUDGET_KEY (its key prefix / table name).
 */
import { readFileSync } from 'node:fs';
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { createSync, type OutcomeStatus } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { sharedRateBudget } from '../src/rate-budget-shared.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { chaosLedgerOptions, hubspotObjects } from './lib.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const DONE = new Set<OutcomeStatus>(['created', 'updated', 'unchanged', 'replayed', 'suppressed']);
const MAX_ROUNDS = 40;
// Rounds back off like a scheduled job re-run would (0.5 s, 0.75 s, ... up to 4 s): a note whose
// contact another worker has not written yet waits for it instead of re-reading it every 0.5 s.
const roundPauseMs = (round: number) => Math.min(4_000, 500 * 1.5 ** (round - 1));

const share = JSON.parse(readFileSync(env('CHAOS_SHARE'), 'utf8')) as unknown[];
const chunk = Number(process.env.CHAOS_CHUNK ?? 200);
const budgetUrl = process.env.CHAOS_BUDGET_URL;
const budget = budgetUrl
  ? sharedRateBudget(/^rediss?:/i.test(budgetUrl) ? { redis: budgetUrl } : { postgres: budgetUrl }, {
    points: Number(env('CHAOS_BUDGET_POINTS')), durationMs: Number(env('CHAOS_BUDGET_MS')), keyPrefix: env('CHAOS_BUDGET_KEY'), tableName: env('CHAOS_BUDGET_KEY'),
  })
  : undefined;
const sync = createSync({
  adapter: hubspotAdapter({ accessToken: env('CHAOS_TOKEN'), basePath: env('CHAOS_BASE_PATH'), objects: hubspotObjects, rateBudget: budget ?? unlimitedRateBudget }),
  ledger: openLedger(env('CHAOS_LEDGER_URL'), chaosLedgerOptions(env('CHAOS_TABLE_PREFIX'))),
  leaseMs: Number(process.env.CHAOS_LEASE_MS ?? 3_000),
  retry: { minTimeoutMs: 100, maxTimeoutMs: 2_000 },
});

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const counts: Record<string, number> = {};
let pending = share;
let done = 0;
let rounds = 0;
for (; rounds < MAX_ROUNDS && pending.length > 0; rounds++) {
  if (rounds > 0) await new Promise((r) => setTimeout(r, roundPauseMs(rounds)));
  const again: number[] = [];
  const walked = pending;
  for await (const settled of sync.applyEach(walked, { batchSize: chunk })) {
    for (const { index, outcome } of settled) {
      counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
      if (DONE.has(outcome.status)) done += 1;
      else again.push(index);
    }
    say({ type: 'progress', done });
  }
  pending = again.sort((a, b) => a - b).map((i) => walked[i]);
}
await sync.close();
await budget?.close();
say({ type: 'done', done, left: pending.length, rounds, counts });
process.exit(0);
