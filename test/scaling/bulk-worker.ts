/**
 * The process bulk-kill.test.ts kills and starts again: applies 500 accounts and 10,000 contacts
 * linked to them (`sync`'s walk, applyEach, bulk auto) against the fake Salesforce at BW_URL and
 * the SQLite ledger at BW_LEDGER. Prints one JSON line: the statuses of its outcomes.
 */
import { salesforceAdapter } from '../../adapters/salesforce/index.js';
import { createSync } from '../../src/index.js';
import { sqliteLedger } from '../../src/ledger/sqlite.js';
import { TOKEN } from '../e2e/salesforce-helpers.js';
import { bulkBackfill, bulkKillObjects } from './bulk-actions.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const sync = createSync({
  adapter: salesforceAdapter({ instanceUrl: env('BW_URL'), accessToken: TOKEN, objects: bulkKillObjects, bulk: { pollIntervalMs: 300, maxPollIntervalMs: 300 } }),
  ledger: sqliteLedger({ path: env('BW_LEDGER') }),
  retry: { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 50 },
});
const counts: Record<string, number> = {};
for await (const settled of sync.applyEach(bulkBackfill())) for (const { outcome } of settled) counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
await sync.close();
process.stdout.write(`${JSON.stringify(counts)}\n`);
process.exit(0);
