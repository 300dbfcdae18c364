/**
 * Order over time on the engine: an older event never overwrites a field a newer event set
 * through this ledger, keyed or keyless, across calls and inside one; links still go out; a clear
 * is a write with its time; `order: 'arrival'` turns it off; marks without field times write.
 */
import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSync, type SyncOptions } from '../../../src/engine/create-sync.js';
import { encodeMark } from '../../../src/engine/payloads.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { defaultObjects, memoryCrm } from '../../helpers/memory-crm.js';

const objects = { ...defaultObjects, deal: { kind: 'record' as const, fields: ['dealstage', 'amount', 'dealname'], links: ['contact'] } };
const at = (hhmm: string) => `2026-11-30T${hhmm}:00.000Z`;

function setup(options: Partial<SyncOptions> = {}, ledger: LedgerBackend = memoryLedger()) {
  const crm = memoryCrm({ objects });
  const sync = createSync({ adapter: crm.adapter, ledger, now: () => Date.parse(at('12:00')), sleep: async () => undefined, ...options });
  const deal = () => crm.records('deal').find((r) => r.externalId === 'D-1');
  return { crm, sync, ledger, deal };
}

const dealEvent = (id: string | undefined, time: string | undefined, fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  source: 'stripe', ...(id ? { eventId: id } : {}), ...(time ? { occurredAt: at(time) } : {}), op: 'upsert', object: 'deal', externalId: 'D-1', fields, ...extra,
});

describe('order over time', () => {
  for (const keyed of [true, false]) {
    it(`${keyed ? 'keyed' : 'keyless'}: an older event in a later call is superseded, with 0 calls`, async () => {
      const { sync, crm, deal } = setup();
      const won = await sync.apply(dealEvent(keyed ? 'e-won' : undefined, '10:00', { dealstage: 'closedwon' }));
      expect(won.status).toBe('created');
      const calls = crm.adapter.apiCalls!();
      const lost = await sync.apply(dealEvent(keyed ? 'e-lost' : undefined, '09:55', { dealstage: 'closedlost' }));
      expect(lost).toMatchObject({ status: 'superseded', recordId: won.recordId, superseded: ['dealstage'], newerAt: at('10:00'), attempts: 0 });
      expect(crm.adapter.apiCalls!()).toBe(calls);
      expect(deal()!.fields.dealstage).toBe('closedwon');
      // The superseded action is settled: delivered again it is a replay (suppressed without an event id).
      expect((await sync.apply(dealEvent(keyed ? 'e-lost' : undefined, '09:55', { dealstage: 'closedlost' }))).status).toBe(keyed ? 'replayed' : 'suppressed');
    });
  }

  it('an older event that also sets another field writes that field only, and says which it left', async () => {
    const { sync, deal } = setup();
    await sync.apply(dealEvent('e1', '10:00', { dealstage: 'closedwon' }));
    const older = await sync.apply(dealEvent('e2', '09:55', { dealstage: 'closedlost', amount: 500 }));
    expect(older).toMatchObject({ status: 'updated', superseded: ['dealstage'], newerAt: at('10:00') });
    expect(deal()!.fields).toMatchObject({ dealstage: 'closedwon', amount: 500 });
    // The amount now carries 09:55: an event from 09:50 leaves it, one from 09:58 writes it.
    expect((await sync.apply(dealEvent('e3', '09:50', { amount: 1 }))).status).toBe('superseded');
    expect((await sync.apply(dealEvent('e4', '09:58', { amount: 2 }))).status).toBe('updated');
    expect(deal()!.fields).toMatchObject({ dealstage: 'closedwon', amount: 2 });
  });

  it('equal times keep arrival order; a newer event writes; a clear is a write with its time', async () => {
    const { sync, deal } = setup();
    await sync.apply(dealEvent('e1', '10:00', { dealstage: 'closedwon' }));
    expect((await sync.apply(dealEvent('e2', '10:00', { dealstage: 'closedlost' }))).status).toBe('updated');
    expect(deal()!.fields.dealstage).toBe('closedlost');
    expect((await sync.apply(dealEvent('e3', '10:05', { amount: null }))).status).toBe('updated');
    expect((await sync.apply(dealEvent('e4', '10:01', { amount: 9 }))).status).toBe('superseded');
    expect(deal()!.fields.amount).toBeNull();
  });

  it('links are never superseded: an older event with links sends them, not its older fields', async () => {
    const { sync, crm, deal } = setup();
    await sync.apply({ source: 's', eventId: 'c1', occurredAt: at('08:00'), op: 'upsert', object: 'contact', externalId: 'C-1', fields: { email: 'a@example.com' } });
    await sync.apply(dealEvent('e1', '10:00', { dealstage: 'closedwon' }));
    const linked = await sync.apply(dealEvent('e2', '09:00', { dealstage: 'appointmentscheduled' }, { links: [{ object: 'contact', externalId: 'C-1' }] }));
    expect(linked).toMatchObject({ status: 'updated', superseded: ['dealstage'] });
    expect(deal()!.fields.dealstage).toBe('closedwon');
    expect(deal()!.links.size).toBe(1);
    expect(crm.records('deal')).toHaveLength(1);
  });

  it('within one call the action that lost the merge is superseded, not updated', async () => {
    const { sync, deal } = setup();
    const [lost, won] = await sync.applyMany([
      dealEvent('e-lost', '09:55', { dealstage: 'closedlost' }),
      dealEvent('e-won', '10:00', { dealstage: 'closedwon' }),
    ]);
    expect(won).toMatchObject({ status: 'created' });
    expect(lost).toMatchObject({ status: 'superseded', superseded: ['dealstage'], newerAt: at('10:00'), recordId: won!.recordId });
    expect(deal()!.fields.dealstage).toBe('closedwon');
    // In the other arrival order the same: the newer event stands, the older one is superseded.
    const second = setup();
    const [won2, lost2] = await second.sync.applyMany([
      dealEvent('e-won', '10:00', { dealstage: 'closedwon' }),
      dealEvent('e-lost', '09:55', { dealstage: 'closedlost', amount: 3 }),
    ]);
    expect(won2!.status).toBe('created');
    expect(lost2).toMatchObject({ status: 'updated', superseded: ['dealstage'] });
    expect(second.deal()!.fields).toMatchObject({ dealstage: 'closedwon', amount: 3 });
  });

  it('an action without occurredAt is ordered by its arrival and says so', async () => {
    let now = Date.parse(at('10:10'));
    const { sync, deal } = setup({ requireOccurredAt: false, now: () => now });
    expect(await sync.apply(dealEvent('e1', undefined, { dealstage: 'closedwon' }))).toMatchObject({ status: 'created', orderedBy: 'arrival' });
    expect((await sync.apply(dealEvent('e2', '10:05', { dealstage: 'closedlost' }))).status).toBe('superseded');
    now = Date.parse(at('10:20'));
    expect((await sync.apply(dealEvent('e3', '10:15', { dealstage: 'closedlost' }))).status).toBe('updated');
    expect(deal()!.fields.dealstage).toBe('closedlost');
  });

  it("order: 'arrival' writes what arrives last, as before", async () => {
    const { sync, deal } = setup({ order: 'arrival' });
    await sync.apply(dealEvent('e1', '10:00', { dealstage: 'closedwon' }));
    const lost = await sync.apply(dealEvent('e2', '09:55', { dealstage: 'closedlost' }));
    expect(lost.status).toBe('updated');
    expect(lost.superseded).toBeUndefined();
    expect(deal()!.fields.dealstage).toBe('closedlost');
  });

  it("a Sync in 'arrival' order on the same ledger keeps the times an 'event' Sync judges by", async () => {
    const ledger = memoryLedger();
    const events = setup({}, ledger);
    const arrival = createSync({ adapter: events.crm.adapter, ledger, sleep: async () => undefined, order: 'arrival' });
    await events.sync.apply(dealEvent('e1', '10:00', { dealstage: 'closedwon' }));
    await arrival.apply(dealEvent('e2', '10:05', { amount: 5 }));
    expect((await events.sync.apply(dealEvent('e3', '09:55', { dealstage: 'closedlost' }))).status).toBe('superseded');
    expect(events.deal()!.fields).toMatchObject({ dealstage: 'closedwon', amount: 5 });
  });

  it('a mark written before field times were kept is unknown: the write goes out, and times start from it', async () => {
    const ledger = memoryLedger();
    const { sync, deal } = setup({}, ledger);
    const first = await sync.apply(dealEvent('e1', '10:00', { dealstage: 'closedwon' }));
    // Rewrite the record's mark as an older version left it: a hash and an id, no times.
    const claim = await ledger.claim([{ key: 'probe', fingerprint: 'x', leaseMs: 1, markId: markIdOf(sync) }], Date.now());
    expect(claim[0]!.mark).toContain('"t"');
    await ledger.complete([{ key: 'probe', token: claim[0]!.token!, result: null, mark: { id: markIdOf(sync), value: encodeMark({ h: 'old', id: first.recordId! }) } }], Date.now());
    expect((await sync.apply(dealEvent('e2', '09:55', { dealstage: 'closedlost' }))).status).toBe('updated');
    expect(deal()!.fields.dealstage).toBe('closedlost');
    expect((await sync.apply(dealEvent('e3', '09:50', { dealstage: 'closedwon' }))).status).toBe('superseded');
  });

  it('retry of an older failed action after a newer write is superseded', async () => {
    const { sync, crm, ledger, deal } = setup({ retry: { retries: 0, minTimeoutMs: 1, maxTimeoutMs: 1 } });
    crm.failNext('server_error', { op: 'upsert' });
    expect((await sync.apply(dealEvent('e-old', '09:55', { dealstage: 'closedlost' }))).status).toBe('failed');
    await sync.apply(dealEvent('e-new', '10:00', { dealstage: 'closedwon' }));
    const [retried] = await sync.retryStored(await ledger.list({ status: 'failed' }));
    expect(retried).toMatchObject({ status: 'superseded', superseded: ['dealstage'] });
    expect(deal()!.fields.dealstage).toBe('closedwon');
  });
});

/** The deal D-1's mark id, as the engine names it (prepare.ts): a hash of the adapter, the object and the external id. */
const markIdOf = (sync: ReturnType<typeof createSync>) => `m1:${hash('sha256', JSON.stringify([sync.adapter.name, 'deal', 'D-1']), 'base64url').slice(0, 32)}`;
