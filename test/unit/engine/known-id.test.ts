/**
 * The adapter contract hands an upsert the record's CRM id as this ledger last confirmed it
 * (`RecordWrite.knownId`), from any Sync on that ledger: a CRM without an upsert on the external
 * id addresses the record by it. Never after a write that may not have reached the CRM.
 */
import { describe, expect, it } from 'vitest';
import type { RecordWrite } from '../../../src/adapter.js';
import { createSync } from '../../../src/engine/create-sync.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

function recording() {
  const crm = memoryCrm();
  const seen: RecordWrite[] = [];
  const upsert = crm.adapter.upsertRecords.bind(crm.adapter);
  crm.adapter.upsertRecords = async (object, writes, context) => {
    seen.push(...writes.map((w) => ({ ...w })));
    return upsert(object, writes, context);
  };
  return { crm, seen };
}

const contact = (n: number, email: string) => ({ source: 's', eventId: `e${n}`, occurredAt: new Date(T0 + n * 1000).toISOString(), op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email } });

describe('RecordWrite.knownId', () => {
  it('is absent for a record this ledger never wrote, and the confirmed id for every Sync on the ledger after', async () => {
    const ledger = memoryLedger();
    const { crm, seen } = recording();
    const options = { adapter: crm.adapter, ledger, now: () => T0, sleep: async () => undefined };
    const first = await createSync(options).apply(contact(1, 'a@example.com'));
    expect(first.status).toBe('created');
    expect(seen[0]!.knownId).toBeUndefined();
    // Another Sync on the same ledger (another process): the id comes from the ledger, not a memo.
    await createSync(options).apply(contact(2, 'b@example.com'));
    expect(seen[1]!.knownId).toBe(first.recordId);
  });

  it('is absent after a write that may not have reached the CRM', async () => {
    const ledger = memoryLedger();
    const { crm, seen } = recording();
    const sync = createSync({ adapter: crm.adapter, ledger, now: () => T0, sleep: async () => undefined, retry: { retries: 0, minTimeoutMs: 1, maxTimeoutMs: 1 } });
    const first = await sync.apply(contact(1, 'a@example.com'));
    crm.failNext('reset', { op: 'upsert' });
    expect((await sync.apply(contact(2, 'b@example.com'))).status).toBe('failed');
    await sync.apply(contact(3, 'c@example.com'));
    expect(seen.map((w) => w.knownId)).toEqual([undefined, first.recordId, undefined]);
  });
});
