/**
 * A create refused as parent-missing while another live worker holds the parent's upsert, or
 * after that upsert completed once the create looked for its parent, ends `in_flight` with its
 * claim released (parent-held.ts); one whose parent nobody is writing (not held, a lease run out,
 * a dead holder on this host, an upsert given back or completed before the look) stays the
 * retryable parent-missing failure. The holder is read only after such a refusal.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { claimStage } from '../../../src/engine/claim.js';
import { engineContext } from '../../../src/engine/create-sync.js';
import { PARENT_NOT_FOUND } from '../../../src/engine/defer.js';
import { encodeActionResult } from '../../../src/engine/payloads.js';
import { leaseKeeper } from '../../../src/engine/lease-keeper.js';
import { holderIdOf, liveClaim, PARENT_IN_FLIGHT, writtenSince } from '../../../src/engine/parent-held.js';
import { forClaim, prepareAll } from '../../../src/engine/prepare.js';
import type { Call, EngineContext, Held } from '../../../src/engine/types.js';
import { writeStage } from '../../../src/engine/write.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import { parentMemoKey, type ActivityWrite, type CrmAdapter } from '../../../src/adapter.js';
import { CrmError } from '../../../src/errors.js';
import type { LedgerBackend, LedgerEntry } from '../../../src/ledger/types.js';
import { formatOwner, hostId, ownerId } from '../../../src/owner.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

const upsert = (n: number) => ({ source: 's', eventId: `e${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email: `p${n}@example.com` } });
const note = (n: number) => ({ source: 's', eventId: `n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `c-${n}` }, fields: { body: `note ${n}` } });

const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

function setup(adapt: (adapter: CrmAdapter) => CrmAdapter = (a) => a) {
  const crm = memoryCrm();
  const base = memoryLedger();
  const reads = { heldBy: 0 };
  const ledger: LedgerBackend = { ...base, heldBy: (ids) => ((reads.heldBy += 1), base.heldBy!(ids)) };
  const clock = { t: T0 };
  const ctx: EngineContext = engineContext({ adapter: adapt(crm.adapter), ledger, now: () => clock.t, sleep: async () => undefined, verifyCreates: 'after-failure', retry: { minTimeoutMs: 1, maxTimeoutMs: 1 } });
  const newCall = (): Call => ({ keeper: leaseKeeper({ ledger, leaseMs: ctx.leaseMs, clock: ctx.clock }), verifyAll: false });
  return { crm, ledger, reads, clock, ctx, call: newCall(), newCall };
}
type Setup = ReturnType<typeof setup>;

async function held(s: Setup, inputs: unknown[], call = s.call): Promise<Held[]> {
  return (await claimStage(s.ctx, call, prepareAll(s.ctx, inputs).planned)).held;
}

/** Another worker's claim of contact `n`'s upsert, as its own call takes it. */
async function otherWorkerHolds(s: Setup, n: number): Promise<{ call: Call; item: Held }> {
  const call = s.newCall();
  const [item] = await held(s, [upsert(n)], call);
  return { call, item: item! };
}

/** Another worker's upsert of contact 1 completed now, with a record id but without writing the CRM or the record's mark. */
async function completedElsewhere(s: Setup): Promise<void> {
  const other = await otherWorkerHolds(s, 1);
  await s.ledger.complete([{ key: other.item.key, token: other.item.token, result: encodeActionResult({ status: 'created', recordId: '999' }) }], s.clock.t);
  other.call.keeper.stop();
}

describe('liveClaim', () => {
  const entry = (extra: Partial<LedgerEntry>): LedgerEntry => ({
    key: 'k', fingerprint: 'f', status: 'in_progress', token: 1, leaseUntil: T0 + 1, attempts: 1, result: null, error: null,
    createdAt: T0, updatedAt: T0, owner: ownerId(), expiresAt: null, ...extra,
  });

  it('is an in-progress entry whose lease runs past now and whose owner is not a dead process on this host', () => {
    expect(liveClaim(entry({}), T0)).toBe(true);
    // A holder elsewhere is judged by its lease alone.
    expect(liveClaim(entry({ owner: formatOwner({ host: 'elsewhere', pid: deadPid(), start: '1' }) }), T0)).toBe(true);
    expect(liveClaim(entry({ owner: null }), T0)).toBe(true);
    // The lease end is inclusive: at leaseUntil the claim may be taken over.
    expect(liveClaim(entry({}), T0 + 1)).toBe(false);
    expect(liveClaim(entry({ leaseUntil: null }), T0)).toBe(false);
    expect(liveClaim(entry({ owner: formatOwner({ host: hostId(), pid: deadPid(), start: '1' }) }), T0)).toBe(false);
    expect(liveClaim(entry({ status: 'completed', leaseUntil: null }), T0)).toBe(false);
    expect(liveClaim(entry({ status: 'failed', leaseUntil: null }), T0)).toBe(false);
    expect(liveClaim(null, T0)).toBe(false);
  });
});

describe('writtenSince', () => {
  const entry = (extra: Partial<LedgerEntry>): LedgerEntry => ({
    key: 'k', fingerprint: 'f', status: 'completed', token: 1, leaseUntil: null, attempts: 1, result: encodeActionResult({ status: 'created', recordId: '7' }), error: null,
    createdAt: T0, updatedAt: T0 + 5, owner: ownerId(), expiresAt: null, ...extra,
  });

  it('is an upsert completed with a record id after the look; one completed at the look itself committed before it', () => {
    expect(writtenSince(entry({}), T0)).toBe(true);
    expect(writtenSince(entry({}), T0 + 4)).toBe(true);
    expect(writtenSince(entry({}), T0 + 5)).toBe(false);
    expect(writtenSince(entry({ updatedAt: T0 - 1 }), T0)).toBe(false);
    expect(writtenSince(entry({ status: 'failed', result: null }), T0)).toBe(false);
    expect(writtenSince(entry({ status: 'in_progress', result: null, leaseUntil: T0 + 10 }), T0)).toBe(false);
    expect(writtenSince(entry({ result: encodeActionResult({ status: 'created' }) }), T0)).toBe(false);
    expect(writtenSince(null, T0)).toBe(false);
  });
});

describe('a create whose parent the CRM reports missing', () => {
  it('ends in_flight, its claim released and nothing recorded as failed, while another live worker holds the parent\'s upsert; the retry after that write creates it once', async () => {
    const s = setup();
    const other = await otherWorkerHolds(s, 1);
    const [mine] = await held(s, [note(1)]);
    const decided = await writeStage(s.ctx, s.call, [mine!]);
    expect(decided.map((d) => d.outcome)).toEqual([{
      key: mine!.key, status: 'in_flight', attempts: 1,
      error: expect.objectContaining({ vendorCode: PARENT_IN_FLIGHT, retryable: true, message: expect.stringContaining('parent contact "c-1" is being written by another worker') }),
    }]);
    expect(s.reads.heldBy).toBe(1);
    expect(s.crm.activities('note')).toHaveLength(0);
    // Given back, not failed: claimable at once, no error stored.
    expect(await s.ledger.get(mine!.key)).toMatchObject({ status: 'in_progress', leaseUntil: T0, error: null });
    expect(await s.ledger.list({ status: 'failed' })).toEqual([]);

    const written = await writeStage(s.ctx, other.call, [other.item]);
    expect(written.map((d) => d.outcome.status)).toEqual(['created']);
    other.call.keeper.stop();
    const again = await writeStage(s.ctx, s.call, await held(s, [note(1)]));
    expect(again.map((d) => d.outcome.status)).toEqual(['created']);
    expect(s.crm.activities('note')).toHaveLength(1);
    expect((await s.ledger.get(mine!.key))!.status).toBe('completed');
  });

  it('ends in_flight when the parent\'s upsert completed after this create looked for it (its create sent again meanwhile); the retry creates it on that contact', async () => {
    let other: { call: Call; item: Held } | undefined;
    const s: Setup = setup((adapter) => ({
      ...adapter,
      // The CRM finds the contact missing and the response is lost; while the create is sent
      // again, the other worker writes the contact and settles its upsert.
      createActivities: async (...args) => {
        const results = await adapter.createActivities(...args);
        const writer = other;
        other = undefined;
        if (writer) {
          s.clock.t += 200;
          expect((await writeStage(s.ctx, writer.call, [writer.item])).map((d) => d.outcome.status)).toEqual(['created']);
          writer.call.keeper.stop();
          s.crm.failNext('lost_response', { op: 'create' });
        }
        return results;
      },
    }));
    other = await otherWorkerHolds(s, 1);
    const [mine] = await held(s, [note(1)]);
    const decided = await writeStage(s.ctx, s.call, [mine!]);
    expect(decided.map((d) => d.outcome)).toEqual([{
      key: mine!.key, status: 'in_flight', attempts: expect.any(Number),
      error: expect.objectContaining({ vendorCode: PARENT_IN_FLIGHT, retryable: true, message: expect.stringContaining('parent contact "c-1" was written by another worker after this create looked for it') }),
    }]);
    expect(s.reads.heldBy).toBe(1);
    expect(s.crm.activities('note')).toHaveLength(0);
    expect(await s.ledger.list({ status: 'failed' })).toEqual([]);
    expect(await s.ledger.get(mine!.key)).toMatchObject({ status: 'in_progress', leaseUntil: s.clock.t, error: null });

    const again = await writeStage(s.ctx, s.call, await held(s, [note(1)]));
    expect(again.map((d) => d.outcome.status)).toEqual(['created']);
    expect(s.crm.activities('note').map((a) => a.parentId)).toEqual([s.crm.records('contact')[0]!.id]);
  });

  it('counts a parent held absent from an earlier read as looked for at that read: an upsert completed since then makes the create wait', async () => {
    let writeOther: (() => Promise<void>) | undefined;
    const s = setup((adapter) => ({
      ...adapter,
      // As the HubSpot and Salesforce adapters do: a parent known absent is not read again, and one found missing is known absent.
      createActivities: async (object, writes, context) => {
        const absent = (w: ActivityWrite) => context?.absent?.has(parentMemoKey(w.parent.object, w.parent.externalId)) === true;
        const sent = writes.filter((w) => !absent(w));
        const results = sent.length > 0 ? await adapter.createActivities(object, sent, context) : [];
        sent.forEach((w, i) => results[i]!.ok || context?.absent?.add(parentMemoKey(w.parent.object, w.parent.externalId)));
        const missing = new CrmError('parent contact does not exist', { vendor: 'memory', kind: 'permanent', vendorCode: PARENT_NOT_FOUND });
        return writes.map((w) => (sent.includes(w) ? results[sent.indexOf(w)]! : { ok: false, error: missing }));
      },
      // While this call upserts contact 2, the other worker writes contact 1 and settles its upsert.
      upsertRecords: async (...args) => {
        const results = await adapter.upsertRecords(...args);
        const write = writeOther;
        writeOther = undefined;
        await write?.();
        return results;
      },
    }));
    expect((await writeStage(s.ctx, s.call, await held(s, [note(1)]))).map((d) => d.outcome.error?.vendorCode)).toEqual([PARENT_NOT_FOUND]);
    s.clock.t += 500;
    // The other worker: its own Sync (its own parent memo) on the same ledger and CRM.
    const otherCtx = engineContext({ adapter: s.crm.adapter, ledger: s.ledger, now: () => s.clock.t, sleep: async () => undefined });
    const otherCall: Call = { keeper: leaseKeeper({ ledger: s.ledger, leaseMs: otherCtx.leaseMs, clock: otherCtx.clock }), verifyAll: false };
    const [contact] = (await claimStage(otherCtx, otherCall, prepareAll(otherCtx, [upsert(1)]).planned)).held;
    writeOther = async () => {
      s.clock.t += 100;
      expect((await writeStage(otherCtx, otherCall, [contact!])).map((d) => d.outcome.status)).toEqual(['created']);
      otherCall.keeper.stop();
    };
    const creates = s.crm.calls.create;
    const decided = await writeStage(s.ctx, s.call, await held(s, [upsert(2), note(1)]));
    // Contact 1 was not read again (still held absent), and yet the note waits: it was written after the read that found it absent.
    expect(s.crm.calls.create).toBe(creates);
    expect(decided.map((d) => [d.outcome.status, d.outcome.error?.vendorCode])).toEqual([['created', undefined], ['in_flight', PARENT_IN_FLIGHT]]);
    expect(await s.ledger.list({ status: 'failed' })).toEqual([]);
  });

  it('reads the holders of every such create of a settle at once, and only theirs: one held contact, one absent', async () => {
    const s = setup();
    const other = await otherWorkerHolds(s, 1);
    const decided = await writeStage(s.ctx, s.call, await held(s, [note(1), note(2)]));
    expect(Object.fromEntries(decided.map((d) => [d.item.index, [d.outcome.status, d.outcome.error?.vendorCode]]))).toEqual({
      0: ['in_flight', PARENT_IN_FLIGHT], 1: ['failed', PARENT_NOT_FOUND],
    });
    expect(s.reads.heldBy).toBe(1);
    other.call.keeper.stop();
  });

  it('costs no holder read when the parent exists', async () => {
    const s = setup();
    await writeStage(s.ctx, s.call, await held(s, [upsert(1)]));
    const decided = await writeStage(s.ctx, s.call, await held(s, [note(1)]));
    expect(decided.map((d) => d.outcome.status)).toEqual(['created']);
    expect(s.reads.heldBy).toBe(0);
  });

  it.each([
    ['nobody holds the parent\'s upsert', async () => undefined],
    ['the holder\'s lease ran out', async (s: Setup) => {
      (await otherWorkerHolds(s, 1)).call.keeper.stop();
      s.clock.t += s.ctx.leaseMs;
    }],
    ['the holder is a dead process on this host', async (s: Setup) => {
      const { planned } = prepareAll(s.ctx, [upsert(1)]);
      const contact = forClaim(s.ctx, planned[0]!);
      const owner = formatOwner({ host: hostId(), pid: deadPid(), start: '1' });
      await s.ledger.claim([{ key: contact.key, fingerprint: contact.fingerprint, leaseMs: s.ctx.leaseMs, owner, holds: holderIdOf(contact.markId!) }], s.clock.t);
    }],
    ['the parent\'s upsert was given back (nothing written)', async (s: Setup) => {
      const other = await otherWorkerHolds(s, 1);
      await s.ledger.release([{ key: other.item.key, token: other.item.token }], s.clock.t);
      other.call.keeper.stop();
    }],
    // Completed with its record's id but no mark, as if the record was deleted in the CRM since.
    ['the parent\'s upsert completed before this create looked for it (the record deleted in the CRM since)', async (s: Setup) => {
      await completedElsewhere(s);
      s.clock.t += 1;
    }],
    ['the parent\'s upsert completed at the very time this create looked for it (the record deleted in the CRM since)', completedElsewhere],
  ])('stays failed as parent-missing, retryable, when %s', async (_name, arrange) => {
    const s = setup();
    await arrange(s);
    const [mine] = await held(s, [note(1)]);
    const decided = await writeStage(s.ctx, s.call, [mine!]);
    expect(decided.map((d) => [d.outcome.status, d.outcome.error?.vendorCode, d.outcome.error?.retryable])).toEqual([['failed', PARENT_NOT_FOUND, false]]);
    expect(s.reads.heldBy).toBe(1);
    expect((await s.ledger.get(mine!.key))!.status).toBe('failed');
    expect(s.crm.activities('note')).toHaveLength(0);
  });
});
