import { describe, expect, it } from 'vitest';
import { CrmError, ValidationError, redact, registerSecret, serializeError } from '../../src/errors.js';

describe('errors', () => {
  it('prefixes messages with the library and vendor and keeps a sanitized copy of the cause', () => {
    const cause = Object.assign(new TypeError('boom'), { code: 'ECONNRESET', headers: { authorization: 'Bearer x' } });
    const err = new CrmError('bad request', { vendor: 'hubspot', kind: 'permanent', status: 400, cause });
    expect(err.message).toBe('[crm-upsert] [hubspot] bad request');
    expect(err.cause).toBeInstanceOf(Error);
    expect(err.cause).toMatchObject({ name: 'TypeError', message: 'boom', code: 'ECONNRESET' });
    expect(err.cause).not.toHaveProperty('headers');
    expect((err.cause as Error).stack).toMatch(/^TypeError: boom\n\s+at /);
    expect(err.toJSON()).toEqual({ name: 'CrmError', code: 'CRM', message: err.message, retryable: false, status: 400 });
    expect(err.toJSON()).not.toHaveProperty('vendorCode');
  });

  it('keeps the vendor code in the serialized error, where a queue job reads why an activity failed', () => {
    const err = new CrmError('parent contact with ext=1 does not exist in HubSpot', { vendor: 'hubspot', kind: 'permanent', vendorCode: 'PARENT_NOT_FOUND' });
    expect(err.toJSON()).toEqual({ name: 'CrmError', code: 'CRM', message: err.message, retryable: false, status: undefined, vendorCode: 'PARENT_NOT_FOUND' });
  });

  it('names each invalid field in a validation error', () => {
    const err = new ValidationError([{ path: 'fields.email', message: 'expected string' }, { path: 'object', message: 'unknown object' }]);
    expect(err.message).toBe('[crm-upsert] fields.email: expected string; object: unknown object');
    expect(err.toJSON().path).toBe('fields.email');
  });

  it.each([
    ['Authorization: Bearer pat-na1-1234-abcd', 'pat-na1-1234-abcd'],
    ['{"authorization":"Bearer pat-na1-99"}', 'pat-na1-99'],
    ['access_token=00Dxx!AQ4AQ.secret&x=1', '00Dxx!AQ4AQ.secret'],
    ['postgres://app:hunter2@db:5432/ledger', 'hunter2'],
    ['bearer abc.def.ghi failed', 'abc.def.ghi'],
  ])('redacts secrets from %s', (text, secret) => {
    expect(redact(text)).not.toContain(secret);
  });

  it.each([
    ['redis://:secret@host:6379/0', 'redis://:[redacted]@host:6379/0'],
    ['rediss://default:s3cret-pw@cache.example.com:6380', 'rediss://default:[redacted]@cache.example.com:6380'],
    ['cannot reach postgres://app:hunter2@db:5432/ledger now', 'cannot reach postgres://app:[redacted]@db:5432/ledger now'],
    ['redis://host:6379 and redis://:pw-1@other:6379', 'redis://host:6379 and redis://:[redacted]@other:6379'],
  ])('keeps the @ and the host of %s, dropping only the password', (text, redacted) => {
    expect(redact(text)).toBe(redacted);
  });

  it('redacts a registered secret wherever it appears, also in serialized foreign errors', () => {
    registerSecret('tok-very-secret-123');
    const err = new CrmError('request with tok-very-secret-123 failed', { vendor: 'x', kind: 'auth' });
    expect(err.message).not.toContain('tok-very-secret-123');
    expect(serializeError(new Error('echo tok-very-secret-123')).message).toBe('echo [redacted]');
  });
});
