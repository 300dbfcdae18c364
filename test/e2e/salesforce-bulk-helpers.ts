/**
 * What the bulk lane's end-to-end tests share: a fake org on loopback with a SQLite ledger file,
 * each `sync()` a new adapter and a new ledger connection (as a process started again builds
 * them), closed after each test; and the check that every contact is in the org once, with its account.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { salesforceAdapter, type SalesforceAdapterOptions, type SalesforceBulkOptions } from '../../adapters/salesforce/index.js';
import { fakeSalesforce, type FakeBulkOptions, type FakeSalesforce } from '../../adapters/testing/index.js';
import { createSync, openLedger, type RateBudget, type Sync } from '../../src/index.js';
import { sqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerUnderTest } from '../helpers/services.js';
import { TOKEN } from './salesforce-helpers.js';

export const EXT = 'AI_External_Id__c';
const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };

export interface BulkOrg {
  fake: FakeSalesforce;
  /** The org's instance URL on loopback. */
  url: string;
  ledgerPath: string;
  sync(options?: { bulk?: SalesforceBulkOptions; now?: () => number; leaseMs?: number; rateBudget?: RateBudget; adapter?: Partial<SalesforceAdapterOptions> }): Sync;
}

/**
 * Call at the top of a test file: a factory of orgs configured with `objects`, cleaned up after each
 * test (and the file). Each org's ledger is a SQLite file of its own, or the ledger `ledger()` gives.
 */
export function bulkOrgs(objects: SalesforceAdapterOptions['objects'], name: string, ledger?: () => Promise<LedgerUnderTest>): (bulk?: FakeBulkOptions) => Promise<BulkOrg> {
  const dirs: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return async (bulk = {}) => {
    const fake = fakeSalesforce({ accessToken: TOKEN, dailyLimit: 10_000_000, bulk });
    const front = await fake.open('loopback', `https://${name}${dirs.length}.my.salesforce.com`);
    closers.push(() => front.close());
    const dir = mkdtempSync(join(tmpdir(), `crm-upsert-${name}-`));
    dirs.push(dir);
    const ledgerPath = join(dir, 'ledger.db');
    const shared = ledger ? await ledger() : undefined;
    if (shared) closers.unshift(() => shared.drop());
    const open = () => (shared ? openLedger(shared.url, shared.options) : sqliteLedger({ path: ledgerPath }));
    return {
      fake,
      url: front.url,
      ledgerPath,
      sync: ({ bulk: bulkOptions = {}, now, leaseMs, rateBudget, adapter: more = {} } = {}) => {
        const adapter = salesforceAdapter({ instanceUrl: front.url, accessToken: TOKEN, objects, bulk: { sleep: async () => undefined, ...bulkOptions }, ...(rateBudget ? { rateBudget } : {}), ...more });
        const sync = createSync({ adapter, ledger: open(), retry: fast, ...(now ? { now } : {}), ...(leaseMs ? { leaseMs } : {}) });
        closers.push(() => sync.close().catch(() => undefined));
        return sync;
      },
    };
  };
}

/**
 * The requests of a backfill of 500 accounts and 10,000 contacts under `bulk: 'auto'` when the
 * fake's jobs complete on their second poll: the accounts (under minRecords) in three Collections
 * upserts; the contacts in one job: create, upload, close, two polls, the successful results.
 */
export const BACKFILL_REQUESTS = {
  'PATCH /composite/sobjects/Account/AI_External_Id__c': 3,
  'POST /jobs/ingest': 1,
  'PUT /jobs/ingest/{id}/batches': 1,
  'PATCH /jobs/ingest/{id}': 1,
  'GET /jobs/ingest/{id}': 2,
  'GET /jobs/ingest/{id}/successfulResults': 1,
};

/** Every account once, every contact `c-i` once with the Id of its account `a-(i % accounts)`. */
export function expectLinked(fake: FakeSalesforce, contacts: number, accounts: number): void {
  const accountRows = fake.records('Account');
  expect(accountRows).toHaveLength(accounts);
  const accountId = new Map(accountRows.map((r) => [String(r[EXT]), r.Id]));
  expect(accountId.size).toBe(accounts);
  const rows = fake.records('Contact');
  expect(rows).toHaveLength(contacts);
  const stored = new Map(rows.map((r) => [String(r[EXT]), r]));
  expect(stored.size).toBe(contacts);
  for (let i = 0; i < contacts; i++) expect(stored.get(`c-${i}`)?.AccountId).toBe(accountId.get(`a-${i % accounts}`));
}
