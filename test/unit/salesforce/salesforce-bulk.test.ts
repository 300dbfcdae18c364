/**
 * The Bulk API 2.0 client's own rules, over a scripted request path: `sf__Error` parsing, the
 * poll backoff and its timeout, which result sets are read, uploads split at the byte limit.
 */
import { describe, expect, it } from 'vitest';
import { parseSfError, salesforceBulk, type BulkJobInfo, type BulkSend } from '../../../adapters/salesforce/salesforce-bulk.js';
import type { SalesforceHttpRequest } from '../../../adapters/salesforce/salesforce-options.js';

const job = (state: BulkJobInfo['state'], extra: Partial<BulkJobInfo> = {}): BulkJobInfo => ({ id: '750J', object: 'Contact', operation: 'upsert', externalIdFieldName: 'Ext__c', state, ...extra });

/** A request path answering from `answer`, recording each request. */
function scripted(answer: (req: SalesforceHttpRequest) => unknown) {
  const sent: SalesforceHttpRequest[] = [];
  const send: BulkSend = async <R>(req: SalesforceHttpRequest) => {
    sent.push(req);
    return answer(req) as R;
  };
  return { send, sent, paths: () => sent.map((r) => `${r.method} ${r.url.replace('/services/data/v60.0/jobs/ingest', '')}`) };
}

describe('parseSfError', () => {
  it.each([
    ['REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --', { statusCode: 'REQUIRED_FIELD_MISSING', message: 'Required fields are missing: [LastName]', fields: ['LastName'] }],
    ['INVALID_CROSS_REFERENCE_KEY:invalid cross reference id:--', { statusCode: 'INVALID_CROSS_REFERENCE_KEY', message: 'invalid cross reference id', fields: [] }],
    ['INVALID_FIELD:Foreign key external ID: a:b not found for field Ext__c in entity Account:--', { statusCode: 'INVALID_FIELD', message: 'Foreign key external ID: a:b not found for field Ext__c in entity Account', fields: [] }],
    ['REQUIRED_FIELD_MISSING:Required fields are missing: [LastName, Company]:LastName,Company --', { statusCode: 'REQUIRED_FIELD_MISSING', message: 'Required fields are missing: [LastName, Company]', fields: ['LastName', 'Company'] }],
    ['something else entirely', { statusCode: 'UNKNOWN', message: 'something else entirely', fields: [] }],
  ])('reads %j', (cell, parsed) => {
    expect(parseSfError(cell)).toEqual(parsed);
  });
});

describe('salesforceBulk', () => {
  it('waits longer between polls, up to the longest wait, and stops at the timeout', async () => {
    const sleeps: number[] = [];
    const { send, sent } = scripted(() => job('InProgress'));
    const bulk = salesforceBulk(send, '60.0', { pollIntervalMs: 1_000, maxPollIntervalMs: 3_000, timeoutMs: 12_000, sleep: async (ms) => void sleeps.push(ms) });
    await expect(bulk.waitForJob('750J', { after: job('UploadComplete') })).rejects.toMatchObject({ vendorCode: 'BULK_JOB_TIMEOUT', retryable: true });
    expect(sleeps).toEqual([1_000, 1_500, 2_250, 3_000, 3_000]);
    expect(sent).toHaveLength(5);
  });

  it('refuses to wait for a job nobody closed', async () => {
    const { send } = scripted(() => job('Open'));
    await expect(salesforceBulk(send, '60.0', { sleep: async () => {} }).waitForJob('750J')).rejects.toMatchObject({ vendorCode: 'BULK_JOB_OPEN', retryable: false });
  });

  it.each([
    ['all rows succeeded', job('JobComplete', { numberRecordsProcessed: 3, numberRecordsFailed: 0 }), ['GET /750J/successfulResults/']],
    ['all rows failed', job('JobComplete', { numberRecordsProcessed: 3, numberRecordsFailed: 3 }), ['GET /750J/failedResults/']],
    ['some failed', job('JobComplete', { numberRecordsProcessed: 3, numberRecordsFailed: 1 }), ['GET /750J/successfulResults/', 'GET /750J/failedResults/']],
    ['aborted before any row', job('Aborted', { numberRecordsProcessed: 0, numberRecordsFailed: 0 }), ['GET /750J/unprocessedrecords/']],
    ['no counts', job('JobComplete'), ['GET /750J/successfulResults/', 'GET /750J/failedResults/']],
  ])('reads only the result sets with rows: %s', async (_case, info, expected) => {
    const { send, paths } = scripted(() => '');
    await salesforceBulk(send, '60.0').results(info);
    expect(paths()).toEqual(expected);
  });

  it('splits rows into uploads of at most maxUploadBytes and never splits a row', async () => {
    const { send, sent } = scripted((req) => {
      if (req.method === 'POST') return job('Open', { id: `750J${sent.length}` });
      if (req.method === 'PATCH') return job('UploadComplete');
      if (req.method === 'GET' && /\/750J\d*$/.test(req.url)) return job('JobComplete', { numberRecordsProcessed: 0, numberRecordsFailed: 0 });
      return '';
    });
    // Header "Ext__c,Name\n" is 12 bytes, each row "rN,xxxxxxxxxx\n" 14: two rows fit in 40 bytes, three do not.
    const rows = Array.from({ length: 5 }, (_, i) => ({ Ext__c: `r${i}`, Name: 'xxxxxxxxxx' }));
    const bulk = salesforceBulk(send, '60.0', { maxUploadBytes: 40, sleep: async () => {} });
    const { jobs } = await bulk.upsert({ object: 'Contact', externalIdFieldName: 'Ext__c', rows });
    const uploads = sent.filter((r) => r.method === 'PUT').map((r) => r.body);
    expect(uploads).toEqual(['Ext__c,Name\nr0,xxxxxxxxxx\nr1,xxxxxxxxxx\n', 'Ext__c,Name\nr2,xxxxxxxxxx\nr3,xxxxxxxxxx\n', 'Ext__c,Name\nr4,xxxxxxxxxx\n']);
    expect(jobs).toHaveLength(3);
    await expect(salesforceBulk(send, '60.0', { maxUploadBytes: 20 }).upsert({ object: 'Contact', externalIdFieldName: 'Ext__c', rows })).rejects.toThrow('exceeds the 20-byte upload limit');
  });
});
