import { describe, expect, it } from 'vitest';
import { createSync, type Outcome, type Settled } from '../../../src/engine/index.js';
import type { Action } from '../../../schemas/action.js';
import { callTake } from '../../../src/engine/apply-each.js';
import { encodeActionFailure } from '../../../src/engine/payloads.js';
import { CrmError } from '../../../src/errors.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { memoryCrm, type MemoryCrmOptions } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

function setup(opts: { crm?: MemoryCrmOptions; ledger?: LedgerBackend; clock?: { t: number } } = {}) {
  const crm = memoryCrm(opts.crm);
  const clock = opts.clock ?? { t: T0 };
  const ledger = opts.ledger ?? memoryLedger();
  const sync = createSync({
    adapter: crm.adapter, ledger, leaseMs: 1_000, verifyCreates: 'after-failure',
    now: () => clock.t, sleep: async () => undefined, retry: { minTimeoutMs: 1, maxTimeoutMs: 2 },
  });
  return { crm, sync, clock, ledger };
}

const contact = (n: number) => ({ source: 'zendesk', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `zd-${n}`, fields: { email: `p${n}@example.com` } });
const note = (n: number) => ({
  source: 'zendesk', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `zd-${n}` },
  fields: { body: `note ${n}`, timestamp: '2026-11-29T10:00:00Z' },
});

/** Every step's outcomes, placed at their input index (each index once). */
async function collect(steps: AsyncIterable<Settled>): Promise<{ outcomes: Outcome[]; steps: number }> {
  const outcomes: Outcome[] = [];
  let n = 0;
  for await (const settled of steps) {
    n += 1;
    for (const { index, outcome } of settled) {
      expect(outcomes[index]).toBeUndefined();
      outcomes[index] = outcome;
    }
  }
  return { outcomes, steps: n };
}

async function* stream<T>(items: readonly T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

describe('applyEach', () => {
  it('settles every input once, as applyMany does: rejected, written, repeated and replayed', async () => {
    const inputs = [contact(1), { op: 'nonsense' }, note(1), contact(2), contact(1), note(2), contact(3)];
    const a = setup();
    await a.sync.apply(contact(3));
    const { outcomes } = await collect(a.sync.applyEach(stream(inputs), { batchSize: 2 }));
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'created', 'created', 'replayed', 'created', 'replayed']);
    const b = setup();
    await b.sync.apply(contact(3));
    expect((await b.sync.applyMany(inputs)).map((o) => o.status)).toEqual(outcomes.map((o) => o.status));
    expect(a.crm.records('contact')).toHaveLength(3);
    expect(a.crm.activities('note')).toHaveLength(2);
  });

  it('gathers what is left between completed actions into full calls, with one ledger lookup per batchSize inputs', async () => {
    const ledger = memoryLedger();
    let lookups = 0;
    const counted: LedgerBackend = { ...ledger, getMany: async (keys) => (lookups += 1, ledger.getMany!(keys)) };
    const { sync, crm } = setup({ ledger: counted });
    const inputs = Array.from({ length: 100 }, (_, n) => contact(n));
    await sync.applyMany(inputs.filter((_, n) => n % 10 !== 3));
    // A replay: the Sync's plain calls look their keys up before claiming from now on.
    expect((await sync.apply(contact(0))).status).toBe('replayed');
    crm.calls.upsert = 0;
    lookups = 0;
    const { outcomes, steps } = await collect(sync.applyEach(inputs, { batchSize: 10 }));
    expect(outcomes.filter((o) => o.status === 'created').length).toBe(10);
    expect(outcomes.filter((o) => o.status === 'replayed').length).toBe(90);
    // Ten lookups of ten inputs, one call for the ten left (its claim does not read them again), one request.
    expect(lookups).toBe(10);
    expect(steps).toBe(11);
    expect(crm.calls.upsert).toBe(1);
  });

  it('reads the ledger ahead of a first run over new actions once, then sends its chunks as they come', async () => {
    const ledger = memoryLedger();
    let lookups = 0;
    const counted: LedgerBackend = { ...ledger, getMany: async (keys) => (lookups += 1, ledger.getMany!(keys)) };
    const { sync, crm } = setup({ ledger: counted });
    const { outcomes, steps } = await collect(sync.applyEach(Array.from({ length: 30 }, (_, n) => contact(n)), { batchSize: 10 }));
    expect(outcomes.every((o) => o.status === 'created')).toBe(true);
    expect(lookups).toBe(1);
    expect(steps).toBe(6);
    expect(crm.calls.upsert).toBe(3);
  });

  it('sends creates a holder may have written apart and last: one key lookup for all of them', async () => {
    const clock = { t: T0 };
    const { sync: writer, crm, ledger } = setup({ clock });
    // The walk is a restarted worker's: a Sync of its own on the same ledger.
    const sync = createSync({ adapter: crm.adapter, ledger, leaseMs: 1_000, verifyCreates: 'after-failure', now: () => clock.t, sleep: async () => undefined });
    const inputs = Array.from({ length: 40 }, (_, n) => [contact(n), note(n)]).flat();
    await writer.applyMany(Array.from({ length: 40 }, (_, n) => contact(n)));
    // Every fourth note claimed by a holder that died; the first of them was created in the CRM.
    const held = Array.from({ length: 40 }, (_, n) => n).filter((n) => n % 4 === 0);
    for (const n of held) {
      const p = sync.prepare(note(n)) as { key: string; fingerprint: string };
      await ledger.claim([{ key: p.key, fingerprint: p.fingerprint, leaseMs: 1_000, owner: 'elsewhere 1 1' }], clock.t);
    }
    const dead = sync.prepare(note(0)) as { key: string };
    await crm.adapter.createActivities('note', [{ key: dead.key, object: 'note', parent: { object: 'contact', externalId: 'zd-0' }, fields: { body: 'note 0' } }]);
    clock.t += 2_000;
    crm.calls.create = 0;
    const { outcomes } = await collect(sync.applyEach(inputs, { batchSize: 20 }));
    expect(outcomes.filter((o) => o.status === 'created').length).toBe(40);
    expect(outcomes.filter((o) => o.status === 'replayed').length).toBe(40);
    // Mixed in, each call of 20 lines would hold some of them and look its own up.
    expect(crm.calls.find).toBe(1);
    // Two calls of the others (22 gathered, then the last 8), one of the ten held (one found, nine created).
    expect(crm.calls.create).toBe(3);
    expect(new Set(crm.activities('note').map((a) => a.key)).size).toBe(40);
    expect(crm.activities('note')).toHaveLength(40);
  });

  it('does not hold back a create it took over from a dead holder, whose parent it does not know: it is looked up, not sent again', async () => {
    const clock = { t: T0 };
    const { sync, crm, ledger } = setup({ clock });
    // The contact was written by another system: nothing in this ledger knows it.
    await createSync({ adapter: crm.adapter, ledger: memoryLedger(), now: () => clock.t }).apply(contact(1));
    const p = sync.prepare(note(1)) as { key: string; fingerprint: string };
    await ledger.claim([{ key: p.key, fingerprint: p.fingerprint, leaseMs: 1_000, owner: 'elsewhere 1 1' }], clock.t);
    // The holder created the note before it died.
    await crm.adapter.createActivities('note', [{ key: p.key, object: 'note', parent: { object: 'contact', externalId: 'zd-1' }, fields: { body: 'note 1' } }]);
    clock.t += 2_000;
    crm.calls.create = 0;
    const { outcomes } = await collect(sync.applyEach([note(1)], { batchSize: 10 }));
    expect(outcomes.map((o) => o.status)).toEqual(['created']);
    expect(crm.calls.find).toBe(1);
    expect(crm.calls.create).toBe(0);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('settles a create it kept apart as held and then held back (its holder gave it up meanwhile): every input once', async () => {
    const inner = memoryLedger();
    const clock = { t: T0 };
    let holder: { key: string; token: number } | undefined;
    // Between the walk's lookup (it sees the holder's claim) and its claim, the holder fails it as surely unwritten.
    const ledger: LedgerBackend = {
      ...inner,
      claim: async (requests, now) => {
        if (holder) {
          const error = encodeActionFailure({ error: new CrmError('not sent', { vendor: 'memory', kind: 'transient' }).toJSON(), retry: { action: note(1) as Action, at: T0, attempts: 1, possiblyWritten: false } });
          await inner.fail([{ ...holder, error }], now);
          holder = undefined;
        }
        return inner.claim(requests, now);
      },
    };
    const { sync } = setup({ ledger, clock });
    const p = sync.prepare(note(1)) as { key: string; fingerprint: string };
    const [claim] = await inner.claim([{ key: p.key, fingerprint: p.fingerprint, leaseMs: 60_000, owner: 'elsewhere 1 1' }], clock.t);
    holder = { key: p.key, token: claim!.token! };
    const inputs = [note(1), contact(2), contact(3)];
    const { outcomes } = await collect(sync.applyEach(inputs, { batchSize: 3 }));
    expect(outcomes).toHaveLength(3);
    expect(outcomes.map((o) => o?.status)).toEqual(['failed', 'created', 'created']);
  });

  it('claims nothing it has not sent when the caller stops early', async () => {
    const { sync, ledger } = setup();
    const inputs = Array.from({ length: 30 }, (_, n) => contact(n));
    for await (const settled of sync.applyEach(inputs, { batchSize: 10 })) {
      expect(settled).toEqual([]);
      break;
    }
    const entries = await ledger.getMany!(inputs.map((a) => (sync.prepare(a) as { key: string }).key));
    expect(entries.every((e) => e === null)).toBe(true);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses batchSize %s', async (batchSize) => {
    const { sync } = setup();
    await expect(collect(sync.applyEach([contact(1)], { batchSize }))).rejects.toThrow(RangeError);
  });

  it('cuts calls in whole rounds of requests when more than one is in flight, at least batchSize actions', () => {
    // 4 in flight, 100 per batch: a round is 400; batchSize 500 rounds up to two of them.
    expect(callTake(500, 500, 4, 100)).toBe(0);
    expect(callTake(799, 500, 4, 100)).toBe(0);
    expect(callTake(800, 500, 4, 100)).toBe(800);
    expect(callTake(1_150, 500, 4, 100)).toBe(800);
    expect(callTake(1_200, 500, 4, 100)).toBe(1_200);
    // A batchSize below a round waits for a round.
    expect(callTake(100, 100, 4, 100)).toBe(0);
    expect(callTake(400, 100, 4, 100)).toBe(400);
    expect(callTake(2_000, 2_000, 4, 100)).toBe(2_000);
    // One at a time: what waits, once there is batchSize of it (a line at a time if so asked).
    expect(callTake(530, 500, 1, 100)).toBe(530);
    expect(callTake(499, 500, 1, 100)).toBe(0);
    expect(callTake(1, 1, 1, 100)).toBe(1);
  });

  it('keeps every slot busy: with 4 in flight, a walk of small chunks sends full rounds, not one request per call', async () => {
    const crm = memoryCrm({ maxBatch: 10, latencyMs: 5 });
    let inFlight = 0;
    let most = 0;
    const upsertRecords = crm.adapter.upsertRecords.bind(crm.adapter);
    const adapter = {
      ...crm.adapter,
      upsertRecords: async (...args: Parameters<typeof upsertRecords>) => {
        most = Math.max(most, ++inFlight);
        try {
          return await upsertRecords(...args);
        } finally {
          inFlight -= 1;
        }
      },
    };
    const sync = createSync({ adapter, ledger: memoryLedger(), concurrency: 4 });
    const { outcomes } = await collect(sync.applyEach(stream(Array.from({ length: 100 }, (_, n) => contact(n))), { batchSize: 10 }));
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 100 }, () => 'created'));
    expect(crm.records('contact')).toHaveLength(100);
    // Calls of 40, 40 and the last 20: ten full batches, four at a time (cut at 10, one at a time).
    expect(crm.calls.upsert).toBe(10);
    expect(most).toBe(4);
  });

  it('with 4 in flight and responses lost after the CRM committed, writes each contact and each note once', async () => {
    const crm = memoryCrm({ maxBatch: 10, latencyMs: 2 });
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger(), concurrency: 4, retry: { minTimeoutMs: 1, maxTimeoutMs: 2 }, sleep: async () => undefined });
    crm.failNext('lost_response', { op: 'upsert' });
    crm.failNext('lost_response', { op: 'create', times: 2 });
    const inputs = [...Array.from({ length: 100 }, (_, n) => contact(n)), ...Array.from({ length: 100 }, (_, n) => note(n))];
    const { outcomes } = await collect(sync.applyEach(stream(inputs), { batchSize: 10 }));
    // The ten contacts of the lost batch were created by it: sent again, they come back updated.
    expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(190);
    expect(outcomes.filter((o) => o.status === 'updated').map((o) => o.key)).toHaveLength(10);
    expect(crm.records('contact')).toHaveLength(100);
    expect(new Set(crm.activities('note').map((a) => a.key)).size).toBe(100);
    expect(crm.activities('note')).toHaveLength(100);
    // The lost upsert batch is sent again. The in-memory ledger cannot vouch for its history, so
    // every note batch is looked up before it is created (10), and the two lost ones again after
    // their answer was lost: found, not sent again.
    expect(crm.calls).toEqual({ upsert: 11, create: 10, find: 12, read: 0 });
  });
});
