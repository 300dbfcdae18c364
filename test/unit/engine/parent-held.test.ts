/**
 * A create refused as parent-missing while another live worker holds the parent's upsert ends
 * `in_flight` with its claim released (parent-held.ts); one whose parent nobody is writing (not
 * held, a lease run out, a dead holder on this host, an upsert already settled) stays the
 * retryable parent-missing failure. The holder is read only after such a refusal.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { claimStage } from '../../../src/engine/claim.js';
import { engineContext } from '../../../src/engine/create-sync.js';
import { PARENT_NOT_FOUND } from '../../../src/engine/defer.js';
import { leaseKeeper } from '../../../src/engine/lease-keeper.js';
import { holderIdOf, liveClaim, PARENT_IN_FLIGHT } from '../../../src/engine/parent-held.js';
import { forClaim, prepareAll } from '../../../src/engine/prepare.js';
import type { Call, EngineContext, Held } from '../../../src/engine/types.js';
import { writeStage } from '../../../src/engine/write.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend, LedgerEntry } from '../../../src/ledger/types.js';
import { formatOwner, hostId, ownerId } from '../../../src/owner.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

const upsert = (n: number) => ({ source: 's', eventId: `e${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email: `p${n}@example.com` } });
const note = (n: number) => ({ source: 's', eventId: `n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `c-${n}` }, fields: { body: `note ${n}` } });

const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

function setup() {
  const crm = memoryCrm();
  const base = memoryLedger();
  const reads = { heldBy: 0 };
  const ledger: LedgerBackend = { ...base, heldBy: (ids) => ((reads.heldBy += 1), base.heldBy!(ids)) };
  const clock = { t: T0 };
  const ctx: EngineContext = engineContext({ adapter: crm.adapter, ledger, now: () => clock.t, sleep: async () => undefined, verifyCreates: 'after-failure', retry: { minTimeoutMs: 1, maxTimeoutMs: 1 } });
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
