/**
 * One of the two writer processes of record-order.test.ts: for trial i (0 <= i < RO_TRIALS) it
 * waits until RO_START + i * RO_SPACING_MS plus a random few ms, then upserts contact R-i with its
 * event (RO_ROLE `old`: 09:55, lifecyclestage lead; `new`: 10:00, customer), against the fake
 * HubSpot at RO_BASE_PATH and the ledger at RO_LEDGER_URL. Prints one JSON line of its statuses.
 */
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { createSync } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { chaosLedgerOptions, hubspotObjects } from '../../bench/lib.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const role = env('RO_ROLE');
const start = Number(env('RO_START'));
const spacing = Number(env('RO_SPACING_MS'));
const trials = Number(env('RO_TRIALS'));
const event = role === 'new'
  ? { at: '2026-11-30T10:00:00.000Z', stage: 'customer', name: 'New' }
  : { at: '2026-11-30T09:55:00.000Z', stage: 'lead', name: 'Old' };

const sync = createSync({
  adapter: hubspotAdapter({ accessToken: env('RO_TOKEN'), basePath: env('RO_BASE_PATH'), objects: hubspotObjects, rateBudget: unlimitedRateBudget }),
  ledger: openLedger(env('RO_LEDGER_URL'), chaosLedgerOptions(env('RO_PREFIX'))),
  leaseMs: 30_000,
  retry: { minTimeoutMs: 20, maxTimeoutMs: 200 },
});

const statuses: string[] = [];
await Promise.all(Array.from({ length: trials }, async (_, i) => {
  const due = start + i * spacing + Math.random() * 8;
  await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  const outcome = await sync.apply({
    source: 'race', eventId: `${role}-${i}`, occurredAt: event.at, op: 'upsert', object: 'contact', externalId: `R-${i}`,
    fields: { lifecyclestage: event.stage, firstname: event.name },
  });
  statuses[i] = outcome.status;
}));
await sync.close();
process.stdout.write(`${JSON.stringify({ role, statuses })}\n`);
process.exit(0);
