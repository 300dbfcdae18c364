/**
 * fakeSalesforce's Bulk API 2.0 ingest resources on the wire: states over job-info reads, the
 * result files as Salesforce writes them, insert and update jobs, null and relationship columns,
 * the request labels tests count by.
 */
import { describe, expect, it } from 'vitest';
import { fakeSalesforce, type FakeSalesforce } from '../../../adapters/testing/index.js';
import { parseCsvTable } from '../../../adapters/salesforce/salesforce-csv.js';

const base = '/services/data/v60.0/jobs/ingest';

async function call(fake: FakeSalesforce, method: string, path: string, body?: unknown) {
  const d = await fake.core.dispatch({ method, path, query: new URLSearchParams(), headers: { authorization: 'Bearer t' }, body, ...(typeof body === 'string' ? { raw: body } : {}) });
  if (d.kind !== 'respond') throw new Error('dropped');
  return d.response;
}

async function job(fake: FakeSalesforce, spec: Record<string, unknown>, csv: string) {
  const created = await call(fake, 'POST', `${base}/`, { contentType: 'CSV', ...spec });
  const id = (created.body as { id: string }).id;
  expect((await call(fake, 'PUT', `${base}/${id}/batches/`, csv)).status).toBe(201);
  expect((await call(fake, 'PATCH', `${base}/${id}`, { state: 'UploadComplete' })).body).toMatchObject({ state: 'UploadComplete' });
  return id;
}

describe('fakeSalesforce Bulk API 2.0', () => {
  it('moves a job through InProgress to JobComplete over job-info reads and answers results as CSV', async () => {
    const fake = fakeSalesforce({ bulk: { pollsToComplete: 3 } });
    const id = await job(fake, { object: 'Contact', operation: 'upsert', externalIdFieldName: 'AI_External_Id__c' }, 'AI_External_Id__c,LastName,Email\nc-1,"Smith, ""J""",\nc-2,Jones,not-an-email\nc-3,Brown,b@example.com\n');
    const early = await call(fake, 'GET', `${base}/${id}/successfulResults/`);
    expect(early).toMatchObject({ status: 400, body: [{ errorCode: 'API_ERROR' }] });
    const states = [];
    for (let i = 0; i < 4; i++) states.push((await call(fake, 'GET', `${base}/${id}`)).body);
    expect(states.map((s) => [(s as { state: string }).state, (s as { numberRecordsProcessed: number }).numberRecordsProcessed])).toEqual([
      ['InProgress', 1],
      ['InProgress', 2],
      ['JobComplete', 3],
      ['JobComplete', 3],
    ]);
    expect(states[3]).toMatchObject({ jobType: 'V2Ingest', numberRecordsFailed: 1, retries: 0 });

    const ok = await call(fake, 'GET', `${base}/${id}/successfulResults/`);
    expect(ok.headers?.['content-type']).toBe('text/csv');
    expect(ok.rawBody!.split('\n')[0]).toBe('"sf__Id","sf__Created",AI_External_Id__c,LastName,Email');
    const rows = parseCsvTable(ok.rawBody!).rows;
    expect(rows.map((r) => r.AI_External_Id__c).sort()).toEqual(['c-1', 'c-3']);
    expect(rows.find((r) => r.AI_External_Id__c === 'c-1')).toMatchObject({ sf__Created: 'true', LastName: 'Smith, "J"', Email: '' });
    expect(ok.rawBody).toContain('"Smith, ""J"""');

    const bad = await call(fake, 'GET', `${base}/${id}/failedResults/`);
    expect(bad.rawBody).toBe('"sf__Id","sf__Error",AI_External_Id__c,LastName,Email\n"","INVALID_EMAIL_ADDRESS:Email: invalid email address: not-an-email:Email --","c-2","Jones","not-an-email"\n');
    expect((await call(fake, 'GET', `${base}/${id}/unprocessedrecords/`)).rawBody).toBe('AI_External_Id__c,LastName,Email\n');
    expect(fake.counts()).toMatchObject({
      'POST /jobs/ingest': 1,
      'PUT /jobs/ingest/{id}/batches': 1,
      'PATCH /jobs/ingest/{id}': 1,
      'GET /jobs/ingest/{id}': 4,
      'GET /jobs/ingest/{id}/successfulResults': 2,
      'GET /jobs/ingest/{id}/failedResults': 1,
      'GET /jobs/ingest/{id}/unprocessedrecords': 1,
    });
  });

  it('runs insert and update jobs, sets lookups by relationship column and clears fields with #N/A', async () => {
    const fake = fakeSalesforce({ bulk: { pollsToComplete: 1 } });
    const insert = await job(fake, { object: 'Account', operation: 'insert', lineEnding: 'CRLF' }, 'Name,AI_External_Id__c,Industry\r\nAcme,acme,Banking\r\nBeta,beta,Energy\r\n');
    expect((await call(fake, 'GET', `${base}/${insert}`)).body).toMatchObject({ state: 'JobComplete', operation: 'insert', numberRecordsProcessed: 2, numberRecordsFailed: 0 });
    expect((await call(fake, 'GET', `${base}/${insert}`)).body).not.toHaveProperty('externalIdFieldName');
    // Rows are processed out of upload order: find them by external id.
    const acme = fake.records('Account').find((r) => r.AI_External_Id__c === 'acme');
    const beta = fake.records('Account').find((r) => r.AI_External_Id__c === 'beta');

    const contacts = await job(fake, { object: 'Contact', operation: 'upsert', externalIdFieldName: 'AI_External_Id__c' }, 'AI_External_Id__c,LastName,Phone,Account.AI_External_Id__c\nc-1,Smith,555,acme\n');
    await call(fake, 'GET', `${base}/${contacts}`);
    expect(fake.records('Contact')[0]).toMatchObject({ LastName: 'Smith', Phone: '555', AccountId: acme!.Id });

    const update = await job(fake, { object: 'Account', operation: 'update' }, `Id,Industry,Name\n${beta!.Id},#N/A,Beta Two\n001000000000999AAA,Banking,Ghost\n`);
    expect((await call(fake, 'GET', `${base}/${update}`)).body).toMatchObject({ state: 'JobComplete', numberRecordsProcessed: 2, numberRecordsFailed: 1 });
    const updated = fake.records('Account').find((r) => r.Id === beta!.Id)!;
    expect(updated.Name).toBe('Beta Two');
    expect(updated).not.toHaveProperty('Industry');
    expect((await call(fake, 'GET', `${base}/${update}/failedResults/`)).rawBody).toContain('"INVALID_CROSS_REFERENCE_KEY:invalid cross reference id:--","001000000000999AAA","Banking","Ghost"');
    expect(fake.records('Account')).toHaveLength(2);

    const clear = await job(fake, { object: 'Contact', operation: 'upsert', externalIdFieldName: 'AI_External_Id__c' }, 'AI_External_Id__c,Phone,Account.AI_External_Id__c\nc-1,#N/A,#N/A\n');
    await call(fake, 'GET', `${base}/${clear}`);
    const contact = fake.records('Contact')[0]!;
    expect(contact.LastName).toBe('Smith');
    expect(contact).not.toHaveProperty('Phone');
    expect(contact).not.toHaveProperty('AccountId');
  });

  it('takes a polymorphic lookup only as ObjectType:RelationshipName.Field, and a type on any other lookup fails the job', async () => {
    const fake = fakeSalesforce({ bulk: { pollsToComplete: 1 } });
    const contact = await job(fake, { object: 'Contact', operation: 'upsert', externalIdFieldName: 'AI_External_Id__c' }, 'AI_External_Id__c,LastName\nc-1,Smith\n');
    await call(fake, 'GET', `${base}/${contact}`);
    const failedWith = async (object: string, csv: string) => {
      const id = await job(fake, { object, operation: 'upsert', externalIdFieldName: object === 'Task' ? 'AI_Idempotency_Key__c' : 'AI_External_Id__c' }, csv);
      return ((await call(fake, 'GET', `${base}/${id}`)).body as { state: string; errorMessage?: string });
    };
    // Salesforce's own sample: `Lead:Who.Email`.
    expect(await failedWith('Task', 'AI_Idempotency_Key__c,Subject,Contact:Who.AI_External_Id__c\nk-1,Call,c-1\n')).toMatchObject({ state: 'JobComplete' });
    expect(fake.records('Task')[0]).toMatchObject({ Subject: 'Call', WhoId: fake.records('Contact')[0]!.Id });
    expect(await failedWith('Task', 'AI_Idempotency_Key__c,Subject,Who.AI_External_Id__c\nk-2,Call,c-1\n')).toMatchObject({ state: 'Failed', errorMessage: 'InvalidBatch : type is needed for polymorphic foreign key references: Who' });
    expect(await failedWith('Task', 'AI_Idempotency_Key__c,Subject,Who:Contact.AI_External_Id__c\nk-3,Call,c-1\n')).toMatchObject({ state: 'Failed', errorMessage: 'InvalidBatch : Unable to find relationship: Contact' });
    expect(await failedWith('Contact', 'AI_External_Id__c,Account:Account.AI_External_Id__c\nc-1,acme\n')).toMatchObject({ state: 'Failed', errorMessage: 'InvalidBatch : type is not needed for non polymorphic foreign key references: Account' });
    expect(fake.records('Task')).toHaveLength(1);
  });

  it('refuses bad job requests with Salesforce codes and counts each as an API request', async () => {
    const fake = fakeSalesforce();
    expect(await call(fake, 'POST', base, { object: 'Contact', operation: 'merge', contentType: 'CSV' })).toMatchObject({ status: 400, body: [{ errorCode: 'API_ERROR', message: "Invalid value: 'merge' supplied for property: 'operation'" }] });
    expect(await call(fake, 'POST', base, { object: 'Contact', operation: 'insert', contentType: 'JSON' })).toMatchObject({ status: 400, body: [{ errorCode: 'API_ERROR', message: "Invalid value: 'JSON' supplied for property: 'contentType'" }] });
    expect(await call(fake, 'POST', base, { object: 'Contact', operation: 'upsert', externalIdFieldName: 'Email' })).toMatchObject({ status: 400, body: [{ errorCode: 'INVALIDJOB' }] });
    expect(await call(fake, 'GET', `${base}/750000000000404AAA`)).toMatchObject({ status: 404, body: [{ errorCode: 'NOT_FOUND' }] });
    const open = (await call(fake, 'POST', base, { object: 'Contact', operation: 'insert' })).body as { id: string };
    expect(await call(fake, 'DELETE', `${base}/${open.id}`)).toMatchObject({ status: 400, body: [{ errorCode: 'INVALIDJOBSTATE' }] });
    expect(await call(fake, 'PATCH', `${base}/${open.id}`, { state: 'JobComplete' })).toMatchObject({ status: 400, body: [{ errorCode: 'API_ERROR' }] });
    expect(await call(fake, 'PATCH', `${base}/${open.id}`, { state: 'UploadComplete' })).toMatchObject({ status: 200 });
    expect((await call(fake, 'GET', `${base}/${open.id}`)).body).toMatchObject({ state: 'Failed', errorMessage: 'InvalidBatch : No data uploaded for the job' });
    expect(await call(fake, 'DELETE', `${base}/${open.id}`)).toEqual({ status: 204, headers: expect.any(Object) });
    const aborted = (await call(fake, 'POST', base, { object: 'Contact', operation: 'insert' })).body as { id: string };
    expect(await call(fake, 'PATCH', `${base}/${aborted.id}`, { state: 'Aborted' })).toMatchObject({ status: 200, body: { state: 'Aborted' } });
    expect(await call(fake, 'PUT', `${base}/${aborted.id}/batches`, 'LastName\nX\n')).toMatchObject({ status: 400, body: [{ errorCode: 'INVALIDJOBSTATE' }] });
    expect(fake.apiUsage().used).toBe(13);
  });

  it('counts records and 10,000-record batches against the daily allowances; a job the allowance does not cover fails, the rest unprocessed', async () => {
    const fake = fakeSalesforce({ bulk: { pollsToComplete: 1, dailyRecords: 5, dailyBatches: 15_000 } });
    expect(fake.bulkUsage()).toEqual({ records: 0, batches: 0, dailyRecords: 5, dailyBatches: 15_000 });
    const upsert = { object: 'Contact', operation: 'upsert', externalIdFieldName: 'AI_External_Id__c' };
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => `c-${from + i},Last ${from + i}\n`).join('');
    const first = await job(fake, upsert, `AI_External_Id__c,LastName\n${rows(0, 3)}`);
    expect((await call(fake, 'GET', `${base}/${first}`)).body).toMatchObject({ state: 'JobComplete', numberRecordsProcessed: 3 });
    expect(fake.bulkUsage()).toMatchObject({ records: 3, batches: 1 });

    // 2 records left: a batch of 3 is not covered, so nothing of the job is processed.
    const second = await job(fake, upsert, `AI_External_Id__c,LastName\n${rows(3, 3)}`);
    const failed = (await call(fake, 'GET', `${base}/${second}`)).body as Record<string, unknown>;
    expect(failed).toMatchObject({ state: 'Failed', numberRecordsProcessed: 0, numberRecordsFailed: 0 });
    expect(failed.errorMessage).toMatch(/^ExceededQuota : .*records \(5\)/);
    expect(parseCsvTable((await call(fake, 'GET', `${base}/${second}/unprocessedrecords/`)).rawBody!).rows.map((r) => r.AI_External_Id__c)).toEqual(['c-3', 'c-4', 'c-5']);
    expect(fake.records('Contact')).toHaveLength(3);
    expect(fake.bulkUsage()).toMatchObject({ records: 3, batches: 1 });

    // Spent whole: the job is refused at creation.
    fake.setBulkUsage({ records: 5 });
    const refused = await call(fake, 'POST', base, { contentType: 'CSV', ...upsert });
    expect(refused).toMatchObject({ status: 400, body: [{ errorCode: 'EXCEEDEDQUOTA' }] });
    expect((refused.body as Array<{ message: string }>)[0]!.message).toMatch(/^ExceededQuota : /);

    // The window moves on: the same rows go through.
    fake.setBulkUsage({ records: 0, batches: 0 });
    const again = await job(fake, upsert, `AI_External_Id__c,LastName\n${rows(3, 3)}`);
    expect((await call(fake, 'GET', `${base}/${again}`)).body).toMatchObject({ state: 'JobComplete', numberRecordsProcessed: 3 });
    expect(fake.records('Contact')).toHaveLength(6);
  });

  it('takes one batch per 10,000 records: with one batch left a 12,000-row job writes its first 10,000 rows and fails', async () => {
    const fake = fakeSalesforce({ dailyLimit: 1_000_000, bulk: { pollsToComplete: 2, dailyBatches: 3 } });
    fake.setBulkUsage({ batches: 2 });
    const csv = `AI_External_Id__c,LastName\n${Array.from({ length: 12_000 }, (_, i) => `c-${i},L${i}\n`).join('')}`;
    const id = await job(fake, { object: 'Contact', operation: 'upsert', externalIdFieldName: 'AI_External_Id__c' }, csv);
    expect((await call(fake, 'GET', `${base}/${id}`)).body).toMatchObject({ state: 'InProgress', numberRecordsProcessed: 5_000 });
    const end = (await call(fake, 'GET', `${base}/${id}`)).body as Record<string, unknown>;
    expect(end).toMatchObject({ state: 'Failed', numberRecordsProcessed: 10_000, numberRecordsFailed: 0 });
    expect(end.errorMessage).toMatch(/^ExceededQuota : .*batches \(3\).*2000 records were not processed/);
    expect(fake.bulkUsage()).toMatchObject({ records: 10_000, batches: 3 });
    const written = new Set(fake.records('Contact').map((r) => r.AI_External_Id__c));
    expect(written.size).toBe(10_000);
    // Batches are cut in upload order: the last 2,000 rows are the ones left.
    const left = parseCsvTable((await call(fake, 'GET', `${base}/${id}/unprocessedrecords/`)).rawBody!).rows.map((r) => r.AI_External_Id__c);
    expect(left).toEqual(Array.from({ length: 2_000 }, (_, i) => `c-${10_000 + i}`));
    expect(left.some((v) => written.has(v))).toBe(false);
    expect(await call(fake, 'POST', base, { object: 'Contact', operation: 'insert' })).toMatchObject({ status: 400, body: [{ errorCode: 'EXCEEDEDQUOTA' }] });
  });
});
