/** Tool results: the structured content, the one line of text, isError; get_outcome's reports; key bindings. */
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import type { Outcome } from '../../src/outcome.js';
import { bindingKey, bindKey } from '../../src/mcp/key-binding.js';
import { lookupOutcome, reportOf } from '../../src/mcp/outcome-lookup.js';
import { callResult, outcomeResult, rejectedResult, type CallSubject } from '../../src/mcp/tool-results.js';
import { callResultSchema, outcomeReportSchema } from '../../src/mcp/tool-schemas.js';
import type { LedgerEntry } from '../../src/ledger/types.js';

const note: CallSubject = { tool: { op: 'create', object: 'note' }, target: { object: 'contact', externalId: 'zd-1' }, idempotencyKey: 'k1' };
const contact: CallSubject = { tool: { op: 'upsert', object: 'contact' }, externalId: 'zd-1', idempotencyKey: 'k1' };
const dedupe = { occurredAt: '2026-12-01T10:03:00.690Z', windowMs: 600_000, bucketStart: '2026-12-01T10:00:00.000Z', bucketEnd: '2026-12-01T10:10:00.000Z' };
const keylessNote: CallSubject = { tool: { op: 'create', object: 'note' }, target: { object: 'contact', externalId: 'zd-1' }, dedupe };
const keylessContact: CallSubject = { tool: { op: 'upsert', object: 'contact' }, externalId: 'zd-1', dedupe: { occurredAt: dedupe.occurredAt, windowMs: 0 } };
const out = (status: Outcome['status'], extra: Partial<Outcome> = {}): Outcome => ({ key: 'v1:e:abc', status, attempts: 1, ...extra });
const crmError = { name: 'CrmError', code: 'CRM' as const, message: '[crm-upsert] [hubspot] 503 Service Unavailable', retryable: true, status: 503 };
const parentHeld = { name: 'CrmError', code: 'CRM' as const, message: '[crm-upsert] [hubspot] parent contact "zd-1" is being written by another worker', retryable: true, vendorCode: 'PARENT_IN_FLIGHT' };

describe('callResult', () => {
  it.each<[string, Outcome, CallSubject, string]>([
    ['created note', out('created', { recordId: '123' }), note, 'created: note 123 on contact "zd-1" (idempotencyKey "k1": calling again with it returns this result)'],
    ['created contact', out('created', { recordId: '77' }), contact, 'created: contact "zd-1" as 77 (idempotencyKey "k1": calling again with it returns this result)'],
    ['keyless note', out('created', { recordId: '123' }), keylessNote, 'created: note 123 on contact "zd-1" (no idempotencyKey: an identical note on this record within 10 min of 2026-12-01T10:03:00Z is suppressed; pass one to make a retry a replay at any time)'],
    ['re-created contact', out('created', { recordId: '78', recreated: { previousId: '77' } }), contact, 'created: contact "zd-1" as 78 again: it was 77 and is gone from the CRM (deleted or merged away) (idempotencyKey "k1": calling again with it returns this result)'],
    ['updated', out('updated', { recordId: '77' }), contact, 'updated: contact "zd-1" (77) (idempotencyKey "k1": calling again with it returns this result)'],
    ['unchanged', out('unchanged', { recordId: '77', attempts: 0 }), contact, 'unchanged: contact "zd-1" (77) already holds these values; nothing was sent'],
    ['updated, some fields left to a newer event', out('updated', { recordId: '77', superseded: ['lifecyclestage'], newerAt: '2026-12-01T10:00:00.000Z' }), contact, 'updated: contact "zd-1" (77); not sent, as a newer event already set them (2026-12-01T10:00:00.000Z): lifecyclestage (idempotencyKey "k1": calling again with it returns this result)'],
    ['superseded', out('superseded', { recordId: '77', attempts: 0, superseded: ['lifecyclestage'], newerAt: '2026-12-01T10:00:00.000Z' }), contact, 'superseded: contact "zd-1" (77) already holds newer values (from 2026-12-01T10:00:00.000Z) for lifecyclestage, so nothing was sent; to change them, send a call with a later occurredAt'],
    ['in flight on a record another call is writing', out('in_flight', { attempts: 0, error: { ...parentHeld, vendorCode: 'RECORD_IN_FLIGHT' } }), contact, 'in_flight: contact "zd-1" is being written by another call right now, and this call sent nothing: call again in a few seconds with the same idempotencyKey; it is then judged against what that call wrote'],
    ['replayed note', out('replayed', { recordId: '123', attempts: 0 }), note, 'replayed: this note was already created as 123 (no new record)'],
    ['replayed contact', out('replayed', { recordId: '77', attempts: 0 }), contact, 'replayed: this contact was already written as 77 (no second write)'],
    ['suppressed note', out('suppressed', { recordId: '123', attempts: 0 }), keylessNote, 'suppressed: an identical note on contact "zd-1" was already created as 123 (no new record): calls without an idempotencyKey are one within the 10 min dedupe window or the same time bucket (2026-12-01T10:00:00Z-2026-12-01T10:10:00Z)'],
    ['suppressed upsert', out('suppressed', { recordId: '77', attempts: 0 }), keylessContact, 'suppressed: this write to contact "zd-1" was already made as 77 (no second write): the same values with the same occurredAt (2026-12-01T10:03:00.690Z) were already written; changed values, or a later occurredAt, are written'],
    ['in flight', out('in_flight', { attempts: 0 }), note, 'in_flight: another call with this key is still being written, and this one wrote nothing: wait a few seconds, then call get_outcome with key "v1:e:abc" (or retry with the same idempotencyKey)'],
    ['in flight on a parent another call is writing', out('in_flight', { error: parentHeld }), note, 'in_flight: contact "zd-1" is being written by another call right now, and this note wrote nothing: call again in a few seconds with the same idempotencyKey; it will not write twice'],
    ['keyless, in flight on a parent another call is writing', out('in_flight', { error: parentHeld }), keylessNote, 'in_flight: contact "zd-1" is being written by another call right now, and this note wrote nothing: call again in a few seconds; it will not write twice'],
    ['failed, retryable', out('failed', { error: crmError }), note, 'failed: 503 Service Unavailable; retry later with the same idempotencyKey: it will not write twice'],
    ['failed, permanent', out('failed', { error: { ...crmError, retryable: false, message: 'parent contact missing' } }), note, 'failed: parent contact missing; fix the cause, then retry with the same idempotencyKey'],
  ])('says what happened: %s', (_what, outcome, subject, text) => {
    const result = callResult(outcome, subject);
    expect(result.content).toEqual([{ type: 'text', text }]);
    expect(callResultSchema.parse(result.structuredContent)).toEqual(result.structuredContent);
    expect(result.isError).toBe(outcome.status === 'failed' ? true : undefined);
  });

  it('carries status, key, record id, the agent key and what protected a keyless call', () => {
    expect(callResult(out('created', { recordId: '1' }), note).structuredContent).toEqual({ status: 'created', key: 'v1:e:abc', idempotencyKey: 'k1', recordId: '1' });
    expect(callResult(out('suppressed', { recordId: '1' }), keylessNote).structuredContent).toEqual({ status: 'suppressed', key: 'v1:e:abc', recordId: '1', dedupe });
    expect(callResult(out('created', { recordId: '78', recreated: { previousId: '77' } }), contact).structuredContent).toEqual({ status: 'created', key: 'v1:e:abc', idempotencyKey: 'k1', recordId: '78', recreated: { previousId: '77' } });
    expect(callResult(out('failed', { error: crmError }), note).structuredContent).toMatchObject({ error: { code: 'CRM', message: '503 Service Unavailable', retryable: true } });
  });

  it('tells the agent which of its values were brought to the CRM\'s form', () => {
    const normalized = [{ field: 'lifecyclestage', from: 'Customer ', to: 'customer' }];
    const result = callResult({ ...out('updated', { recordId: '77' }), normalized }, contact);
    expect(result.structuredContent).toMatchObject({ status: 'updated', normalized });
    expect(callResultSchema.parse(result.structuredContent)).toEqual(result.structuredContent);
    expect((result.content as { text: string }[])[0]!.text).toContain('(values brought to the CRM\'s form: lifecyclestage "Customer " -> "customer")');
  });
});

describe('rejectedResult', () => {
  it('is an error naming every path and reason, with the first path structured', () => {
    const r = rejectedResult([{ path: 'fields.x', message: 'is not on the allowlist' }, { path: 'target', message: 'is required (object)' }]);
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([{ type: 'text', text: 'rejected: fields.x: is not on the allowlist; target: is required (object); nothing was written' }]);
    expect(r.structuredContent).toEqual({
      status: 'rejected', key: '',
      error: { code: 'VALIDATION', message: 'fields.x: is not on the allowlist; target: is required (object)', path: 'fields.x' },
      problems: [{ path: 'fields.x', field: 'x', reason: 'is not on the allowlist' }, { path: 'target', field: 'target', reason: 'is required (object)' }],
    });
    expect(callResultSchema.parse(r.structuredContent)).toEqual(r.structuredContent);
  });

  it('gives a field with an enumeration definition its allowed values, the first 20 not hidden', () => {
    // A hidden option (still accepted by the CRM) is not suggested to the agent.
    const options = [{ value: 'old', label: 'Old', hidden: true }, ...Array.from({ length: 25 }, (_, i) => ({ value: `v${i}`, label: `Value ${i}` }))];
    const definitions = { stage: { type: 'enumeration' as const, options }, locked: { type: 'enumeration' as const, options: ['a'], readOnly: true }, name: { type: 'string' as const } };
    const r = rejectedResult([{ path: 'fields.stage', message: 'bad' }, { path: 'fields.locked', message: 'is read-only' }, { path: 'fields.name', message: 'too long' }, { path: '', message: 'empty' }], 'v1:u:k', definitions);
    expect((r.structuredContent as { problems: unknown[] }).problems).toEqual([
      { path: 'fields.stage', field: 'stage', reason: 'bad', allowed: options.slice(1, 21).map((o) => o.value) },
      { path: 'fields.locked', field: 'locked', reason: 'is read-only' },
      { path: 'fields.name', field: 'name', reason: 'too long' },
      { path: '', field: '(arguments)', reason: 'empty' },
    ]);
  });

  it('turns a rejected outcome without its issues into one problem from the error', () => {
    const error = { name: 'ValidationError', code: 'VALIDATION' as const, message: '[crm-upsert] fields.stage: "x" is not an allowed value', path: 'fields.stage' };
    const r = callResult({ key: 'v1:u:k', status: 'rejected', attempts: 0, error }, { ...contact, definitions: { stage: { type: 'enumeration', options: ['a', 'b'] } } });
    expect((r.structuredContent as { problems: unknown[] }).problems).toEqual([{ path: 'fields.stage', field: 'stage', reason: '"x" is not an allowed value', allowed: ['a', 'b'] }]);
  });
});

const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({
  key: 'v1:e:abc', fingerprint: 'fp', status: 'completed', token: 1, leaseUntil: null, attempts: 1, result: null, error: null, createdAt: 0, updatedAt: Date.parse('2026-12-01T10:00:00Z'), expiresAt: null, ...over,
});

describe('reportOf', () => {
  it.each<[string, LedgerEntry | null, object, string]>([
    ['nothing', null, { key: 'k', status: 'not_found' }, 'not_found: nothing is recorded under "k": that call wrote nothing; call the tool again with the same idempotencyKey'],
    ['a completed write', entry({ result: { status: 'created', recordId: '9' } }), { key: 'k', status: 'created', recordId: '9', attempts: 1, updatedAt: '2026-12-01T10:00:00.000Z' }, 'created: the call under "k" ended created (record 9)'],
    ['a held claim', entry({ status: 'in_progress', leaseUntil: Date.parse('2026-12-01T10:01:00Z') }), { key: 'k', status: 'in_flight', attempts: 1, leaseUntil: '2026-12-01T10:01:00.000Z' }, 'in_flight: still being written (its claim runs until 2026-12-01T10:01:00Z unless renewed); ask again in a few seconds, or retry with the same idempotencyKey: a claim whose server died is taken over, never written twice'],
    ['a failure', entry({ status: 'failed', attempts: 2, error: { error: { name: 'CrmError', code: 'CRM', message: 'timeout', retryable: true } } }), { key: 'k', status: 'failed', attempts: 2, error: { code: 'CRM', message: 'timeout', retryable: true } }, 'failed: timeout; retry with the same idempotencyKey'],
  ])('reports %s', (_what, e, report, text) => {
    const r = reportOf('k', e);
    expect(r).toMatchObject(report);
    expect(outcomeReportSchema.parse(r)).toEqual(r);
    expect(outcomeResult(r).content).toEqual([{ type: 'text', text }]);
  });
});

describe('key bindings', () => {
  const now = async () => Date.now();

  it('scope a key by source', () => {
    expect(bindingKey('mcp:a', 'k')).toBe(bindingKey('mcp:a', 'k'));
    expect(bindingKey('mcp:a', 'k')).not.toBe(bindingKey('mcp:b', 'k'));
    expect(bindingKey('mcp:a', 'k')).toMatch(/^v1:m:[A-Za-z0-9_-]{40}$/);
  });

  it('bind the first identity and refuse another, and lead get_outcome from the key to the action', async () => {
    const ledger = openLedger('memory:');
    const first = { source: 'mcp:a', idempotencyKey: 'k', actionKey: 'v1:e:first', fingerprint: 'fp-1' };
    expect(await bindKey(ledger, first, { retentionMs: null, now })).toEqual({ ok: true });
    expect(await bindKey(ledger, first, { retentionMs: null, now })).toEqual({ ok: true });
    const other = await bindKey(ledger, { ...first, actionKey: 'v1:e:other', fingerprint: 'fp-2' }, { retentionMs: null, now });
    expect(other).toMatchObject({ ok: false, actionKey: 'v1:e:first' });
    expect(await lookupOutcome(ledger, 'mcp:a', 'k')).toEqual({ key: 'v1:e:first', status: 'not_found' });
    await ledger.close();
  });

  it('let exactly one of many concurrent first uses bind', async () => {
    const ledger = openLedger('memory:');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => bindKey(ledger, { source: 's', idempotencyKey: 'k', actionKey: `v1:e:${i}`, fingerprint: `fp-${i}` }, { retentionMs: null, now })));
    const bound = await ledger.get(bindingKey('s', 'k'));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.findIndex((r) => r.ok)).toBe(Number(bound!.fingerprint.slice(3)));
    await ledger.close();
  });
});
