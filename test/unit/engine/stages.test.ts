/**
 * Each stage of the engine on its own, against the memory ledger and the in-memory CRM: what it
 * takes, what it returns, and what it leaves in the ledger.
 */
import { describe, expect, it } from 'vitest';
import { parentMemoKey } from '../../../src/adapter.js';
import { claimStage } from '../../../src/engine/claim.js';
import { engineContext } from '../../../src/engine/create-sync.js';
import { deferStage } from '../../../src/engine/defer.js';
import { followStage } from '../../../src/engine/follow.js';
import { leaseKeeper } from '../../../src/engine/lease-keeper.js';
import { decodeActionFailure, decodeMark } from '../../../src/engine/payloads.js';
import { forClaim, prepareAll } from '../../../src/engine/prepare.js';
import { quotaPause } from '../../../src/engine/quota.js';
import { repeatOutcome, splitRepeats } from '../../../src/engine/repeats.js';
import { completeEntries, failEntries, releaseEntries, UNKNOWN_MARK } from '../../../src/engine/settle.js';
import type { Call, EngineContext, Held } from '../../../src/engine/types.js';
import { unchangedStage } from '../../../src/engine/unchanged.js';
import { windowStage } from '../../../src/engine/window.js';
import { writeStage } from '../../../src/engine/write.js';
import { CrmError } from '../../../src/errors.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

function setup() {
  const crm = memoryCrm();
  const ledger = memoryLedger();
  const clock = { t: T0 };
  const ctx: EngineContext = engineContext({ adapter: crm.adapter, ledger, now: () => clock.t, sleep: async () => undefined, verifyCreates: 'after-failure', retry: { minTimeoutMs: 1, maxTimeoutMs: 1 } });
  const call: Call = { keeper: leaseKeeper({ ledger, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
  return { crm, ledger, clock, ctx, call };
}

const upsert = (n: number, extra: Record<string, unknown> = {}) => ({ source: 's', eventId: `e${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email: `p${n}@example.com` }, ...extra });
const note = (n: number, extra: Record<string, unknown> = {}) => ({ source: 's', eventId: `n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `c-${n}` }, fields: { body: `note ${n}` }, ...extra });
const keylessNote = (at: string, body = 'x') => ({ source: 's', occurredAt: at, op: 'create', object: 'note', target: { object: 'contact', externalId: 'c-1' }, fields: { body } });

async function held(s: ReturnType<typeof setup>, inputs: unknown[]): Promise<Held[]> {
  const { planned } = prepareAll(s.ctx, inputs);
  return (await claimStage(s.ctx, s.call, planned)).held;
}

describe('prepare', () => {
  it('keys valid inputs, rejects bad ones by position, and keeps a stored key', () => {
    const { ctx } = setup();
    const { planned, rejected } = prepareAll(ctx, [upsert(1), { op: 'upsert' }, note(2)], [undefined, undefined, { key: 'v1:e:stored', at: 5 }]);
    expect(planned.map((p) => p.index)).toEqual([0, 2]);
    expect(planned[1]).toMatchObject({ key: 'v1:e:stored', at: 5, op: 'create', keyless: false });
    expect(planned[0]).toMatchObject({ coalesceId: 'c-1' });
    // The mark id and the fields' hash are made only for a key that goes on to claim.
    expect(planned[0]!.markId).toBeUndefined();
    expect(forClaim(ctx, planned[0]!)).toMatchObject({ coalesceId: 'c-1', markId: expect.stringMatching(/^m1:/), fieldHash: expect.any(String) });
    expect(rejected[1]).toMatchObject({ status: 'rejected', error: { code: 'VALIDATION' } });
  });
});

describe('in-call repeats', () => {
  it('leads with the first of each key and reports the rest as replayed (keyless: suppressed)', () => {
    const { ctx } = setup();
    const { planned } = prepareAll(ctx, [upsert(1), upsert(1, { fields: { email: 'other@example.com' } }), upsert(2)]);
    const { leaders, repeats } = splitRepeats(planned);
    expect(leaders.map((l) => l.index)).toEqual([0, 2]);
    expect(repeats.map((r) => [r.item.index, r.leader.index])).toEqual([[1, 0]]);
    expect(repeatOutcome(repeats[0]!.item, { key: 'k', status: 'created', recordId: '7', attempts: 1 })).toEqual({ key: 'k', status: 'replayed', recordId: '7', attempts: 0 });
    expect(repeatOutcome(repeats[0]!.item, { key: 'k', status: 'failed', attempts: 1 }).status).toBe('failed');
  });
});

describe('claim', () => {
  it('holds new keys and answers completed ones from the ledger', async () => {
    const s = setup();
    const first = await held(s, [upsert(1)]);
    await completeEntries(s.ctx, s.call, [{ item: first[0]!, outcome: { key: first[0]!.key, status: 'created', recordId: '9', attempts: 1 } }]);
    const { planned } = prepareAll(s.ctx, [upsert(1), upsert(2)]);
    const { held: h, answered } = await claimStage(s.ctx, s.call, planned);
    expect(h.map((i) => i.index)).toEqual([1]);
    expect(h[0]).toMatchObject({ token: 1, entryAttempts: 1, recovered: false });
    expect(answered).toEqual([{ item: planned[0], outcome: { key: planned[0]!.key, status: 'replayed', recordId: '9', attempts: 0 } }]);
  });

  /** The stage's ledger calls, by method, with the keys each claim asked for. */
  function counting(ledger: LedgerBackend) {
    const calls: string[] = [];
    const claimed: string[][] = [];
    const wrapped: LedgerBackend = {
      ...ledger,
      claim: (reqs, now) => (calls.push('claim'), claimed.push(reqs.map((r) => r.key)), ledger.claim(reqs, now)),
      getMany: (keys) => (calls.push('getMany'), ledger.getMany!(keys)),
    };
    return { wrapped, calls, claimed };
  }

  it('answers completed keys from one read-only lookup and sends only the others to claim', async () => {
    const s = setup();
    const first = await held(s, [upsert(1), upsert(2), upsert(3)]);
    await completeEntries(s.ctx, s.call, [first[0]!, first[1]!].map((item) => ({ item, outcome: { key: item.key, status: 'created' as const, recordId: `r${item.index}`, attempts: 1 } })));
    // upsert(3) stays in progress (held by the first call): the lookup must not answer it.
    const c = counting(s.ledger);
    const ctx = engineContext({ adapter: s.crm.adapter, ledger: c.wrapped, now: () => s.clock.t, sleep: async () => undefined });
    const call: Call = { keeper: leaseKeeper({ ledger: c.wrapped, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const { planned } = prepareAll(ctx, [upsert(1), upsert(2), upsert(3), upsert(4)]);
    const { held: h, answered } = await claimStage(ctx, call, planned);
    call.keeper.stop();
    expect(c.calls).toEqual(['getMany', 'claim']);
    expect(c.claimed).toEqual([[planned[2]!.key, planned[3]!.key]]);
    expect(answered.map((d) => [d.item.index, d.outcome.status])).toEqual([[0, 'replayed'], [1, 'replayed'], [2, 'in_flight']]);
    expect(h.map((i) => i.index)).toEqual([3]);
    // A replay took nothing: no claim, no mark read, no attempt counted.
    expect((await s.ledger.get(planned[0]!.key))).toMatchObject({ status: 'completed', token: 1, attempts: 1 });
  });

  it('leaves an expired, failed or other-identity entry to claim, which decides it as before', async () => {
    const s = setup();
    const c = counting(s.ledger);
    const ctx = engineContext({ adapter: s.crm.adapter, ledger: c.wrapped, now: () => s.clock.t, sleep: async () => undefined, retryFailed: false });
    const call: Call = { keeper: leaseKeeper({ ledger: c.wrapped, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const { planned } = prepareAll(ctx, [upsert(1), upsert(2), upsert(3)]);
    const [a, b, d] = planned.map((p) => p.key);
    await s.ledger.claim(planned.map((p) => ({ key: p.key, fingerprint: p.key === d ? 'another-identity' : p.fingerprint, leaseMs: 1_000 })), T0);
    // a: completed but past its retention; b: failed; d: completed under another fingerprint.
    await s.ledger.complete([{ key: a!, token: 1, result: { recordId: 'old' }, retentionMs: 10 }, { key: d!, token: 1, result: { recordId: 'x' } }], T0);
    await s.ledger.fail([{ key: b!, token: 1, error: { message: 'no' } }], T0);
    s.clock.t = T0 + 20;
    const out = await claimStage(ctx, call, planned);
    call.keeper.stop();
    expect(c.calls).toEqual(['getMany', 'claim']);
    expect(c.claimed).toEqual([[a, b, d]]);
    expect(out.held.map((i) => i.index)).toEqual([0]);
    expect(out.answered.map((x) => [x.item.index, x.outcome.status])).toEqual([[1, 'failed'], [2, 'rejected']]);
  });

  it('skips the lookup after a call of only new keys, and reads again once a claim answers completed', async () => {
    const s = setup();
    const c = counting(s.ledger);
    const ctx = engineContext({ adapter: s.crm.adapter, ledger: c.wrapped, now: () => s.clock.t, sleep: async () => undefined });
    const call: Call = { keeper: leaseKeeper({ ledger: c.wrapped, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const run = async (n: number) => (await claimStage(ctx, call, prepareAll(ctx, [upsert(n)]).planned)).held;
    const h1 = await run(1);
    await completeEntries(ctx, call, [{ item: h1[0]!, outcome: { key: h1[0]!.key, status: 'created', recordId: '1', attempts: 1 } }]);
    await run(2);
    expect((await claimStage(ctx, call, prepareAll(ctx, [upsert(1)]).planned)).answered[0]!.outcome.status).toBe('replayed');
    await claimStage(ctx, call, prepareAll(ctx, [upsert(1)]).planned);
    call.keeper.stop();
    expect(c.calls).toEqual(['getMany', 'claim', 'claim', 'claim', 'getMany']);
  });
});

describe('dedupe window', () => {
  it('passes unwindowed items, leads identical keyless creates within the window, and takes a slot for the leader', async () => {
    const s = setup();
    const items = await held(s, [upsert(1), keylessNote('2026-11-29T09:59:00Z'), keylessNote('2026-11-29T10:01:00Z', 'reworded'), keylessNote('2026-11-20T10:00:00Z')]);
    const r = await windowStage(s.ctx, s.call, items);
    expect(r.pass.map((i) => i.index).sort()).toEqual([0, 1, 3]);
    expect(r.pass.filter((i) => i.slot).map((i) => i.index).sort()).toEqual([1, 3]);
    expect(r.followers.map((f) => [f.item.index, f.leader.index])).toEqual([[2, 1]]);
    expect(r.suppressed).toEqual([]);
  });
});

describe('unchanged', () => {
  it('reports a write equal to the mark as unchanged, never one whose mark is unknown', async () => {
    const s = setup();
    const [first] = await held(s, [upsert(1)]);
    await completeEntries(s.ctx, s.call, [{ item: first!, outcome: { key: first!.key, status: 'created', recordId: '9', attempts: 1 } }]);
    const [same, changed] = await held(s, [upsert(1, { eventId: 'e1b' }), upsert(2)]);
    const r = unchangedStage([same!, changed!]);
    expect(r.unchanged.map((d) => d.outcome)).toEqual([{ key: same!.key, status: 'unchanged', recordId: '9', attempts: 0 }]);
    expect(r.pass.map((i) => i.index)).toEqual([1]);
    expect(unchangedStage([{ ...same!, mark: UNKNOWN_MARK }]).unchanged).toEqual([]);
  });
});

describe('defer', () => {
  it('holds back keyed creates whose parent nothing has shown this Sync, and passes the rest', async () => {
    const s = setup();
    // c-1 is upserted in this call, c-2 this Sync wrote a moment ago, c-3 and c-9 are unknown.
    s.ctx.parents.known(parentMemoKey('contact', 'c-2'), 'id-2');
    const keyless = { ...keylessNote('2026-11-29T10:00:00Z'), target: { object: 'contact', externalId: 'c-9' } };
    const items = await held(s, [upsert(1), note(1), note(2), note(3), keyless, note(4, { target: { object: 'contact', externalId: 'c-3' }, eventId: 'n4' })]);
    const { pass, deferred } = deferStage(s.ctx, items);
    expect(pass.map((i) => i.action.eventId ?? 'keyless')).toEqual(['e1', 'n1', 'n2', 'keyless']);
    expect(deferred.map((d) => d.item.action.eventId)).toEqual(['n3', 'n4']);
    expect(deferred.every((d) => d.outcome.status === 'failed' && d.outcome.error?.retryable === true)).toBe(true);
    expect(deferred[0]!.outcome.error?.message).toContain('parent contact "c-3" is not known yet');
  });

  it('passes a create taken over from another holder, and everything when failed entries are not retried', async () => {
    const s = setup();
    const [taken] = await held(s, [note(3)]);
    expect(deferStage(s.ctx, [{ ...taken!, recovered: true }]).deferred).toEqual([]);
    expect(deferStage(s.ctx, [taken!]).deferred).toHaveLength(1);
    const strict = engineContext({ adapter: s.crm.adapter, ledger: s.ledger, retryFailed: false, now: () => s.clock.t });
    expect(deferStage(strict, [taken!]).pass).toEqual([taken]);
  });
});

describe('write and settle', () => {
  it('writes records before the activities on them, settles every claim, and splits a whole-batch 400', async () => {
    const s = setup();
    s.crm.rejectExternalIds.add('c-3');
    const items = await held(s, [note(1), upsert(1), upsert(2), upsert(3)]);
    const decided = await writeStage(s.ctx, s.call, items);
    const byIndex = Object.fromEntries(decided.map((d) => [d.item.index, d.outcome.status]));
    expect(byIndex).toEqual({ 0: 'created', 1: 'created', 2: 'created', 3: 'failed' });
    expect(s.crm.activities('note')).toHaveLength(1);
    const entries = await s.ledger.list();
    expect(entries.map((e) => e.status).sort()).toEqual(['completed', 'completed', 'completed', 'failed']);
    const failure = decodeActionFailure(entries.find((e) => e.status === 'failed')!.error);
    expect(failure).toMatchObject({ error: { code: 'CRM', status: 400 }, retry: { action: { externalId: 'c-3' }, possiblyWritten: false } });
  });

  it('sends a slot\'s next batch before settling the one answered, and settles both before it returns', async () => {
    const crm = memoryCrm({ maxBatch: 1 });
    const base = memoryLedger();
    const order: string[] = [];
    const ledger: LedgerBackend = { ...base, complete: (requests, now) => (order.push('complete'), base.complete(requests, now)) };
    const adapter = { ...crm.adapter, upsertRecords: (...args: Parameters<typeof crm.adapter.upsertRecords>) => (order.push('send'), crm.adapter.upsertRecords(...args)) };
    const ctx = engineContext({ adapter, ledger, concurrency: 1, verifyCreates: 'after-failure' });
    const call: Call = { keeper: leaseKeeper({ ledger, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const { planned } = prepareAll(ctx, [upsert(1), upsert(2)]);
    const decided = await writeStage(ctx, call, (await claimStage(ctx, call, planned)).held);
    expect(order).toEqual(['send', 'send', 'complete', 'complete']);
    expect(decided.map((d) => d.outcome.status)).toEqual(['created', 'created']);
    expect((await ledger.list()).map((e) => e.status)).toEqual(['completed', 'completed']);
  });

  it('settles the batches answered by the same turn in one round trip per kind', async () => {
    const crm = memoryCrm({ maxBatch: 1 });
    crm.rejectExternalIds.add('c-3');
    const base = memoryLedger();
    const calls: string[] = [];
    const ledger: LedgerBackend = {
      ...base,
      complete: (requests, now) => (calls.push(`complete ${requests.length}`), base.complete(requests, now)),
      fail: (requests, now) => (calls.push(`fail ${requests.length}`), base.fail(requests, now)),
    };
    const ctx = engineContext({ adapter: crm.adapter, ledger, concurrency: 4, verifyCreates: 'after-failure' });
    const call: Call = { keeper: leaseKeeper({ ledger, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const { planned } = prepareAll(ctx, [upsert(1), upsert(2), upsert(3), upsert(4)]);
    const decided = await writeStage(ctx, call, (await claimStage(ctx, call, planned)).held);
    // Four batches in flight together: one complete for the three written, one fail for the refused one.
    expect(calls).toEqual(['complete 3', 'fail 1']);
    expect(Object.fromEntries(decided.map((d) => [d.item.index, d.outcome.status]))).toEqual({ 0: 'created', 1: 'created', 2: 'failed', 3: 'created' });
    expect((await base.list()).map((e) => e.status).sort()).toEqual(['completed', 'completed', 'completed', 'failed']);
  });

  it('settles every batch it sent and sends no further one after a settle fails', async () => {
    const crm = memoryCrm({ maxBatch: 1 });
    const base = memoryLedger();
    let completes = 0;
    const ledger: LedgerBackend = {
      ...base,
      complete: async (requests, now) => {
        if ((completes += 1) === 1) throw new Error('ledger unreachable');
        return base.complete(requests, now);
      },
    };
    const ctx = engineContext({ adapter: crm.adapter, ledger, concurrency: 1, verifyCreates: 'after-failure' });
    const call: Call = { keeper: leaseKeeper({ ledger, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const { planned } = prepareAll(ctx, [upsert(1), upsert(2), upsert(3), upsert(4)]);
    await expect(writeStage(ctx, call, (await claimStage(ctx, call, planned)).held)).rejects.toThrow('ledger unreachable');
    // The first batch's settle failed while the second was in flight: the second is settled, no third is sent.
    expect(crm.calls.upsert).toBe(2);
    expect((await ledger.list()).map((e) => e.status).sort()).toEqual(['completed', 'in_progress', 'in_progress', 'in_progress']);
    // The two never sent are given back, claimable at once by anyone; the one whose settle failed stays held.
    const again = await base.claim(planned.map((p) => ({ key: p.key, fingerprint: p.fingerprint, leaseMs: 1_000, owner: 'other' })), Date.now());
    expect(again.map((c) => c.outcome)).toEqual(['in_progress', 'completed', 'claimed', 'claimed']);
    call.keeper.stop();
  });

  it('gives back the claims of the activities when the upserts before them fail to settle', async () => {
    const crm = memoryCrm({ maxBatch: 1 });
    const base = memoryLedger();
    const ledger: LedgerBackend = { ...base, complete: async () => Promise.reject(new Error('ledger unreachable')) };
    const ctx = engineContext({ adapter: crm.adapter, ledger, concurrency: 1, verifyCreates: 'after-failure' });
    const call: Call = { keeper: leaseKeeper({ ledger, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false };
    const { planned } = prepareAll(ctx, [upsert(1), note(1), note(2)]);
    await expect(writeStage(ctx, call, (await claimStage(ctx, call, planned)).held)).rejects.toThrow('ledger unreachable');
    // The upsert was sent and stays held (its settle failed); the notes were never sent, and are claimable at once.
    expect(crm.calls.upsert).toBe(1);
    expect(crm.calls.create).toBe(0);
    const again = await base.claim(planned.map((p) => ({ key: p.key, fingerprint: p.fingerprint, leaseMs: 1_000, owner: 'other' })), Date.now());
    expect(again.map((c) => c.outcome)).toEqual(['in_progress', 'claimed', 'claimed']);
    call.keeper.stop();
  });

  it('looks an activity up before creating it after a lost response, and creates it once', async () => {
    const s = setup();
    await writeStage(s.ctx, s.call, await held(s, [upsert(1)]));
    s.crm.failNext('lost_response', { op: 'create' });
    const decided = await writeStage(s.ctx, s.call, await held(s, [note(1)]));
    expect(decided.map((d) => d.outcome.status)).toEqual(['created']);
    expect(s.crm.calls).toMatchObject({ create: 1, find: 1 });
    expect(s.crm.activities('note')).toHaveLength(1);
  });

  it('fails, releases and marks possibly written upserts unknown, their fields advanced to the event time', async () => {
    const s = setup();
    const [a, b] = await held(s, [upsert(1), upsert(2)]);
    const err = new CrmError('x', { vendor: 'memory', kind: 'transient' }).toJSON();
    await failEntries(s.ctx, s.call, [{ item: a!, outcome: { key: a!.key, status: 'failed', error: err, attempts: 1 } }], true);
    await releaseEntries(s.ctx, s.call, [b!]);
    expect((await s.ledger.get(a!.key))!.status).toBe('failed');
    expect((await s.ledger.get(b!.key))).toMatchObject({ status: 'in_progress', leaseUntil: T0 });
    const [again] = await s.ledger.claim([{ key: 'probe', fingerprint: 'f', leaseMs: 1, markId: a!.markId! }], T0);
    expect(decodeMark(again!.mark!)).toEqual({ ...decodeMark(UNKNOWN_MARK), t: { email: a!.at } });
  });
});

describe('follow', () => {
  it('suppresses followers of a written leader and fails followers of a failed one', async () => {
    const s = setup();
    const [leader, f1] = await held(s, [keylessNote('2026-11-29T09:59:00Z'), keylessNote('2026-11-29T10:01:00Z', 'again')]);
    const written = await followStage(s.ctx, s.call, [{ item: f1!, leader: leader! }], () => ({ key: leader!.key, status: 'created', recordId: '5', attempts: 1 }));
    expect(written.map((d) => d.outcome)).toEqual([{ key: f1!.key, status: 'suppressed', recordId: '5', attempts: 0 }]);
    expect((await s.ledger.get(f1!.key))!.status).toBe('completed');
  });
});

describe('quota pause', () => {
  it('refuses every send until the quota resets, then lets them through', () => {
    const clock = { t: 0 };
    const pause = quotaPause({ now: () => clock.t, pauseMs: 1_000 });
    pause.check();
    pause.note(new CrmError('transient', { vendor: 'm', kind: 'transient' }));
    pause.check();
    const quota = new CrmError('daily limit', { vendor: 'm', kind: 'quota' });
    pause.note(quota);
    expect(() => pause.check()).toThrow(quota);
    clock.t = 1_000;
    expect(() => pause.check()).not.toThrow();
  });
});
