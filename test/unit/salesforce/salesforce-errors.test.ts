import { describe, expect, it } from 'vitest';
import { bulkQuotaFailure, classifySalesforceError, dailyLimitStop, jsonErrorBody, recordError, type SalesforceRecordError } from '../../../adapters/salesforce/salesforce-errors.js';
import { CrmError, registerSecret } from '../../../src/errors.js';

/** The shape jsforce 3.10.16 throws: HttpApiError { name = errorCode, errorCode, message, data }. */
function httpApiError(errorCode: string, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { name: errorCode, errorCode, data: data ?? { errorCode, message } });
}
function fetchError(code: string): Error {
  return Object.assign(new Error(`request to https://x.my.salesforce.com/services/data/v60.0/query failed, reason: ${code}`), { name: 'FetchError', type: 'system', code, errno: code });
}

describe('classifySalesforceError', () => {
  it('cuts an HTML error page to a short excerpt and keeps a 5xx transient with its status', () => {
    const page = `<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title><style>body{}</style></head><body>${'<p>maintenance</p>\n'.repeat(300)}</body></html>`;
    const e = classifySalesforceError(httpApiError('ERROR_HTTP_503', page));
    expect(e).toMatchObject({ kind: 'transient', ambiguous: true, status: 503, retryable: true });
    expect(e.message).toContain('503 Service Unavailable');
    expect(e.message.length).toBeLessThan(400);
    expect(JSON.stringify(e).length).toBeLessThan(600);
  });

  it.each([
    ['daily allocation (403)', httpApiError('REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'), { response: { status: 403 } }, { kind: 'quota', retryable: false }],
    ['Bulk API allowance spent at job creation', httpApiError('EXCEEDEDQUOTA', 'ExceededQuota : The job you tried to create exceeds the allowed number of 15000 batches for the past 24-hour period'), { response: { status: 400 }, multiRecordWrite: true }, { kind: 'quota', retryable: false, vendorCode: 'EXCEEDEDQUOTA', retryAfterMs: undefined }],
    ['Bulk API allowance spent (underscored code)', httpApiError('EXCEEDED_QUOTA', 'Bulk API daily batches exceeded'), { response: { status: 403 } }, { kind: 'quota', retryable: false }],
    ['concurrency limit (429 + Retry-After)', httpApiError('REQUEST_LIMIT_EXCEEDED', 'ConcurrentPerOrgLongTxn Limit exceeded.'), { response: { status: 429, headers: { 'retry-after': '2' } } }, { kind: 'rate_limited', retryAfterMs: 2000, ambiguous: true }],
    ['429 without a JSON body', httpApiError('ERROR_HTTP_429', 'Too Many Requests'), {}, { kind: 'rate_limited', retryAfterMs: 1000 }],
    ['503', httpApiError('SERVER_UNAVAILABLE', 'Server temporarily unavailable'), { response: { status: 503 } }, { kind: 'transient', ambiguous: true }],
    ['502 html page', httpApiError('ERROR_HTTP_502', '<html>bad gateway</html>'), {}, { kind: 'transient', ambiguous: true, status: 502 }],
    ['500 UNKNOWN_EXCEPTION', httpApiError('UNKNOWN_EXCEPTION', 'An unexpected error occurred'), {}, { kind: 'transient', ambiguous: true }],
    ['connection reset', fetchError('ECONNRESET'), {}, { kind: 'transient', ambiguous: true, vendorCode: 'ECONNRESET' }],
    ['timeout', fetchError('ETIMEDOUT'), {}, { kind: 'transient', ambiguous: true }],
    ['row lock', httpApiError('UNABLE_TO_LOCK_ROW', 'unable to obtain exclusive access to this record'), { response: { status: 400 } }, { kind: 'transient' }],
    ['expired token (401)', httpApiError('INVALID_SESSION_ID', 'Session expired or invalid'), { response: { status: 401 } }, { kind: 'auth' }],
    ['missing permission', httpApiError('INSUFFICIENT_ACCESS', 'insufficient access rights on object id'), { response: { status: 403 } }, { kind: 'auth' }],
    ['300 multiple matches', httpApiError('MULTIPLE_CHOICES', 'Multiple records found', ['/services/data/v60.0/sobjects/Contact/003A']), { externalIds: ['x-1'] }, { kind: 'permanent', status: 300 }],
    ['404 not an external id', httpApiError('NOT_FOUND', 'The requested resource does not exist'), { response: { status: 404 } }, { kind: 'permanent', splittable: false }],
    ['400 bad field in a batch', httpApiError('INVALID_FIELD', "No such column 'Foo' on sobject of type Contact"), { response: { status: 400 }, multiRecordWrite: true }, { kind: 'permanent', splittable: true }],
    ['400 bad field, one record', httpApiError('INVALID_FIELD', "No such column 'Foo' on sobject of type Contact"), { response: { status: 400 }, multiRecordWrite: false }, { kind: 'permanent', splittable: false }],
    ['400 wrong sObject in a batch', httpApiError('INVALID_TYPE', "sObject type 'Contactt' is not supported."), { response: { status: 400 }, multiRecordWrite: true }, { kind: 'permanent', splittable: false }],
    ['400 malformed query', httpApiError('MALFORMED_QUERY', 'unexpected token'), { response: { status: 400 } }, { kind: 'permanent', splittable: false }],
    ['several errors', httpApiError('MULTIPLE_API_ERRORS', 'Multiple errors returned.', [{ errorCode: 'JSON_PARSER_ERROR', message: 'bad json' }, { errorCode: 'X', message: 'y' }]), { response: { status: 400 }, multiRecordWrite: true }, { kind: 'permanent', vendorCode: 'JSON_PARSER_ERROR', splittable: true }],
    ['a plain Error', new Error('External ID is not found in record.'), {}, { kind: 'permanent' }],
  ])('classifies %s', (_name, err, ctx, expected) => {
    const crm = classifySalesforceError(err, ctx);
    expect(crm).toBeInstanceOf(CrmError);
    expect(crm).toMatchObject({ vendor: 'salesforce', ...expected });
    expect(crm.message).toMatch(/^\[crm-upsert\] \[salesforce\] /);
  });

  it('puts the usage figure in the quota message', () => {
    const crm = classifySalesforceError(httpApiError('REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'), { response: { status: 403 }, usage: { used: 15_000, limit: 15_000 } });
    expect(crm.message).toContain('daily API request allocation is spent (usage 15,000/15,000)');
  });

  it('reads a Bulk job Failed for a spent daily allowance as a quota error, and no other end', () => {
    const failed = bulkQuotaFailure({ id: '750A', state: 'Failed', errorMessage: 'ExceededQuota : The daily allowance of Bulk API records (150000000) for the past 24-hour period was reached while processing the job; 10 records were not processed' });
    expect(failed).toMatchObject({ kind: 'quota', retryable: false, vendorCode: 'EXCEEDEDQUOTA' });
    expect(failed!.message).toContain('Bulk API job 750A Failed: ExceededQuota');
    expect(bulkQuotaFailure({ id: '750A', state: 'Failed', errorMessage: 'InvalidBatch : Field name not found : Foo__c' })).toBeUndefined();
    expect(bulkQuotaFailure({ id: '750A', state: 'JobComplete' })).toBeUndefined();
  });

  it('hints at the token and the instance URL on a 401', () => {
    const crm = classifySalesforceError(httpApiError('INVALID_SESSION_ID', 'Session expired or invalid'), { response: { status: 401 } });
    expect(crm.message).toMatch(/expired/);
    expect(crm.message).toMatch(/SF_INSTANCE_URL/);
  });

  it('hints at the External ID attribute on a 404', () => {
    expect(classifySalesforceError(httpApiError('NOT_FOUND', 'The requested resource does not exist')).message).toMatch(/External ID/);
  });

  it('names the external id on a 300', () => {
    expect(classifySalesforceError(httpApiError('MULTIPLE_CHOICES', 'Multiple records found'), { externalIds: ['ext-7'] }).message).toContain('"ext-7"');
  });

  it('passes a CrmError through unchanged', () => {
    const crm = dailyLimitStop({ used: 1, limit: 2 }, 0.5);
    expect(classifySalesforceError(crm)).toBe(crm);
  });

  it('never carries a registered token in the message', () => {
    registerSecret('00D5g000004ABCD!AQ4AQFakeTokenValue');
    const crm = classifySalesforceError(httpApiError('INVALID_SESSION_ID', 'Bad token 00D5g000004ABCD!AQ4AQFakeTokenValue'), { response: { status: 401 } });
    expect(crm.message).not.toContain('FakeTokenValue');
    expect(JSON.stringify(crm.toJSON())).not.toContain('FakeTokenValue');
  });
});

describe('dailyLimitStop', () => {
  it('states the usage, its share and the configured stop', () => {
    const crm = dailyLimitStop({ used: 13_500, limit: 15_000 }, 0.9);
    expect(crm.kind).toBe('quota');
    expect(crm.message).toContain('Salesforce API usage 13,500/15,000 (90%) reached the configured stop at 90%');
  });
});

describe('recordError', () => {
  it.each([
    [{ statusCode: 'DUPLICATE_VALUE', message: 'duplicate value found: AI_External_Id__c duplicates value on record with id: 003A', fields: ['AI_External_Id__c'] }, 'permanent'],
    [{ errorCode: 'REQUIRED_FIELD_MISSING', message: 'Required fields are missing: [LastName]', fields: ['LastName'] }, 'permanent'],
    [{ statusCode: 'DUPLICATES_DETECTED', message: 'Use one of these records?' }, 'permanent'],
    [{ statusCode: 'INVALID_FIELD', message: 'bad field' }, 'permanent'],
    [{ statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message: 'Phone must be E.164' }, 'permanent'],
    [{ statusCode: 'UNABLE_TO_LOCK_ROW', message: 'unable to obtain exclusive access to this record' }, 'transient'],
    [{ errorCode: 'UNABLE_TO_LOCK_ROW', message: 'unable to obtain exclusive access to this record' }, 'transient'],
  ] as Array<[SalesforceRecordError & { message: string }, string]>)('reads %j (statusCode or errorCode) as %s', (error, kind) => {
    const crm = recordError([error]);
    expect(crm.kind).toBe(kind);
    expect(crm.vendorCode).toBe(error.statusCode ?? error.errorCode);
    expect(crm.message).toContain(error.message);
  });

  it('treats a failure without errors as permanent', () => {
    expect(recordError([]).kind).toBe('permanent');
  });
});

describe('jsonErrorBody', () => {
  const textError = (status: number, body: string) => Object.assign(new Error(body), { name: `ERROR_HTTP_${status}`, errorCode: `ERROR_HTTP_${status}` });

  it('reads a JSON error array given as text back into its code and message', () => {
    const read = jsonErrorBody(textError(400, '[{"errorCode":"API_ERROR","message":"Job is InProgress"}]'));
    expect(classifySalesforceError(read, { response: { status: 400 } })).toMatchObject({ vendorCode: 'API_ERROR', status: 400, retryable: false });
    expect(String((read as Error).message)).toBe('Job is InProgress');
  });

  it.each([
    ['an HTML page', textError(503, '<html><h1>503</h1></html>')],
    ['JSON that is no error', textError(400, '{"ok":true}')],
    ['an error that is not ERROR_HTTP', Object.assign(new Error('x'), { errorCode: 'INVALID_FIELD' })],
  ])('leaves %s as it is', (_name, err) => {
    expect(jsonErrorBody(err)).toBe(err);
  });
});
