/**
 * The Bulk API 2.0 client (adapter.bulk) against fakeSalesforce over loopback, through the real
 * jsforce Connection: one job for 10,000 contacts with their accounts, the requests it takes,
 * every row matched back by external id, created vs updated, failed rows naming field and
 * reason, aborted jobs, a job followed by a client started again with only its id, uploads split
 * under a size limit, and Salesforce's refusals of a bad job.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { toCsv, salesforceAdapter, type SalesforceAdapter, type SalesforceBulkOptions } from '../../adapters/salesforce/index.js';
import { fakeSalesforce, type FakeBulkOptions, type FakeSalesforce } from '../../adapters/testing/index.js';
import { CrmError } from '../../src/errors.js';
import { fronts, objects, TOKEN, type Front } from './salesforce-helpers.js';

const EXT = 'AI_External_Id__c';
const ACCOUNT_COLUMN = 'Account.AI_External_Id__c';

interface Org {
  fake: FakeSalesforce;
  instanceUrl: string;
  sleeps: number[];
  /** A new adapter (a new jsforce Connection), as a process started again builds one. */
  client(bulk?: SalesforceBulkOptions): SalesforceAdapter;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!();
});

let origins = 0;

async function org(bulk: FakeBulkOptions = {}, kind: Front = 'loopback'): Promise<Org> {
  const fake = fakeSalesforce({ accessToken: TOKEN, dailyLimit: 1_000_000, bulk });
  const front = await fake.open(kind, `https://bulk${++origins}.my.salesforce.com`);
  open.push(() => front.close());
  const sleeps: number[] = [];
  const sleep = async (ms: number) => void sleeps.push(ms);
  return {
    fake,
    instanceUrl: front.url,
    sleeps,
    client: (options = {}) => salesforceAdapter({ instanceUrl: front.url, accessToken: TOKEN, objects, bulk: { sleep, ...options } }),
  };
}

const accounts = (n: number) => Array.from({ length: n }, (_, i) => ({ [EXT]: `a-${i}`, Name: `Account ${i}` }));
const contacts = (n: number, accountsOf = 500, first = (i: number) => `First ${i}`) =>
  Array.from({ length: n }, (_, i) => ({
    [EXT]: `c-${i}`,
    LastName: i % 97 === 0 ? `O'Neil, "Jr"\nthe second ${i}` : `Last ${i}`,
    FirstName: first(i),
    Email: `c${i}@example.com`,
    [ACCOUNT_COLUMN]: `a-${i % accountsOf}`,
  }));

const byExt = (records: Array<Record<string, unknown>>) => new Map(records.map((r) => [String(r[EXT]), r]));

describe('adapter.bulk (Bulk API 2.0) against fakeSalesforce', () => {
  it('upserts 10,000 contacts linked to 500 accounts in one job of 6 requests, then updates them in a second', async () => {
    const { fake, client, sleeps } = await org({ pollsToComplete: 2 });
    const adapter = client();
    const parents = await adapter.bulk.upsert({ object: 'Account', externalIdFieldName: EXT, rows: accounts(500) });
    expect([...parents.outcomes.values()].every((o) => o.status === 'created')).toBe(true);
    fake.core.resetLog();
    sleeps.length = 0;

    const rows = contacts(10_000);
    const recorded: Array<{ id: string; ids: number }> = [];
    const first = await adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows, onJob: (job, ids) => void recorded.push({ id: job.id, ids: ids.length }) });

    // create, upload, close, two polls (InProgress, then JobComplete), the successful results:
    // no failed rows and a JobComplete job, so neither failedResults nor unprocessedrecords is read.
    expect(fake.counts()).toEqual({
      'POST /jobs/ingest': 1,
      'PUT /jobs/ingest/{id}/batches': 1,
      'PATCH /jobs/ingest/{id}': 1,
      'GET /jobs/ingest/{id}': 2,
      'GET /jobs/ingest/{id}/successfulResults': 1,
    });
    expect(sleeps).toEqual([5_000, 7_500]);
    expect(first.jobs).toHaveLength(1);
    expect(first.jobs[0]).toMatchObject({ state: 'JobComplete', object: 'Contact', operation: 'upsert', externalIdFieldName: EXT, numberRecordsProcessed: 10_000, numberRecordsFailed: 0 });
    expect(recorded).toEqual([{ id: first.jobs[0]!.id, ids: 10_000 }]);

    const stored = byExt(fake.records('Contact'));
    const accountIds = byExt(fake.records('Account'));
    expect(stored.size).toBe(10_000);
    expect(first.outcomes.size).toBe(10_000);
    for (const [i, row] of rows.entries()) {
      const outcome = first.outcomes.get(row[EXT]!);
      const record = stored.get(row[EXT]!)!;
      expect(outcome).toEqual({ status: 'created', jobId: first.jobs[0]!.id, id: record.Id });
      expect(record.LastName).toBe(row.LastName);
      expect(record.AccountId).toBe(accountIds.get(`a-${i % 500}`)!.Id);
    }

    // Salesforce does not keep the upload order, and neither does the fake: matching is by external id.
    const results = await adapter.bulk.results(first.jobs[0]!);
    const order = results.successful.rows.map((r) => r[EXT]);
    expect(order).not.toEqual(rows.map((r) => r[EXT]));
    expect([...order].sort()).toEqual(rows.map((r) => r[EXT]!).sort());
    expect(results.successful.columns.slice(0, 3)).toEqual(['sf__Id', 'sf__Created', EXT]);

    fake.core.resetLog();
    const second = await adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows: contacts(10_000, 500, (i) => `Renamed ${i}`) });
    expect(fake.count()).toBe(6);
    expect(second.jobs[0]!.id).not.toBe(first.jobs[0]!.id);
    for (const [ext, outcome] of second.outcomes) expect(outcome).toEqual({ status: 'updated', jobId: second.jobs[0]!.id, id: stored.get(ext)!.Id });
    const after = byExt(fake.records('Contact'));
    expect(after.size).toBe(10_000);
    expect(after.get('c-42')!.FirstName).toBe('Renamed 42');

    // The rows are the org's records: a Collections upsert of one finds it.
    const [write] = await adapter.upsertRecords('contact', [{ key: 'k', object: 'contact', externalId: 'c-42', fields: { FirstName: 'Once more' } }]);
    expect(write).toEqual({ ok: true, recordId: stored.get('c-42')!.Id, created: false });
    expect(fake.bulkJobs().map((j) => [j.object, j.state, j.rows])).toEqual([['Account', 'JobComplete', 500], ['Contact', 'JobComplete', 10_000], ['Contact', 'JobComplete', 10_000]]);
    // Three jobs of 6 requests, the results read again above, the Collections upsert.
    expect(adapter.apiCalls()).toBe(6 + 6 + 1 + 6 + 1);
  });

  it.each(fronts)('runs a job with awkward values over the %s front', async (kind) => {
    const { fake, client } = await org({ pollsToComplete: 2 }, kind);
    const rows = contacts(200).map(({ [ACCOUNT_COLUMN]: _a, ...r }) => r);
    const { jobs, outcomes } = await client().bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows });
    expect(jobs[0]).toMatchObject({ state: 'JobComplete', numberRecordsProcessed: 200 });
    expect(fake.count()).toBe(6);
    const stored = byExt(fake.records('Contact'));
    for (const row of rows) {
      expect(outcomes.get(row[EXT]!)).toEqual({ status: 'created', jobId: jobs[0]!.id, id: stored.get(row[EXT]!)!.Id });
      expect(stored.get(row[EXT]!)!.LastName).toBe(row.LastName);
    }
  });

  it('fails 1% of rows naming field and reason, and writes the rest', async () => {
    const { fake, client } = await org();
    fake.defineField('Contact', 'Level__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'Primary' }, { value: 'Secondary' }] });
    const adapter = client();
    await adapter.bulk.upsert({ object: 'Account', externalIdFieldName: EXT, rows: accounts(50) });
    fake.core.resetLog();

    const rows: Array<Record<string, string | null>> = contacts(1_000, 50).map((r) => ({ ...r, Level__c: 'Primary' }));
    for (let i = 7; i < 1_000; i += 200) rows[i]!.Level__c = 'Tertiary';
    for (let i = 107; i < 1_000; i += 200) rows[i]![ACCOUNT_COLUMN] = `a-missing-${i}`;
    rows[500]!.LastName = null;
    const { jobs, outcomes } = await adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows });

    expect(jobs[0]).toMatchObject({ state: 'JobComplete', numberRecordsProcessed: 1_000, numberRecordsFailed: 11 });
    expect(fake.count('GET /jobs/ingest/{id}/failedResults')).toBe(1);
    expect(fake.count('unprocessedrecords')).toBe(0);
    const failed = [...outcomes].filter(([, o]) => o.status === 'failed');
    expect(failed).toHaveLength(11);
    for (let i = 7; i < 1_000; i += 200) {
      const o = outcomes.get(`c-${i}`);
      if (o?.status !== 'failed') throw new Error(`c-${i} did not fail`);
      expect(o.sfError).toBe('INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST:bad value for restricted picklist field: Tertiary:Level__c --');
      expect(o.error).toMatchObject({ field: 'Level__c', vendorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', retryable: false });
      expect(o.error.message).toContain('Contact.Level__c = "Tertiary" refused');
    }
    for (let i = 107; i < 1_000; i += 200) {
      const o = outcomes.get(`c-${i}`);
      if (o?.status !== 'failed') throw new Error(`c-${i} did not fail`);
      expect(o.sfError).toBe(`INVALID_FIELD:Foreign key external ID: a-missing-${i} not found for field ${EXT} in entity Account:--`);
      expect(o.error).toMatchObject({ field: ACCOUNT_COLUMN, vendorCode: 'INVALID_FIELD', retryable: false });
      expect(o.error.message).toContain(`no Account has ${EXT} "a-missing-${i}"`);
    }
    const missing = outcomes.get('c-500');
    expect(missing).toMatchObject({ status: 'failed', sfError: 'REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --' });
    expect(missing?.status === 'failed' && missing.error.field).toBe('LastName');

    const stored = byExt(fake.records('Contact'));
    expect(stored.size).toBe(989);
    for (const [ext, o] of outcomes) {
      if (o.status === 'failed') expect(stored.has(ext)).toBe(false);
      else expect(o).toEqual({ status: 'created', jobId: jobs[0]!.id, id: stored.get(ext)!.Id });
    }
  });

  it('leaves the rows of an aborted job unprocessed, and a deleted job is gone', async () => {
    const { fake, client } = await org({ pollsToComplete: 2 });
    const adapter = client();
    const rows = contacts(100).map(({ [ACCOUNT_COLUMN]: _a, ...r }) => r);
    const job = await adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    expect(job).toMatchObject({ state: 'Open', object: 'Contact', operation: 'upsert', externalIdFieldName: EXT, contentType: 'CSV', apiVersion: 60, lineEnding: 'LF', columnDelimiter: 'COMMA' });
    expect(job.id).toMatch(/^750[0-9A-Za-z]{15}$/);
    expect(job.contentUrl).toBe(`services/data/v60.0/jobs/ingest/${job.id}/batches`);
    await adapter.bulk.upload(job.id, `${EXT},LastName\n${rows.map((r) => `${r[EXT]},Last`).join('\n')}\n`);
    expect(await adapter.bulk.close(job.id)).toMatchObject({ state: 'UploadComplete' });
    expect(await adapter.bulk.info(job.id)).toMatchObject({ state: 'InProgress', numberRecordsProcessed: 50 });
    expect(await adapter.bulk.abort(job.id)).toMatchObject({ state: 'Aborted' });

    fake.core.resetLog();
    const { job: end, outcomes } = await adapter.bulk.outcomes(job.id);
    expect(end).toMatchObject({ state: 'Aborted', numberRecordsProcessed: 50, numberRecordsFailed: 0 });
    expect(fake.counts()).toEqual({ 'GET /jobs/ingest/{id}': 1, 'GET /jobs/ingest/{id}/successfulResults': 1, 'GET /jobs/ingest/{id}/unprocessedrecords': 1 });
    const statuses = [...outcomes.values()].map((o) => o.status);
    expect(statuses.filter((s) => s === 'created')).toHaveLength(50);
    expect(statuses.filter((s) => s === 'unprocessed')).toHaveLength(50);
    expect(outcomes.size).toBe(100);
    expect(fake.records('Contact')).toHaveLength(50);

    const open = await adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    expect(await adapter.bulk.abort(open.id)).toMatchObject({ state: 'Aborted' });
    await expect(adapter.bulk.close(open.id)).rejects.toMatchObject({ vendorCode: 'INVALIDJOBSTATE', status: 400 });

    await adapter.bulk.delete(job.id);
    await expect(adapter.bulk.info(job.id)).rejects.toMatchObject({ vendorCode: 'NOT_FOUND', status: 404, retryable: false });
    expect(fake.bulkJobs().map((j) => j.id)).toEqual([open.id]);
  });

  it('a client started again with only the job id polls the same job and reads the same results', async () => {
    const { fake, client } = await org({ pollsToComplete: 3 });
    const first = client();
    await first.bulk.upsert({ object: 'Account', externalIdFieldName: EXT, rows: accounts(20) });
    const rows = contacts(1_000, 20);
    rows[3]![ACCOUNT_COLUMN] = 'a-nobody';
    // The first process records the job id, uploads, closes, sees it InProgress once, then dies.
    const job = await first.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    const recorded = job.id;
    await first.bulk.upload(job.id, toCsv([EXT, 'LastName', ACCOUNT_COLUMN], rows));
    await first.bulk.close(job.id);
    expect(await first.bulk.info(job.id)).toMatchObject({ state: 'InProgress' });

    fake.core.resetLog();
    const again = client();
    const resumed = await again.bulk.outcomes(recorded);
    expect(resumed.job).toMatchObject({ id: job.id, state: 'JobComplete', numberRecordsProcessed: 1_000, numberRecordsFailed: 1 });
    expect(fake.counts()).toEqual({ 'GET /jobs/ingest/{id}': 2, 'GET /jobs/ingest/{id}/successfulResults': 1, 'GET /jobs/ingest/{id}/failedResults': 1 });
    expect(resumed.outcomes.size).toBe(1_000);
    expect(resumed.outcomes.get('c-3')).toMatchObject({ status: 'failed', error: { field: ACCOUNT_COLUMN } });
    const stored = byExt(fake.records('Contact'));
    expect(stored.size).toBe(999);
    for (const [ext, o] of resumed.outcomes) if (o.status !== 'failed') expect(o).toEqual({ status: 'created', jobId: job.id, id: stored.get(ext)!.Id });

    // A third process reads the same answer; nothing is uploaded again, no job is added.
    const third = await client().bulk.outcomes(recorded);
    expect(third.outcomes).toEqual(resumed.outcomes);
    expect(fake.count('POST')).toBe(0);
    expect(fake.count('PUT')).toBe(0);
    expect(fake.bulkJobs().filter((j) => j.object === 'Contact')).toHaveLength(1);
  });

  it('splits an upload over the size limit into several jobs, each under it', async () => {
    const { fake, client } = await org({ maxUploadBytes: 4_000 });
    const rows = contacts(300).map(({ [ACCOUNT_COLUMN]: _a, ...r }) => r);
    const { jobs, outcomes } = await client({ maxUploadBytes: 4_000 }).bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows });
    expect(jobs.length).toBeGreaterThan(3);
    expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(jobs.length);
    for (const put of fake.requests.filter((r) => r.method === 'PUT')) expect(Buffer.byteLength(put.raw ?? '', 'utf8')).toBeLessThanOrEqual(4_000);
    expect(fake.bulkJobs().reduce((n, j) => n + j.rows, 0)).toBe(300);
    expect([...outcomes.values()].filter((o) => o.status === 'created')).toHaveLength(300);
    expect(fake.records('Contact')).toHaveLength(300);

    // The same rows in one upload are refused by the org: the limit is what keeps them apart.
    await expect(client().bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows })).rejects.toMatchObject({ status: 413 });
  });

  it('refuses what Salesforce refuses: an unknown object, a field that is not an External ID, an unknown column, text that is not CSV, a second upload', async () => {
    const { fake, client } = await org();
    const adapter = client();
    const bad = adapter.bulk.createJob({ object: 'Nope__c', externalIdFieldName: EXT });
    await expect(bad).rejects.toBeInstanceOf(CrmError);
    await expect(bad).rejects.toMatchObject({ vendorCode: 'INVALIDJOB', status: 400, retryable: false });
    await expect(bad).rejects.toThrow('InvalidJob : Unable to find object: Nope__c');
    await expect(adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: 'LastName' })).rejects.toThrow('InvalidJob : Field name provided, LastName does not match an External ID for Contact');
    await expect(adapter.bulk.createJob({ object: 'Contact' })).rejects.toThrow('InvalidJob : Field name provided,  does not match an External ID for Contact');
    // The refusal carries no secret, however it is printed.
    const refusal = await adapter.bulk.createJob({ object: 'Nope__c', externalIdFieldName: EXT }).catch((e: unknown) => e);
    expect(inspect(refusal, { depth: 10 })).not.toContain(TOKEN);

    const unknown = await adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows: [{ [EXT]: 'x-1', LastName: 'X', 'Account.Bad__c': 'a-1' }] });
    expect(unknown.jobs[0]).toMatchObject({ state: 'Failed', errorMessage: 'InvalidBatch : Field name not found : Account.Bad__c', numberRecordsProcessed: 0 });
    expect(unknown.outcomes.get('x-1')).toEqual({ status: 'unprocessed', jobId: unknown.jobs[0]!.id, reason: 'InvalidBatch : Field name not found : Account.Bad__c' });
    const plain = await adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows: [{ [EXT]: 'x-2', LastName: 'X', Nickname__c: 'y' }] });
    expect(plain.jobs[0]!.errorMessage).toBe('InvalidBatch : Field name not found : Nickname__c');

    const job = await adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    await adapter.bulk.upload(job.id, `${EXT},LastName\n"x-3,Smith\n`);
    await expect(adapter.bulk.upload(job.id, `${EXT},LastName\nx-3,Smith\n`)).rejects.toThrow("Found multipe contents for job");
    await adapter.bulk.close(job.id);
    const failed = await adapter.bulk.waitForJob(job.id);
    expect(failed.state).toBe('Failed');
    expect(failed.errorMessage).toMatch(/^InvalidBatch : Failed to parse CSV: a quoted value is not closed/);

    const crlf = await adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    await adapter.bulk.upload(crlf.id, `${EXT},LastName\r\nx-4,Smith\r\n`);
    await adapter.bulk.close(crlf.id);
    expect((await adapter.bulk.waitForJob(crlf.id)).errorMessage).toBe('ClientInputError : LineEnding is invalid on user data. Current LineEnding setting is LF');
    expect(fake.records('Contact')).toHaveLength(0);

    await expect(adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows: [{ [EXT]: 'd' }, { [EXT]: 'd' }, { LastName: 'no id' }] })).rejects.toThrow(
      'rows[1].AI_External_Id__c: repeats rows[0] ("d"): one job takes each external id once; rows[2].AI_External_Id__c: is empty',
    );
  });

  it('stops before the upload when onJob fails, reads CSV errors as Salesforce codes, and marks a locked row retryable', async () => {
    const { fake, client } = await org({ pollsToComplete: 2 });
    const adapter = client();
    const refused = adapter.bulk.upsert({
      object: 'Contact',
      externalIdFieldName: EXT,
      rows: [{ [EXT]: 'o-1', LastName: 'O' }],
      onJob: () => {
        throw new Error('the ledger is down');
      },
    });
    await expect(refused).rejects.toThrow('the ledger is down');
    expect(fake.count('PUT')).toBe(0);
    // Never closed, the job is aborted: nothing of it is ever processed.
    expect(fake.bulkJobs()).toMatchObject([{ state: 'Aborted', rows: 0 }]);

    const job = await adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    await adapter.bulk.upload(job.id, `${EXT},LastName\nl-1,L\nl-2,M\n`);
    const closed = await adapter.bulk.close(job.id);
    // A result set read while the job is processed: Salesforce's JSON error, read back from the text body.
    await expect(adapter.bulk.results({ ...closed, numberRecordsProcessed: 2 })).rejects.toMatchObject({ vendorCode: 'API_ERROR', status: 400, retryable: false });
    fake.lockRowNext(1);
    const { outcomes } = await adapter.bulk.outcomes(job.id);
    const locked = [...outcomes.values()].find((o) => o.status === 'failed');
    expect(locked).toMatchObject({ status: 'failed', error: { vendorCode: 'UNABLE_TO_LOCK_ROW', retryable: true } });
    expect([...outcomes.values()].filter((o) => o.status === 'created')).toHaveLength(1);
  });

  it('retries a poll that failed transiently and gives up polling after the timeout', async () => {
    const { fake, client, sleeps } = await org({ pollsToComplete: 2 });
    const adapter = client({ pollIntervalMs: 1_000 });
    fake.failNext('server_error', { endpoint: 'GET /jobs/ingest/{id}' });
    const { outcomes } = await adapter.bulk.upsert({ object: 'Contact', externalIdFieldName: EXT, rows: [{ [EXT]: 'r-1', LastName: 'R' }] });
    expect(outcomes.get('r-1')?.status).toBe('created');
    // The poll answered 503, then the two polls it takes.
    expect(fake.counts()['GET /jobs/ingest/{id}']).toBe(3);
    expect(sleeps).toEqual([1_000, 1_000, 1_500]);

    const slow = await org({ pollsToComplete: 50 });
    const patient = slow.client({ pollIntervalMs: 1_000, maxPollIntervalMs: 2_000, timeoutMs: 10_000 });
    const job = await patient.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    await patient.bulk.upload(job.id, `${EXT},LastName\nt-1,T\n`);
    await patient.bulk.close(job.id);
    await expect(patient.bulk.waitForJob(job.id)).rejects.toMatchObject({ vendorCode: 'BULK_JOB_TIMEOUT', retryable: true });
    expect(slow.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
    expect(slow.fake.bulkJobs()[0]!.state).toBe('InProgress');
  });
});
