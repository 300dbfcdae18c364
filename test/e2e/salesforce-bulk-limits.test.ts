/**
 * The daily Bulk API 2.0 allowances under the ledger: createSync over salesforceAdapter (real
 * jsforce Connection) and fakeSalesforce over loopback, a SQLite ledger. A job the allowance does
 * not cover fails (ExceededQuota); the adapter reports it as a quota error, so the Sync pauses:
 * nothing more is sent, the rows' claims go back, and a later Sync, once the window has moved on,
 * follows the failed job and writes each row once.
 */
import { describe, expect, it } from 'vitest';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import type { FakeSalesforce } from '../../adapters/testing/index.js';
import { bulkOrgs, EXT } from './salesforce-bulk-helpers.js';
import { statuses } from './salesforce-helpers.js';

const objects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: EXT, fields: ['Name'] },
};
const occurredAt = '2026-12-01T09:00:00.000Z';
const company = (i: number) => ({ source: 'backfill', eventId: `co-${i}`, occurredAt, op: 'upsert', object: 'company', externalId: `a-${i}`, fields: { Name: `Account ${i}` } });
const companies = (from: number, n: number) => Array.from({ length: n }, (_, i) => company(from + i));

const org = bulkOrgs(objects, 'limits');

/** Every account once: `n` records, `n` distinct external ids. */
function expectOnce(fake: FakeSalesforce, n: number): void {
  const rows = fake.records('Account');
  expect(rows).toHaveLength(n);
  expect(new Set(rows.map((r) => r[EXT])).size).toBe(n);
}

describe('the daily Bulk API allowances (Salesforce Bulk API 2.0)', () => {
  it('a job the records allowance does not cover fails as a quota error: the Sync sends nothing more, and a later one writes the rows once', async () => {
    const { fake, sync } = await org({ pollsToComplete: 1, dailyRecords: 3_000 });
    const first = sync();
    expect(statuses(await first.applyMany(companies(0, 2_500), { bulk: 'always' }))).toEqual({ created: 2_500 });
    expect(fake.bulkUsage()).toMatchObject({ records: 2_500, batches: 1 });

    // 500 records left: the 2,500-row job is not covered, Salesforce fails it with nothing processed.
    fake.core.resetLog();
    const refused = await first.applyMany(companies(2_500, 2_500), { bulk: 'always' });
    expect(statuses(refused)).toEqual({ failed: 2_500 });
    for (const o of refused) expect(o.error).toMatchObject({ vendorCode: 'EXCEEDEDQUOTA', retryable: false });
    expect(refused[0]!.error!.message).toMatch(/daily Bulk API allowance .* is spent: Bulk API job \S+ Failed: ExceededQuota/);
    expect(fake.counts()).toEqual({ 'POST /jobs/ingest': 1, 'PUT /jobs/ingest/{id}/batches': 1, 'PATCH /jobs/ingest/{id}': 1, 'GET /jobs/ingest/{id}': 1 });
    expect(fake.bulkJobs()[1]).toMatchObject({ state: 'Failed', rows: 2_500, numberRecordsProcessed: 0 });
    expectOnce(fake, 2_500);

    // The Sync is paused: later writes fail with the same quota error and nothing reaches Salesforce.
    fake.core.resetLog();
    const paused = await first.applyMany(companies(5_000, 10));
    expect(statuses(paused)).toEqual({ failed: 10 });
    expect(paused[0]!.error).toMatchObject({ vendorCode: 'EXCEEDEDQUOTA' });
    // The same through the bulk lane: a new job is not created, a recorded job not followed; the
    // claims are given back (a later Sync takes them at once, never in_flight).
    const pausedBulk = await first.applyMany(companies(6_000, 2_100), { bulk: 'always' });
    expect(statuses(pausedBulk)).toEqual({ failed: 2_100 });
    expect(pausedBulk[0]!.error).toMatchObject({ vendorCode: 'EXCEEDEDQUOTA' });
    const pausedFollow = await first.applyMany(companies(2_500, 2_500), { bulk: 'always' });
    expect(statuses(pausedFollow)).toEqual({ failed: 2_500 });
    expect(fake.counts()).toEqual({});

    // Still spent: a new Sync follows the failed job (its rows unprocessed), and the new job is refused at creation.
    fake.setBulkUsage({ records: 3_000 });
    fake.core.resetLog();
    const spent = await sync().applyMany(companies(2_500, 2_500), { bulk: 'always' });
    expect(statuses(spent)).toEqual({ failed: 2_500 });
    expect(spent[0]!.error).toMatchObject({ vendorCode: 'EXCEEDEDQUOTA' });
    expect(spent[0]!.error!.message).toMatch(/The job you tried to create exceeds the allowed number/);
    expect(fake.counts()).toEqual({ 'GET /jobs/ingest/{id}': 2, 'GET /jobs/ingest/{id}/unprocessedrecords': 1, 'POST /jobs/ingest': 1 });
    expect(fake.bulkJobs()).toHaveLength(2);
    expectOnce(fake, 2_500);

    // The window has moved on: the rows go through one new job, each written once.
    fake.setBulkUsage({ records: 0, batches: 0 });
    fake.core.resetLog();
    const later = await sync().applyMany(companies(2_500, 2_500), { bulk: 'always' });
    expect(statuses(later)).toEqual({ created: 2_500 });
    expect(fake.count('POST /jobs/ingest')).toBe(1);
    expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(1);
    expect(fake.bulkJobs()).toHaveLength(3);
    expect(fake.bulkJobs()[2]).toMatchObject({ state: 'JobComplete', rows: 2_500, numberRecordsProcessed: 2_500 });
    expectOnce(fake, 5_000);
    fake.setBulkUsage({ records: 0, batches: 0 });
    expect(statuses(await sync().applyMany(companies(6_000, 2_100), { bulk: 'always' }))).toEqual({ created: 2_100 });
    expectOnce(fake, 7_100);
    expect(statuses(await sync().applyMany(companies(0, 5_000), { bulk: 'always' }))).toEqual({ replayed: 5_000 });
  });

  it('a job cut short by the batch allowance: its processed rows are read back by the next Sync, the rest sent once', async () => {
    const { fake, sync } = await org({ pollsToComplete: 2, dailyBatches: 1 });
    const actions = companies(0, 12_000);
    const first = await sync().applyMany(actions, { bulk: 'always' });
    expect(statuses(first)).toEqual({ failed: 12_000 });
    expect(first[0]!.error).toMatchObject({ vendorCode: 'EXCEEDEDQUOTA' });
    expect(fake.bulkJobs()).toMatchObject([{ state: 'Failed', rows: 12_000, numberRecordsProcessed: 10_000 }]);
    expectOnce(fake, 10_000);

    fake.setBulkUsage({ records: 0, batches: 0 });
    fake.core.resetLog();
    const later = await sync().applyMany(actions, { bulk: 'always' });
    expect(statuses(later)).toEqual({ created: 12_000 });
    // The failed job's 10,000 written rows come from its results; only the 2,000 unprocessed go in a new job.
    expect(fake.bulkJobs()).toHaveLength(2);
    expect(fake.bulkJobs()[1]).toMatchObject({ state: 'JobComplete', rows: 2_000 });
    expect(fake.count('GET /jobs/ingest/{id}/successfulResults')).toBe(2);
    expectOnce(fake, 12_000);
    expect(fake.bulkUsage()).toMatchObject({ records: 2_000, batches: 1 });
  });
});
