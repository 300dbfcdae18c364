/**
 * One writer per record: two Syncs writing two events of one record at once leave it with the
 * newer event's values whichever claims first and whichever write reaches the CRM last.
 */
import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CrmAdapter, RecordWrite } from '../../../src/adapter.js';
import { createSync, type SyncOptions } from '../../../src/engine/create-sync.js';
import { RECORD_IN_FLIGHT } from '../../../src/engine/record-hold.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { defaultObjects, memoryCrm } from '../../helpers/memory-crm.js';

const objects = { ...defaultObjects, deal: { kind: 'record' as const, fields: ['dealstage', 'amount'] } };
const at = (hhmm: string) => `2026-11-30T${hhmm}:00.000Z`;
const deal = (id: string, time: string, stage: string) => ({ source: 'stripe', eventId: id, occurredAt: at(time), op: 'upsert', object: 'deal', externalId: 'D-1', fields: { dealstage: stage } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A CRM whose writes of `slow` values take `ms` to land: the older event, sent first, would land last. */
function slowFor(slow: string, ms: number) {
  const crm = memoryCrm({ objects });
  const upsert = crm.adapter.upsertRecords.bind(crm.adapter);
  const landed: string[] = [];
  const adapter: CrmAdapter = {
    ...crm.adapter,
    async upsertRecords(object: string, writes: RecordWrite[], context) {
      if (writes.some((w) => w.fields.dealstage === slow)) await sleep(ms);
      const out = await upsert(object, writes, context);
      landed.push(...writes.map((w) => String(w.fields.dealstage)));
      return out;
    },
  };
  return { crm, adapter, landed };
}

const syncOn = (adapter: CrmAdapter, ledger: LedgerBackend, extra: Partial<SyncOptions> = {}) =>
  createSync({ adapter, ledger, sleep: async () => undefined, ...extra });

describe('one writer per record', () => {
  it('the older event claimed first and landing last: the newer one waits for it, then writes', async () => {
    const ledger = memoryLedger();
    const { crm, adapter, landed } = slowFor('closedlost', 150);
    const older = syncOn(adapter, ledger).apply(deal('e-old', '09:55', 'closedlost'));
    await sleep(10);
    const newer = await syncOn(adapter, ledger).apply(deal('e-new', '10:00', 'closedwon'));
    expect((await older).status).toBe('created');
    expect(newer.status).toBe('updated');
    expect(landed).toEqual(['closedlost', 'closedwon']);
    expect(crm.records('deal')[0]!.fields.dealstage).toBe('closedwon');
  });

  it('the newer event claimed first: the older one waits, then finds itself superseded and sends nothing', async () => {
    const ledger = memoryLedger();
    const { crm, adapter, landed } = slowFor('closedwon', 150);
    const newer = syncOn(adapter, ledger).apply(deal('e-new', '10:00', 'closedwon'));
    await sleep(10);
    const older = await syncOn(adapter, ledger).apply(deal('e-old', '09:55', 'closedlost'));
    expect((await newer).status).toBe('created');
    expect(older).toMatchObject({ status: 'superseded', superseded: ['dealstage'], attempts: 0 });
    expect(landed).toEqual(['closedwon']);
    expect(crm.records('deal')[0]!.fields.dealstage).toBe('closedwon');
  });

  it("without a wait (order: 'arrival') the older write lands last and stands: what the wait prevents", async () => {
    const ledger = memoryLedger();
    const { crm, adapter } = slowFor('closedlost', 100);
    const older = syncOn(adapter, ledger, { order: 'arrival' }).apply(deal('e-old', '09:55', 'closedlost'));
    await sleep(10);
    await syncOn(adapter, ledger, { order: 'arrival' }).apply(deal('e-new', '10:00', 'closedwon'));
    await older;
    expect(crm.records('deal')[0]!.fields.dealstage).toBe('closedlost');
  });

  it('a writer that keeps the record past the wait leaves the other in_flight, its claim given back; retried later it is judged then', async () => {
    const ledger = memoryLedger();
    const { crm, adapter } = slowFor('closedwon', 400);
    const newer = syncOn(adapter, ledger).apply(deal('e-new', '10:00', 'closedwon'));
    await sleep(10);
    // A lease of 150 ms bounds the wait (the holder renews its own): the older event gives up.
    const older = await syncOn(adapter, ledger, { leaseMs: 150 }).apply(deal('e-old', '09:55', 'closedlost'));
    expect(older).toMatchObject({ status: 'in_flight', error: { vendorCode: RECORD_IN_FLIGHT, retryable: true } });
    expect((await ledger.get(older.key))!.status).toBe('in_progress');
    await newer;
    expect((await syncOn(adapter, ledger).apply(deal('e-old', '09:55', 'closedlost'))).status).toBe('superseded');
    expect(crm.records('deal')[0]!.fields.dealstage).toBe('closedwon');
  });

  it('a holder whose lease ran out (a dead worker) is not waited for', async () => {
    let now = Date.parse(at('12:00'));
    const ledger = memoryLedger();
    const { crm, adapter } = slowFor('none', 0);
    // A worker claimed the record's write and died: its claim is in progress, its lease ran out.
    const dead = syncOn(adapter, ledger, { now: () => now, leaseMs: 1_000 });
    const prepared = dead.prepare(deal('e-dead', '09:00', 'appointmentscheduled'));
    if (!prepared.ok) throw new Error('prepared');
    await ledger.claim([{ key: prepared.key, fingerprint: prepared.fingerprint, leaseMs: 1_000, holds: `h1:m1:${markIdHash()}` }], now);
    now += 2_000;
    const started = performance.now();
    expect((await syncOn(adapter, ledger, { now: () => now }).apply(deal('e-new', '10:00', 'closedwon'))).status).toBe('created');
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(crm.records('deal')[0]!.fields.dealstage).toBe('closedwon');
  });
});

/** The hash part of deal D-1's mark id on the memory adapter (prepare.ts). */
const markIdHash = () => hash('sha256', JSON.stringify(['memory', 'deal', 'D-1']), 'base64url').slice(0, 32);

describe('a holder that never settled', () => {
  it('leaves the record mark untrusted: a newer event with the values last confirmed is sent, never judged unchanged', async () => {
    let now = Date.parse(at('12:00'));
    const ledger = memoryLedger();
    const { crm, adapter } = slowFor('none', 0);
    expect((await syncOn(adapter, ledger, { now: () => now }).apply(deal('e-a', '09:00', 'appointmentscheduled'))).status).toBe('created');
    // A worker claims the 09:30 event, its write reaches the CRM, and it dies before settling.
    const dead = syncOn(adapter, ledger, { now: () => now, leaseMs: 1_000 });
    const prepared = dead.prepare(deal('e-dead', '09:30', 'closedlost'));
    if (!prepared.ok) throw new Error('prepared');
    await ledger.claim([{ key: prepared.key, fingerprint: prepared.fingerprint, leaseMs: 1_000, holds: `h1:m1:${markIdHash()}` }], now);
    await adapter.upsertRecords('deal', [{ key: prepared.key, object: 'deal', externalId: 'D-1', fields: { dealstage: 'closedlost' } }]);
    now += 2_000;
    // The 10:00 event sets the stage the ledger last confirmed: the record may hold the dead worker's value.
    const newer = await syncOn(adapter, ledger, { now: () => now }).apply(deal('e-new', '10:00', 'appointmentscheduled'));
    expect(newer.status).toBe('updated');
    expect(crm.records('deal')[0]!.fields.dealstage).toBe('appointmentscheduled');
  });
});
