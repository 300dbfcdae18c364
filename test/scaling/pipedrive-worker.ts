/**
 * One of the two worker processes of pipedrive-processes.test.ts: applies the 200 persons, then
 * their 200 notes (reversed when PW_REVERSED=1), against the fake Pipedrive at PW_BASE_PATH and
 * the Postgres ledger at PW_LEDGER_URL (tables PW_PREFIX), then everything once more for what was
 * in flight elsewhere. Prints one JSON line: the statuses of each pass.
 */
import { pipedriveAdapter } from '../../adapters/pipedrive/index.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { objects, TOKEN } from '../e2e/pipedrive-helpers.js';
import { workerActions } from './pipedrive-actions.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const sync = createSync({
  adapter: pipedriveAdapter({ apiToken: TOKEN, basePath: env('PW_BASE_PATH'), objects, recoveryDelaysMs: [50, 200, 500], rateLimit: { points: 1_000, durationMs: 1_000 }, searchRateBudget: { acquire: async () => undefined } }),
  ledger: openLedger(env('PW_LEDGER_URL'), { tablePrefix: env('PW_PREFIX') }),
  retry: { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 },
  concurrency: 2,
});
const count = (outcomes: readonly Outcome[]) => {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
};
const { persons, notes } = workerActions(process.env.PW_REVERSED === '1');
// Both start together, once both have loaded.
await new Promise((r) => setTimeout(r, Math.max(0, Number(env('PW_START')) - Date.now())));
const first = [...(await sync.applyMany(persons)), ...(await sync.applyMany(notes))];
const second = await sync.applyMany([...persons, ...notes]);
await sync.close();
process.stdout.write(`${JSON.stringify({ first: count(first), second: count(second) })}\n`);
process.exit(0);
