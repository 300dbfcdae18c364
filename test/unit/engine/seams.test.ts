/**
 * The promise at its seams: keys never from the clock, every claim kept alive while (and only
 * while) its holder works, and every possibly-written write treated as written. Each test injects
 * one fault and asserts on the CRM's records and call counts.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createSync, type HandleContext, type Outcome, type SyncOptions } from '../../../src/engine/index.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import type { Fields } from '../../../src/adapter.js';
import { slotOwner, windowId } from '../../../src/dedupe-window.js';
import { formatOwner, hostId, ownerId, processStart } from '../../../src/owner.js';
import { memoryCrm, type MemoryCrmOptions } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');
const DAY = 24 * 3_600_000;
const MIN = 60_000;

function worker(opts: { crm: ReturnType<typeof memoryCrm>; ledger: LedgerBackend; clock?: { t: number } } & Partial<SyncOptions>) {
  const { crm, clock, ...rest } = opts;
  return createSync({
    adapter: crm.adapter,
    dedupeWindowMs: 10 * MIN,
    retry: { minTimeoutMs: 1, maxTimeoutMs: 2 },
    sleep: async () => undefined,
    ...(clock ? { now: () => clock.t } : {}),
    ...rest,
  });
}

const keylessNote = (at: number, body: string, extra: Record<string, unknown> = {}) => ({
  source: 'support-bot',
  occurredAt: new Date(at).toISOString(),
  op: 'create',
  object: 'note',
  target: { object: 'contact', externalId: 'zd-1' },
  fields: { body },
  ...extra,
});
const contact = { source: 'crm-import', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { email: 'ann@example.com' } };
const statuses = (outcomes: Outcome[]) => outcomes.map((o) => o.status);

async function seeded(crmOptions: MemoryCrmOptions = {}, ledger: LedgerBackend = memoryLedger()) {
  const crm = memoryCrm(crmOptions);
  const clock = { t: T0 };
  await worker({ crm, ledger, clock }).apply(contact);
  return { crm, ledger, clock };
}

describe('keys never come from the clock', () => {
  it('rejects a keyless action without occurredAt, naming occurredAt, and writes nothing', async () => {
    const { crm, ledger, clock } = await seeded();
    const calls = crm.adapter.apiCalls();
    const { occurredAt: _omit, ...bare } = keylessNote(T0, 'digest');
    const [outcome] = await worker({ crm, ledger, clock }).applyMany([bare]);
    expect(outcome).toMatchObject({ status: 'rejected', error: { path: 'occurredAt' } });
    expect(outcome!.error!.message).toContain('no eventId and no occurredAt: its key would come from the clock');
    expect(crm.activities('note')).toHaveLength(0);
    expect(crm.adapter.apiCalls()).toBe(calls);
    expect(await ledger.list()).toHaveLength(1); // only the seeded contact
  });

  it('accepts clock buckets with requireOccurredAt: false (window-only protection)', async () => {
    const { crm, ledger, clock } = await seeded();
    const { occurredAt: _omit, ...bare } = keylessNote(T0, 'digest');
    const sync = worker({ crm, ledger, clock, requireOccurredAt: false });
    expect(statuses(await sync.applyMany([bare, bare]))).toEqual(['created', 'suppressed']);
    clock.t += 3 * MIN;
    expect((await sync.apply({ ...bare, fields: { body: 'reworded digest' } })).status).toBe('suppressed');
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('retries a stored failed action under its stored key: one note however many retry runs, the failed entry cleared', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock, requireOccurredAt: false, verifyCreates: 'after-failure', retry: { retries: 0, minTimeoutMs: 1, maxTimeoutMs: 1 } });
    const { occurredAt: _omit, ...bare } = keylessNote(T0, 'digest');
    crm.failNext('server_error', { op: 'create' });
    const first = await sync.apply(bare);
    expect(first.status).toBe('failed');
    for (let run = 0; run < 3; run++) {
      clock.t += DAY; // each retry run lands in another clock bucket and outside the window
      const failed = await ledger.list({ status: 'failed' });
      const outcomes = await sync.retryStored(failed);
      expect(outcomes.every((o) => o.key === first.key)).toBe(true);
    }
    expect(crm.activities('note')).toHaveLength(1);
    expect(await ledger.list({ status: 'failed' })).toHaveLength(0);
    expect((await ledger.get(first.key))!.status).toBe('completed');
  });

  it('says why a stored entry without an action cannot be retried', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const [claim] = await ledger.claim([{ key: 'v1:h:event', fingerprint: 'f', leaseMs: 1000 }], T0);
    await ledger.fail([{ key: 'v1:h:event', token: claim!.token!, error: { code: 'ACTIONS_INCOMPLETE', message: 'x' } }], T0);
    const [outcome] = await sync.retryStored(await ledger.list({ status: 'failed' }));
    expect(outcome).toMatchObject({ key: 'v1:h:event', status: 'rejected', error: { path: 'error.action' } });
  });
});

describe('the dedupe window runs on event time, for creates only', () => {
  it('writes three keyless notes from three different days delivered within minutes of each other', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const separately = [];
    for (let d = 0; d < 3; d++) {
      separately.push(await sync.apply(keylessNote(T0 - d * DAY, `digest of day ${d}`)));
      clock.t += 3 * MIN;
    }
    expect(statuses(separately)).toEqual(['created', 'created', 'created']);
    const together = await sync.applyMany([0, 1, 2].map((d) => keylessNote(T0 - 10 * DAY - d * DAY, `older digest ${d}`)));
    expect(statuses(together)).toEqual(['created', 'created', 'created']);
    expect(crm.activities('note')).toHaveLength(6);
  });

  it('suppresses an identical create whose event time is within the window, across a bucket boundary, in one call and across calls', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const boundary = Math.ceil(T0 / (10 * MIN)) * 10 * MIN;
    expect(statuses(await sync.applyMany([keylessNote(boundary - MIN, 'a'), keylessNote(boundary + MIN, 'a, reworded')]))).toEqual(['created', 'suppressed']);
    clock.t += 2 * DAY; // run time does not matter, event time does
    expect((await sync.apply(keylessNote(boundary + 4 * MIN, 'a, third wording'))).status).toBe('suppressed');
    expect((await sync.apply(keylessNote(boundary + 20 * MIN, 'a, much later'))).status).toBe('created');
    expect(crm.activities('note')).toHaveLength(2);
  });

  it('writes a keyless upsert that changes a value days later, and reports the same values as unchanged', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const stage = (at: number, lifecyclestage: string) => ({ source: 'scorer', occurredAt: new Date(at).toISOString(), op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { lifecyclestage } });
    expect((await sync.apply(stage(T0, 'lead'))).status).toBe('updated');
    clock.t += 4 * DAY;
    expect((await sync.apply(stage(T0 + 4 * DAY, 'customer'))).status).toBe('updated');
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('customer');
    const calls = crm.adapter.apiCalls();
    expect((await sync.apply(stage(T0 + 5 * DAY, 'customer'))).status).toBe('unchanged');
    expect((await sync.apply(stage(T0 + 6 * DAY, 'customer'))).status).toBe('unchanged');
    expect(crm.adapter.apiCalls()).toBe(calls);
  });
});

describe('a keyless upsert is never bucketed away: a correction is written', () => {
  const stage = (at: number, lifecyclestage: string, extra: Record<string, unknown> = {}) =>
    ({ source: 'scorer', occurredAt: new Date(at).toISOString(), op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { lifecyclestage }, ...extra });

  it('writes lead at 10:00 then customer at 10:02 (same bucket), across calls: the CRM ends customer', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    expect((await sync.apply(stage(T0, 'lead'))).status).toBe('updated');
    clock.t += 2 * MIN;
    const calls = crm.calls.upsert;
    expect((await sync.apply(stage(T0 + 2 * MIN, 'customer'))).status).toBe('updated');
    expect(crm.calls.upsert).toBe(calls + 1);
    expect(crm.records('contact')).toHaveLength(1);
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('customer');
  });

  it('sends nothing for the same values a minute later (unchanged) or the same delivery again (suppressed)', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    await sync.apply(stage(T0, 'lead'));
    const calls = crm.adapter.apiCalls();
    expect((await sync.apply(stage(T0 + MIN, 'lead'))).status).toBe('unchanged');
    expect((await sync.apply(stage(T0, 'lead'))).status).toBe('suppressed');
    expect(crm.adapter.apiCalls()).toBe(calls);
  });

  it('applies several keyless upserts of one record in one call in event-time order, input order breaking ties: one write, the latest value wins, the others superseded', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const calls = crm.calls.upsert;
    const out = await sync.applyMany([stage(T0 + 2 * MIN, 'customer'), stage(T0, 'lead'), stage(T0 + MIN, 'opportunity')]);
    expect(statuses(out)).toEqual(['updated', 'superseded', 'superseded']);
    expect(crm.calls.upsert).toBe(calls + 1);
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('customer');
    // The record's mark is the latest event's: the same value again is unchanged, the older one is a change.
    const after = crm.adapter.apiCalls();
    expect((await sync.apply(stage(T0 + 3 * MIN, 'customer'))).status).toBe('unchanged');
    expect(crm.adapter.apiCalls()).toBe(after);
    const tie = await sync.applyMany([stage(T0 + 4 * MIN, 'lead'), stage(T0 + 4 * MIN, 'evangelist')]);
    expect(statuses(tie)).toEqual(['superseded', 'updated']);
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('evangelist');
  });

  it('runs the same calls again with 0 API calls: every key already done', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const calls = [stage(T0, 'lead'), stage(T0 + 2 * MIN, 'customer')];
    await sync.applyMany(calls);
    const before = crm.adapter.apiCalls();
    expect(statuses(await sync.applyMany(calls))).toEqual(['suppressed', 'suppressed']);
    expect(crm.adapter.apiCalls()).toBe(before);
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('customer');
  });

  it('keeps a keyed upsert replayed, whatever its values, and a keyless create suppressed in its bucket', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    await sync.apply(stage(T0, 'lead', { eventId: 'evt-7' }));
    expect((await sync.apply(stage(T0, 'customer', { eventId: 'evt-7' }))).status).toBe('replayed');
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('lead');
    expect((await sync.apply(keylessNote(T0, 'digest'))).status).toBe('created');
    expect((await sync.apply(keylessNote(T0 + 2 * MIN, 'digest, reworded'))).status).toBe('suppressed');
  });
});

describe('every held claim is kept alive while its holder works', () => {
  it('runs a 1.5 s model call once across two workers with a 400 ms lease', async () => {
    const crm = memoryCrm();
    const ledger = memoryLedger();
    const [a, b] = [worker({ crm, ledger, leaseMs: 400, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) }), worker({ crm, ledger, leaseMs: 400, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) })];
    let modelCalls = 0;
    const model = async () => {
      modelCalls += 1;
      await new Promise((r) => setTimeout(r, 1_500));
      return 'summary';
    };
    const first = a.once('summarize:evt-1', model);
    await new Promise((r) => setTimeout(r, 50));
    const second = b.once('summarize:evt-1', model);
    expect(await Promise.all([first, second])).toEqual(['summary', 'summary']);
    expect(modelCalls).toBe(1);
  }, 10_000);

  it('runs a slow handler and its ctx.once once across two workers with a short lease', async () => {
    const crm = memoryCrm();
    const ledger = memoryLedger();
    await worker({ crm, ledger }).apply(contact);
    const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const [a, b] = [worker({ crm, ledger, leaseMs: 300, sleep: realSleep }), worker({ crm, ledger, leaseMs: 300, sleep: realSleep })];
    let handlerRuns = 0;
    let modelCalls = 0;
    const handler = async (ctx: HandleContext) => {
      handlerRuns += 1;
      const summary = await ctx.once('summarize', async () => {
        modelCalls += 1;
        await realSleep(1_000);
        return 'summary';
      });
      return [{ op: 'create' as const, object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: summary } }];
    };
    const event = { source: 'zendesk', eventId: 'evt-slow', occurredAt: new Date(T0).toISOString() };
    const first = a.handle(event, handler);
    await realSleep(50);
    const second = await b.handle(event, handler);
    expect(second.status).toBe('in_flight'); // the live holder keeps its lease
    expect((await first).status).toBe('completed');
    expect((await b.handle(event, handler)).status).toBe('replayed');
    expect({ handlerRuns, modelCalls, notes: crm.activities('note').length }).toEqual({ handlerRuns: 1, modelCalls: 1, notes: 1 });
  }, 10_000);

  it('keeps a keyless note written once when its write outlives the lease (a long Retry-After)', async () => {
    const crm = memoryCrm({ retryAfterMs: 1_200 });
    const ledger = memoryLedger();
    await worker({ crm, ledger }).apply(contact);
    const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const at = Date.now();
    const [a, b] = [worker({ crm, ledger, leaseMs: 300, sleep: realSleep }), worker({ crm, ledger, leaseMs: 300, sleep: realSleep })];
    crm.failNext('rate_limited', { op: 'create' });
    const first = a.apply(keylessNote(at, 'digest'));
    await realSleep(700); // past A's lease, inside its Retry-After wait
    const sameKey = await b.apply(keylessNote(at, 'digest, second wording'));
    const neighbour = await b.apply(keylessNote(at + 30_000, 'digest, third wording'));
    expect([sameKey.status, neighbour.status]).toEqual(['in_flight', 'in_flight']);
    expect((await first).status).toBe('created');
    expect(crm.activities('note')).toHaveLength(1);
  }, 10_000);

  it('measures leases on the ledger clock: a worker whose clock is 10 minutes ahead does not take over a live claim', async () => {
    const crm = memoryCrm({ latencyMs: 300 });
    const ledger = memoryLedger({ clock: () => Date.now() });
    await worker({ crm, ledger }).apply(contact);
    const ahead = worker({ crm, ledger, leaseMs: 5_000, now: () => Date.now() + 10 * MIN });
    const behind = worker({ crm, ledger, leaseMs: 5_000, now: () => Date.now() - 10 * MIN });
    const note = { source: 'zendesk', eventId: 'evt-skew', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'x' } };
    const first = behind.apply(note);
    await new Promise((r) => setTimeout(r, 100));
    expect((await ahead.apply(note)).status).toBe('in_flight');
    expect((await first).status).toBe('created');
    expect((await ahead.apply(note)).status).toBe('replayed');
    expect(crm.activities('note')).toHaveLength(1);
  }, 10_000);

  it('sends no create under a claim lost while it waited: it ends in_flight and the new holder writes it once', async () => {
    const { crm, ledger, clock } = await seeded({ retryAfterMs: 100_000 });
    const action = keylessNote(T0, 'digest');
    const b = worker({ crm, ledger, clock, leaseMs: 30_000, verifyCreates: 'after-failure' });
    let bOutcome: Outcome | undefined;
    // A's process is paused through its wait (no renewal runs): B takes the claim over and writes.
    const a = worker({ crm, ledger, clock, leaseMs: 30_000, verifyCreates: 'after-failure', sleep: async (ms) => {
      clock.t += ms;
      bOutcome = await b.apply(action);
    } });
    crm.failNext('rate_limited', { op: 'create' });
    const outcome = await a.apply(action);
    expect(bOutcome).toMatchObject({ status: 'created' });
    expect(outcome.status).toBe('in_flight');
    expect(crm.calls.create).toBe(2); // A's rate-limited attempt and B's create; nothing from A after its wait
    expect(crm.activities('note')).toHaveLength(1);
    expect((await ledger.get(outcome.key))!.status).toBe('completed');
  });
});

describe('a claim held by a dead process on this host is taken over at once', () => {
  const deadPid = () => {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    return Number(child.stdout.toString());
  };

  it.each([
    ['a dead pid on this host', () => formatOwner({ host: hostId(), pid: deadPid(), start: '1' }), 'created'],
    ['a live pid whose start time differs (pid reused)', () => formatOwner({ host: hostId(), pid: process.pid, start: `${processStart(process.pid)}0` }), 'created'],
    ['this live process', () => ownerId(), 'in_flight'],
    ['a live process on this host', () => formatOwner({ host: hostId(), pid: process.ppid, start: processStart(process.ppid) }), 'in_flight'],
    ['a process on another host', () => formatOwner({ host: 'elsewhere', pid: deadPid(), start: '1' }), 'in_flight'],
  ])('%s', async (_name, owner, expected) => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock, verifyCreates: 'after-failure' });
    const action = { source: 'zendesk', eventId: 'evt-killed', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'x' } };
    const key = sync.prepare(action);
    if (!key.ok) throw key.error;
    // The killed worker's claim: a long lease it will never renew.
    await ledger.claim([{ key: key.key, fingerprint: key.fingerprint, leaseMs: 60 * MIN, owner: owner() }], clock.t);
    const outcome = await sync.apply(action);
    expect(outcome.status).toBe(expected);
    if (expected === 'created') {
      expect(crm.calls.find).toBe(1); // the dead worker may have written: looked up before creating
      expect((await ledger.get(key.key))!.owner).toBe(ownerId());
    }
    expect(crm.activities('note')).toHaveLength(expected === 'created' ? 1 : 0);
  });
});

describe('a window slot held by a dead process on this host is taken over at once', () => {
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;
  const holders: [string, () => string, 'created' | 'in_flight'][] = [
    ['a dead pid on this host', () => formatOwner({ host: hostId(), pid: deadPid(), start: '1' }), 'created'],
    ['a live process on this host', () => formatOwner({ host: hostId(), pid: process.ppid, start: processStart(process.ppid) }), 'in_flight'],
    ['a process on another host', () => formatOwner({ host: 'elsewhere', pid: deadPid(), start: '1' }), 'in_flight'],
  ];

  /**
   * A killed worker's keyless note: its entry and pending slot held for an hour, and the note it
   * sent committed in the CRM before it died. Returns the note's id.
   */
  async function killedAfterCommit(setup: Awaited<ReturnType<typeof seeded>>, sync: ReturnType<typeof worker>, at: number, holder: string): Promise<string> {
    const { crm, ledger, clock } = setup;
    const prepared = sync.prepare(keylessNote(at, 'first model output'));
    if (!prepared.ok) throw prepared.error;
    const { action } = prepared;
    await ledger.claim([{ key: prepared.key, fingerprint: prepared.fingerprint, leaseMs: 60 * MIN, owner: holder }], clock.t);
    const cell = Math.floor(at / (10 * MIN));
    await ledger.windowAcquire([{ id: `${windowId(crm.adapter.name, action)}:${cell}`, owner: slotOwner(prepared.key, at, holder), ttlMs: 60 * MIN }], clock.t);
    const [written] = await crm.adapter.createActivities('note', [{ key: prepared.key, object: 'note', parent: action.target!, fields: action.fields as Fields }]);
    return written!.ok ? written!.recordId : '';
  }

  it.each(holders)('the same key in the same cell, held by %s', async (_name, holder, expected) => {
    const setup = await seeded();
    const { crm, clock } = setup;
    const sync = worker({ ...setup, verifyCreates: 'after-failure' });
    const noteId = await killedAfterCommit(setup, sync, T0 + MIN, holder());
    const creates = crm.calls.create;
    clock.t += 20_000;
    const retried = await sync.apply(keylessNote(T0 + MIN + 20_000, 'second model output'));
    expect(retried.status).toBe(expected);
    if (expected === 'created') expect(retried.recordId).toBe(noteId);
    expect(crm.calls.find).toBe(expected === 'created' ? 1 : 0);
    expect(crm.calls.create).toBe(creates);
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['first model output']);
  });

  it.each(holders)('another key across a bucket boundary, held by %s in the cell before', async (_name, holder, expected) => {
    const setup = await seeded();
    const { crm, ledger, clock } = setup;
    const sync = worker({ ...setup, verifyCreates: 'after-failure' });
    const noteId = await killedAfterCommit(setup, sync, T0 - 5_000, holder());
    const creates = crm.calls.create;
    clock.t += 10_000;
    const retried = await sync.apply(keylessNote(T0 + 5_000, 'second model output'));
    expect(retried.status).toBe(expected);
    expect(crm.calls.create).toBe(creates);
    expect(crm.activities('note')).toHaveLength(1);
    if (expected === 'in_flight') return;
    // Found by the dead holder's key: its note is this action's record, and the window stays closed.
    expect(retried.recordId).toBe(noteId);
    expect(crm.calls.find).toBe(1);
    expect((await ledger.get(retried.key))!.status).toBe('completed');
    expect((await sync.apply(keylessNote(T0 + 9_000, 'third model output'))).status).toBe('suppressed');
  });

  it('looks a dead holder of another key up where the CRM upserts activities on their key', async () => {
    const setup = await seeded({ nativeActivityUpsert: true });
    const { crm, clock } = setup;
    const sync = worker({ ...setup, verifyCreates: 'after-failure' });
    const noteId = await killedAfterCommit(setup, sync, T0 - 5_000, formatOwner({ host: hostId(), pid: deadPid(), start: '1' }));
    const creates = crm.calls.create;
    clock.t += 10_000;
    const retried = await sync.apply(keylessNote(T0 + 5_000, 'second model output'));
    expect(retried).toMatchObject({ status: 'created', recordId: noteId });
    expect(crm.calls).toMatchObject({ find: 1, create: creates });
    expect(crm.activities('note')).toHaveLength(1);
  });
});

describe('possibly written means written until proven otherwise', () => {
  it('never judges a record unchanged after an upsert that may have reached the CRM failed', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock, retry: { retries: 1, minTimeoutMs: 1, maxTimeoutMs: 1 } });
    const stage = (eventId: string, lifecyclestage: string) => ({ source: 'scorer', eventId, op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { lifecyclestage } });
    expect((await sync.apply(stage('e1', 'lead'))).status).toBe('updated');
    crm.failNext('lost_response', { op: 'upsert', times: 2 }); // committed, both responses lost
    expect((await sync.apply(stage('e2', 'customer'))).status).toBe('failed');
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('customer');
    const calls = crm.calls.upsert;
    expect((await sync.apply(stage('e3', 'lead'))).status).toBe('updated');
    expect(crm.calls.upsert).toBe(calls + 1);
    expect(crm.records('contact')[0]!.fields.lifecyclestage).toBe('lead');
  });

  it('looks activity keys up before creating on a ledger that cannot vouch for its history (verifyCreates auto)', async () => {
    const { crm, clock } = await seeded();
    const note = { source: 'zendesk', eventId: 'evt-7', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'x' } };
    expect((await worker({ crm, ledger: memoryLedger(), clock }).apply(note)).status).toBe('created');
    // The ledger lost its entries (another process, a restart): the redelivery finds the note.
    const redelivered = await worker({ crm, ledger: memoryLedger(), clock }).apply(note);
    expect(redelivered.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(1);
    expect(crm.calls.find).toBe(2);
  });

  it('creates without a lookup on a durable ledger unless a failure or takeover calls for one', async () => {
    const { crm, clock } = await seeded();
    const durable: LedgerBackend = { ...memoryLedger(), isDurable: async () => true, bornAt: async () => Date.parse('2026-01-01T00:00:00Z') };
    const note = { source: 'zendesk', eventId: 'evt-8', occurredAt: '2026-06-01T00:00:00Z', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'x' } };
    expect((await worker({ crm, ledger: durable, clock }).apply(note)).status).toBe('created');
    expect((await worker({ crm, ledger: durable, clock, verifyCreates: 'always' }).apply({ ...note, eventId: 'evt-9' })).status).toBe('created');
    expect(crm.calls.find).toBe(1);
  });

  it('looks up a create on a durable ledger when its event is older than the ledger, or has no time', async () => {
    const { crm, clock } = await seeded();
    const durable: LedgerBackend = { ...memoryLedger(), isDurable: async () => true, bornAt: async () => Date.parse('2026-06-01T00:00:00Z') };
    const note = { source: 'zendesk', eventId: 'evt-8', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'x' } };
    const sync = worker({ crm, ledger: durable, clock });
    expect((await sync.apply({ ...note, occurredAt: '2026-05-31T00:00:00Z' })).status).toBe('created');
    expect(crm.calls.find).toBe(1);
    // Within the margin after the birth: its source's clock may run ahead of the ledger's.
    expect((await sync.apply({ ...note, eventId: 'evt-9', occurredAt: '2026-06-01T00:04:00Z' })).status).toBe('created');
    expect(crm.calls.find).toBe(2);
    expect((await sync.apply({ ...note, eventId: 'evt-10' })).status).toBe('created');
    expect(crm.calls.find).toBe(3);
    expect((await sync.apply({ ...note, eventId: 'evt-11', occurredAt: '2026-06-01T00:06:00Z' })).status).toBe('created');
    expect(crm.calls.find).toBe(3);
    // A ledger that cannot say when it was born vouches for no event.
    const ageless: LedgerBackend = { ...memoryLedger(), isDurable: async () => true, bornAt: async () => null };
    expect((await worker({ crm, ledger: ageless, clock }).apply({ ...note, eventId: 'evt-12', occurredAt: '2026-06-01T00:06:00Z' })).status).toBe('created');
    expect(crm.calls.find).toBe(4);
    expect(crm.activities('note')).toHaveLength(5);
  });

  it('gives back claims refused for bad credentials instead of recording them failed', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const auth = memoryCrm();
    const refused = { ...crm.adapter, upsertRecords: async () => { throw auth.adapter.classifyError(new (await import('../../../src/errors.js')).CrmError('401 the token was refused', { vendor: 'memory', kind: 'auth', status: 401 })); } };
    const denied = createSync({ adapter: refused, ledger, now: () => clock.t, sleep: async () => undefined });
    const outcome = await denied.apply({ ...contact, eventId: 'e-auth', fields: { email: 'new@example.com' } });
    expect(outcome).toMatchObject({ status: 'failed', error: { status: 401 } });
    expect(await ledger.list({ status: 'failed' })).toHaveLength(0);
    expect((await sync.apply({ ...contact, eventId: 'e-auth', fields: { email: 'new@example.com' } })).status).toBe('updated');
  });
});

describe('side effects get their step key', () => {
  it('passes the same stable step key to every attempt of a once step', async () => {
    const { crm, ledger, clock } = await seeded();
    const sync = worker({ crm, ledger, clock });
    const seen: string[] = [];
    await expect(sync.once('notify:evt-1', (stepKey) => {
      seen.push(stepKey);
      throw new Error('provider timed out');
    })).rejects.toThrow('provider timed out');
    expect(await sync.once('notify:evt-1', (stepKey) => (seen.push(stepKey), 'sent'))).toBe('sent');
    expect(await sync.once('notify:evt-1', (stepKey) => (seen.push(stepKey), 'sent twice'))).toBe('sent');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]).toMatch(/^v1:/);
  });
});
