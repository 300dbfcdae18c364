import { describe, expect, it } from 'vitest';
import {
  decodeActionFailure, decodeActionResult, decodeError, decodeEventResult, decodeStepResult,
  encodeActionFailure, encodeActionResult, encodeError, encodeEventResult, encodeStepResult, storedAction,
} from '../../../src/engine/payloads.js';

const action = { source: 'zendesk', eventId: 'e1', op: 'upsert' as const, object: 'contact', externalId: 'zd-1', fields: { email: 'a@example.com', score: 3, vip: true, note: null } };
const error = { name: 'CrmError', code: 'CRM' as const, message: '[crm-upsert] [hubspot] 503', retryable: true, status: 503 };

describe('ledger payloads', () => {
  it.each([
    ['an action result', () => decodeActionResult(encodeActionResult({ status: 'created', recordId: '101' })), { status: 'created', recordId: '101' }],
    ['an action result without a record', () => decodeActionResult(encodeActionResult({ status: 'suppressed' })), { status: 'suppressed' }],
    ['an action failure', () => decodeActionFailure(encodeActionFailure({ error, retry: { action, at: 1_700_000_000_000, attempts: 2, possiblyWritten: false } })), { error, retry: { action, at: 1_700_000_000_000, attempts: 2, possiblyWritten: false } }],
    ['a failure with nothing to retry', () => decodeActionFailure(encodeActionFailure({ error })), { error }],
    ['an error', () => decodeError(encodeError({ ...error, path: 'fields.email' })), { ...error, path: 'fields.email' }],
    ['a step value', () => decodeStepResult(encodeStepResult({ summary: 'x', n: [1, 2] })), { summary: 'x', n: [1, 2] }],
    ['an event result', () => decodeEventResult(encodeEventResult({ outcomes: [{ key: 'k', status: 'created', recordId: '9' }] })), { outcomes: [{ key: 'k', status: 'created', recordId: '9' }] }],
  ])('round-trips %s', (_name, roundTrip, expected) => {
    expect(roundTrip()).toEqual(expected);
  });

  it('reads the earlier flat failure form, treating an unknown attempt as possibly written', () => {
    const flat = { ...error, action, token: 3, possiblyWritten: false };
    expect(decodeActionFailure(flat)).toEqual({ error, retry: { action, at: NaN, attempts: 0, possiblyWritten: false } });
    expect(storedAction({ ...error, action })).toEqual(action);
  });

  it('never trusts a field it does not recognise', () => {
    expect(decodeActionResult('created')).toBeUndefined();
    expect(decodeActionFailure(null)).toBeUndefined();
    expect(decodeError({ code: 7, message: ['x'] })).toEqual({ name: 'Error', code: 'UNKNOWN', message: '' });
    expect(decodeEventResult({ outcomes: 'nope' })).toEqual({ outcomes: [] });
    expect(storedAction({ error, retry: { action: 'not an object' } })).toBeUndefined();
  });
});
