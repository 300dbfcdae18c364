import { describe, expect, it } from 'vitest';
import { createSync, type Outcome } from '../../../src/engine/index.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { memoryCrm, type MemoryCrmOptions } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

function setup(opts: { crm?: MemoryCrmOptions; ledger?: LedgerBackend; clock?: { t: number }; dedupeWindowMs?: number; leaseMs?: number; verifyCreates?: 'auto' | 'always' | 'after-failure' } = {}) {
  const crm = memoryCrm(opts.crm);
  const clock = opts.clock ?? { t: T0 };
  const ledger = opts.ledger ?? memoryLedger();
  const sync = createSync({
    adapter: crm.adapter,
    ledger,
    dedupeWindowMs: opts.dedupeWindowMs ?? 10 * 60_000,
    leaseMs: opts.leaseMs,
    // These tests play a durable ledger: lookups happen only after a failure or a takeover.
    verifyCreates: opts.verifyCreates ?? 'after-failure',
    now: () => clock.t,
    sleep: async () => undefined,
    retry: { minTimeoutMs: 1, maxTimeoutMs: 2 },
  });
  return { crm, sync, clock, ledger };
}

const contact = (n: number, extra: Record<string, unknown> = {}) => ({
  source: 'zendesk',
  eventId: `evt-${n}`,
  op: 'upsert',
  object: 'contact',
  externalId: `zd-${n}`,
  fields: { email: `p${n}@example.com`, firstname: `P${n}` },
  ...extra,
});

const note = (n: number, body: string, extra: Record<string, unknown> = {}) => ({
  source: 'zendesk',
  eventId: `evt-${n}`,
  op: 'create',
  object: 'note',
  target: { object: 'contact', externalId: `zd-${n}` },
  fields: { body, timestamp: '2026-11-29T10:00:00Z' },
  ...extra,
});

const statuses = (outcomes: Outcome[]) => outcomes.map((o) => o.status);

describe('createSync', () => {
  it('writes an action applied three times in sequence once, then replays it with zero calls', async () => {
    const { crm, sync } = setup();
    const first = await sync.apply(contact(1));
    const callsAfterFirst = crm.adapter.apiCalls();
    const again = [await sync.apply(contact(1)), await sync.apply(contact(1))];
    expect(first).toMatchObject({ status: 'created', attempts: 1 });
    expect(statuses(again)).toEqual(['replayed', 'replayed']);
    expect(again.every((o) => o.recordId === first.recordId && o.key === first.key && o.attempts === 0)).toBe(true);
    expect(crm.adapter.apiCalls()).toBe(callsAfterFirst);
    expect(crm.records('contact')).toHaveLength(1);
  });

  it('writes an action applied three times concurrently once; the others are in flight or replayed', async () => {
    const { crm, sync } = setup({ crm: { latencyMs: 20 } });
    const outcomes = await Promise.all([sync.apply(contact(1)), sync.apply(contact(1)), sync.apply(contact(1))]);
    expect(statuses(outcomes).filter((s) => s === 'created')).toHaveLength(1);
    expect(statuses(outcomes).every((s) => ['created', 'in_flight', 'replayed'].includes(s))).toBe(true);
    expect(crm.calls.upsert).toBe(1);
    expect(crm.records('contact')).toHaveLength(1);
  });

  it('replays an event redelivered with different AI text and keeps the first text', async () => {
    const { crm, sync } = setup();
    await sync.applyMany([contact(1), note(1, 'Summary: customer wants a refund.')]);
    const replay = await sync.applyMany([contact(1, { fields: { email: 'p1@example.com', firstname: 'Pat' } }), note(1, 'The customer asked for their money back.')]);
    expect(statuses(replay)).toEqual(['replayed', 'replayed']);
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['Summary: customer wants a refund.']);
    expect(crm.records('contact')[0]!.fields.firstname).toBe('P1');
  });

  it('does not duplicate a record upsert whose response was lost after commit', async () => {
    const { crm, sync } = setup();
    crm.failNext('lost_response', { op: 'upsert' });
    const outcome = await sync.apply(contact(1));
    expect(outcome).toMatchObject({ status: 'updated', attempts: 2 });
    expect(crm.records('contact')).toHaveLength(1);
  });

  it('finds an activity created before a lost response instead of creating it again', async () => {
    const { crm, sync } = setup();
    await sync.apply(contact(1));
    crm.failNext('lost_response', { op: 'create' });
    const outcome = await sync.apply(note(1, 'first'));
    expect(outcome.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(1);
    expect(crm.calls).toMatchObject({ create: 1, find: 1 });
    expect(outcome.recordId).toBe(crm.activities('note')[0]!.id);
  });

  it('retries a 429 after Retry-After and 5xx/reset failures without duplicating', async () => {
    const { crm, sync } = setup();
    crm.failNext('rate_limited', { op: 'upsert' });
    crm.failNext('server_error', { op: 'upsert' });
    crm.failNext('reset', { op: 'upsert' });
    const outcomes = await sync.applyMany([contact(1), contact(2)]);
    expect(statuses(outcomes)).toEqual(['created', 'created']);
    expect(crm.calls.upsert).toBe(4);
    expect(crm.records('contact')).toHaveLength(2);
  });

  it('takes over a claim whose lease expired and refuses the stale worker its late completion', async () => {
    const clock = { t: T0 };
    const ledger = memoryLedger();
    const { sync, crm } = setup({ clock, ledger, leaseMs: 1_000 });
    const action = contact(1);
    const { key, fingerprint } = sync.prepare(action) as { key: string; fingerprint: string };
    // Worker A claims the key and crashes before completing.
    const [stale] = await ledger.claim([{ key, fingerprint, leaseMs: 1_000 }], clock.t);
    expect(stale!.outcome).toBe('claimed');
    expect(statuses([await sync.apply(action)])).toEqual(['in_flight']);
    clock.t += 1_001;
    const taken = await sync.apply(action);
    expect(taken.status).toBe('created');
    const [late] = await ledger.complete([{ key, token: stale!.token!, result: { status: 'created', recordId: 'stale' } }], clock.t);
    expect(late).toBe(false);
    expect((await ledger.get(key))!.result).toMatchObject({ recordId: taken.recordId });
    expect((await ledger.get(key))!.attempts).toBe(2);
    expect(crm.records('contact')).toHaveLength(1);
  });

  it('looks up an activity a dead worker may have created before creating it on takeover', async () => {
    const clock = { t: T0 };
    const ledger = memoryLedger();
    const { sync, crm } = setup({ clock, ledger, leaseMs: 1_000 });
    await sync.apply(contact(1));
    const action = note(1, 'from the dead worker');
    const prepared = sync.prepare(action) as { key: string; fingerprint: string };
    // Worker A claims, its create commits in the CRM, then it dies before completing.
    await ledger.claim([{ key: prepared.key, fingerprint: prepared.fingerprint, leaseMs: 1_000 }], clock.t);
    await crm.adapter.createActivities('note', [{ key: prepared.key, object: 'note', parent: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'from the dead worker' } }]);
    clock.t += 1_001;
    const outcome = await sync.apply(action);
    expect(outcome).toMatchObject({ status: 'created', recordId: crm.activities('note')[0]!.id, attempts: 0 });
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('renews the leases of a slow write so no other worker takes it over', async () => {
    const crm = memoryCrm({ latencyMs: 1_200 });
    const ledger = memoryLedger();
    const sync = createSync({ adapter: crm.adapter, ledger, leaseMs: 450 });
    const slow = sync.apply(contact(1));
    await new Promise((r) => setTimeout(r, 900));
    const competitor = await sync.apply(contact(1));
    expect(competitor.status).toBe('in_flight');
    expect((await slow).status).toBe('created');
    expect(crm.calls.upsert).toBe(1);
  });

  it('retries a note that failed before reaching the CRM without looking it up first', async () => {
    const { crm, sync } = setup();
    expect((await sync.apply(note(1, 'early'))).status).toBe('failed');
    await sync.apply(contact(1));
    const retried = await sync.apply(note(1, 'early'));
    expect(retried.status).toBe('created');
    expect(crm.calls.find).toBe(0);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('looks a note up when the worker that retried it died mid-create', async () => {
    const clock = { t: T0 };
    const ledger = memoryLedger();
    const { sync, crm } = setup({ clock, ledger, leaseMs: 1_000 });
    const action = note(1, 'retried');
    expect((await sync.apply(action)).status).toBe('failed');
    await sync.apply(contact(1));
    const prepared = sync.prepare(action) as { key: string; fingerprint: string };
    // Worker A takes the failed entry over, its create commits, and it dies before completing.
    await ledger.claim([{ key: prepared.key, fingerprint: prepared.fingerprint, leaseMs: 1_000, retryFailed: true }], clock.t);
    await crm.adapter.createActivities('note', [{ key: prepared.key, object: 'note', parent: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'retried' } }]);
    clock.t += 1_001;
    const outcome = await sync.apply(action);
    expect(outcome.status).toBe('created');
    expect(crm.calls.find).toBe(1);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('looks a note up before retrying it when its failure may have reached the CRM', async () => {
    const { crm, sync } = setup();
    await sync.apply(contact(1));
    crm.failNext('lost_response', { op: 'create' });
    crm.failNext('server_error', { op: 'find', times: 7 });
    expect((await sync.apply(note(1, 'maybe written'))).status).toBe('failed');
    const retried = await sync.apply(note(1, 'maybe written'));
    expect(retried.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('reports unchanged, with no API call, for a new key that writes what was last written', async () => {
    const { crm, sync } = setup();
    const first = await sync.apply(contact(1));
    const calls = crm.adapter.apiCalls();
    const same = await sync.apply(contact(1, { eventId: 'evt-1b' }));
    expect(same).toMatchObject({ status: 'unchanged', recordId: first.recordId, attempts: 0 });
    expect(crm.adapter.apiCalls()).toBe(calls);
    const changed = await sync.apply(contact(1, { eventId: 'evt-1c', fields: { email: 'new@example.com' } }));
    expect(changed.status).toBe('updated');
  });

  it('coalesces two upserts of one record in one call into one write, later fields winning', async () => {
    const { crm, sync } = setup();
    const outcomes = await sync.applyMany([
      contact(1),
      contact(1, { eventId: 'evt-1-later', fields: { lastname: 'Lee', firstname: 'Pat' } }),
    ]);
    expect(statuses(outcomes)).toEqual(['created', 'updated']);
    expect(crm.calls.upsert).toBe(1);
    expect(crm.records('contact')[0]!.fields).toEqual({ email: 'p1@example.com', firstname: 'Pat', lastname: 'Lee' });
  });

  it('batches 250 distinct upserts at the adapter maximum and replays them with zero calls', async () => {
    const { crm, sync } = setup({ crm: { maxBatch: 100 } });
    const actions = Array.from({ length: 250 }, (_, i) => contact(i));
    const first = await sync.applyMany(actions);
    expect(first.every((o) => o.status === 'created')).toBe(true);
    expect(crm.calls.upsert).toBe(3);
    const again = await sync.applyMany(actions);
    expect(again.every((o) => o.status === 'replayed')).toBe(true);
    expect(crm.calls.upsert).toBe(3);
  });

  it('writes record upserts before the activities that attach to them, in one call', async () => {
    const { crm, sync } = setup();
    const outcomes = await sync.applyMany([note(1, 'hello'), contact(1)]);
    expect(statuses(outcomes)).toEqual(['created', 'created']);
    expect(crm.activities('note')[0]!.parentId).toBe(crm.records('contact')[0]!.id);
  });

  it('fails an activity whose parent does not exist, naming the parent, and retries it later', async () => {
    const { crm, sync } = setup();
    const failed = await sync.apply(note(9, 'orphan'));
    expect(failed.status).toBe('failed');
    expect(failed.error!.message).toContain('zd-9');
    await sync.apply(contact(9));
    const retried = await sync.apply(note(9, 'orphan'));
    expect(retried.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('isolates one bad record in a batch of 100 by splitting: 99 written, 1 failed', async () => {
    const { crm, sync } = setup();
    crm.rejectExternalIds.add('zd-37');
    const outcomes = await sync.applyMany(Array.from({ length: 100 }, (_, i) => contact(i)));
    expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(99);
    expect(outcomes[37]).toMatchObject({ status: 'failed' });
    expect(outcomes[37]!.error!.message).toContain('Property values were not valid');
    expect(crm.records('contact')).toHaveLength(99);
  });

  it('stops after a quota error: the batch and later batches fail with no further calls, retryable later', async () => {
    const { crm, sync, ledger } = setup({ crm: { maxBatch: 10 } });
    crm.failNext('quota', { op: 'upsert' });
    const outcomes = await sync.applyMany(Array.from({ length: 30 }, (_, i) => contact(i)));
    expect(outcomes.every((o) => o.status === 'failed')).toBe(true);
    expect(outcomes[0]!.error!.message).toContain('daily limit');
    expect(crm.calls.upsert).toBe(1);
    expect((await ledger.list({ status: 'failed' })).length).toBe(30);
  });

  it('sends again once the quota pause has passed', async () => {
    const clock = { t: T0 };
    const { crm, sync } = setup({ clock });
    crm.failNext('quota', { op: 'upsert' });
    expect((await sync.apply(contact(1))).status).toBe('failed');
    clock.t += 14 * 60_000;
    expect((await sync.apply(contact(1))).status).toBe('failed');
    expect(crm.calls.upsert).toBe(1);
    clock.t += 60_001;
    expect((await sync.apply(contact(1))).status).toBe('created');
    expect(crm.calls.upsert).toBe(2);
  });

  it('records a failed action as failed with its action, and writes it when it comes again', async () => {
    const { crm, sync, ledger } = setup({ crm: {} });
    crm.failNext('server_error', { op: 'upsert', times: 7 });
    const failed = await sync.apply(contact(1));
    expect(failed).toMatchObject({ status: 'failed', attempts: 7 });
    const entry = await ledger.get(failed.key);
    expect(entry).toMatchObject({ status: 'failed', error: { error: { code: 'CRM', status: 503 }, retry: { action: { externalId: 'zd-1' }, possiblyWritten: true } } });
    const retried = await sync.apply(contact(1));
    expect(retried.status).toBe('created');
    expect(crm.records('contact')).toHaveLength(1);
  });
});
