import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { classifyPipedriveError, PipedriveHttpError, refusedField, retryAfterMs } from '../../../adapters/pipedrive/pipedrive-errors.js';
import { CrmErrorKind, registerSecret } from '../../../src/errors.js';

const http = (status: number | undefined, body: unknown, headers: Record<string, string> = {}, write = false) =>
  new PipedriveHttpError(status === undefined ? 'ECONNRESET' : `HTTP ${status}`, write ? 'POST /api/v2/persons' : 'GET /api/v2/itemSearch/field', status, headers, body, write);

describe('classifyPipedriveError', () => {
  it.each([
    ['a burst-window 429 waits its Retry-After', http(429, { success: false, error: 'Request over limit', errorCode: 429 }, { 'retry-after': '2' }), { kind: CrmErrorKind.rateLimited, retryAfterMs: 2_000 }],
    ['a 429 without Retry-After waits x-ratelimit-reset', http(429, { success: false, error: 'Request over limit' }, { 'x-ratelimit-reset': '1' }), { kind: CrmErrorKind.rateLimited, retryAfterMs: 1_000 }],
    ['the daily-budget 429 stops the run', http(429, { success: false, error: 'daily request budget exceeded', errorCode: 429 }, { 'retry-after': '3600' }), { kind: CrmErrorKind.quota, vendorCode: 'DAILY_BUDGET' }],
    ['a 429 with no daily requests left stops the run', http(429, { success: false, error: 'Too many requests' }, { 'x-daily-requests-left': '0' }), { kind: CrmErrorKind.quota }],
    ['a 500 on a read is transient, not ambiguous', http(500, { success: false, error: 'Internal Server Error', code: 'ERR_UNKNOWN' }), { kind: CrmErrorKind.transient, ambiguous: false, vendorCode: 'ERR_UNKNOWN' }],
    ['a 503 on a write is transient and ambiguous', http(503, 'Service Unavailable', {}, true), { kind: CrmErrorKind.transient, ambiguous: true }],
    ['no answer to a write is ambiguous', http(undefined, undefined, {}, true), { kind: CrmErrorKind.transient, ambiguous: true }],
    ['an HTML 403 from the edge is waited out, not an auth failure', http(403, '<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head></html>'), { kind: CrmErrorKind.rateLimited }],
    ['a JSON 403 is a permission', http(403, { success: false, error: 'You do not have permission' }), { kind: CrmErrorKind.auth }],
    ['a 401 is a refused token', http(401, { success: false, error: 'unauthorized access', errorCode: 401 }), { kind: CrmErrorKind.auth }],
    ['a 404 is permanent and says not found', http(404, { success: false, error: 'Person not found', code: 'ERR_NOT_FOUND' }), { kind: CrmErrorKind.permanent, vendorCode: 'NOT_FOUND' }],
    ['a 410 is permanent and says gone', http(410, { success: false, error: 'Gone' }), { kind: CrmErrorKind.permanent, vendorCode: 'GONE' }],
  ])('%s', (_name, err, expected) => {
    expect(classifyPipedriveError(err)).toMatchObject(expected);
  });

  it('names the refused field as the config names it', () => {
    const key = 'a'.repeat(40);
    const err = http(400, { success: false, error: `Validation failed: custom_fields.${key} must be a number`, code: 'ERR_SCHEMA_VALIDATION_FAILED' }, {}, true);
    expect(classifyPipedriveError(err, { fieldNames: new Map([[key, 'Score']]) })).toMatchObject({ kind: CrmErrorKind.permanent, field: 'Score' });
    expect(refusedField('Validation failed: "value" must be a number', new Map([['value', 'value']]))).toBe('value');
  });

  it('keeps no token anywhere down the cause chain', () => {
    const token = 'pd-secret-token-9f8e7d6c5b';
    registerSecret(token);
    const cause = new Error(`fetch failed for https://x.pipedrive.com/api/v2/persons?api_token=${token}`);
    const err = classifyPipedriveError(new PipedriveHttpError('reset', 'POST /api/v2/persons', undefined, {}, undefined, true, { cause }));
    expect(inspect(err, { depth: 10 })).not.toContain(token);
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterMs({ 'retry-after': '3' })).toBe(3_000);
    expect(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 5_000)).toBe(5_000);
    expect(retryAfterMs({})).toBeUndefined();
  });
});
