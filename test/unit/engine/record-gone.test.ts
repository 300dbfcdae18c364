/**
 * An adapter answers an upsert of a record this ledger wrote, gone from the CRM since, with a
 * RECORD_GONE failure (`onMissing: 'skip'`): the engine settles it failed and not retryable, and
 * keeps the record's mark, so the next write to it still carries the id it had (`knownId`) and is
 * still refused, also when an ambiguous failure came before it in the same batch.
 */
import { describe, expect, it } from 'vitest';
import type { RecordWrite, WriteResult } from '../../../src/adapter.js';
import { createSync } from '../../../src/engine/create-sync.js';
import { recordGoneError } from '../../../src/errors.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');
const contact = (n: number, email: string) => ({ source: 's', eventId: `e${n}`, occurredAt: new Date(T0 + n * 1000).toISOString(), op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email } });

/** A memory CRM whose adapter answers RECORD_GONE for every write carrying a `knownId` while `gone` is set. */
function goneAware() {
  const crm = memoryCrm();
  const seen: RecordWrite[] = [];
  const state = { gone: false };
  const upsert = crm.adapter.upsertRecords.bind(crm.adapter);
  crm.adapter.upsertRecords = async (object, writes, context) => {
    seen.push(...writes.map((w) => ({ ...w })));
    const sent = writes.filter((w) => !(state.gone && w.knownId));
    const results = await upsert(object, sent, context);
    return writes.map((w): WriteResult => (state.gone && w.knownId ? { ok: false, error: recordGoneError('memory', `${object} ${JSON.stringify(w.externalId)}`, w.knownId) } : results[sent.indexOf(w)]!));
  };
  return { crm, seen, state };
}

describe('a RECORD_GONE answer', () => {
  it('fails the action for good, naming the previous id, and the next write to the record still carries it', async () => {
    const { crm, seen, state } = goneAware();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger(), now: () => T0, sleep: async () => undefined });
    const first = await sync.apply(contact(1, 'a@example.com'));
    state.gone = true;
    const gone = await sync.apply(contact(2, 'b@example.com'));
    expect(gone).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'RECORD_GONE', vendorCode: 'RECORD_GONE', retryable: false } });
    expect(gone.error!.message).toContain(first.recordId!);
    expect(gone.recordId).toBeUndefined();
    const again = await sync.apply(contact(3, 'c@example.com'));
    expect(again.status).toBe('failed');
    expect(seen.map((w) => w.knownId)).toEqual([undefined, first.recordId, first.recordId]);
    expect(crm.records('contact').map((r) => r.fields.email)).toEqual(['a@example.com']);
  });

  it('keeps the mark after an ambiguous failure earlier in the batch: the CRM said no record holds the external id', async () => {
    const { crm, seen, state } = goneAware();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger(), now: () => T0, sleep: async () => undefined, retry: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 1 } });
    const first = await sync.apply(contact(1, 'a@example.com'));
    state.gone = true;
    crm.failNext('reset', { op: 'upsert' });
    expect(await sync.apply(contact(2, 'b@example.com'))).toMatchObject({ status: 'failed', error: { code: 'RECORD_GONE' } });
    await sync.apply(contact(3, 'c@example.com'));
    expect(seen.at(-1)!.knownId).toBe(first.recordId);
  });
});
