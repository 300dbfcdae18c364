/**
 * Stage 6 and 8, plan and settle: the items to write are planned into batches (by object and op,
 * writes to one record coalesced, cut at the adapter's maximum; record upserts before the
 * activities that attach to them), each batch is sent (send.ts) and its results settled: written
 * -> completed, refused credentials -> released (nothing was written), other failures -> failed,
 * a lost claim -> `in_flight` (another worker holds it), a create whose missing parent another
 * live worker is writing (or wrote after it was looked up) -> `in_flight`, released
 * (parent-held.ts). Window slots are confirmed or released in the same pass.
 */
import { parentMemoKey } from '../adapter.js';
import { planBatches, type Batch } from '../batcher.js';
import { ErrorCode, type CrmError } from '../errors.js';
import { bulkStage } from './bulk.js';
import { PARENT_NOT_FOUND, parentOf, refsOf } from './defer.js';
import { heldParents } from './parent-held.js';
import { isLost, type GroupResult, type Suspicion } from './round.js';
import { sendGroups, type BatchParents } from './send.js';
import { completeEntries, failEntries, giveBack, releaseEntries } from './settle.js';
import { writtenGroup } from './written.js';
import { WRITTEN, type Call, type Decided, type EngineContext, type Held } from './types.js';

/** The memo key of a create group's parent. */
const parentKeyOf = (group: Held[]): string | undefined => parentOf(group[0]!);

/**
 * Parents upserted earlier in this call need no read: their ids were just confirmed by the CRM;
 * nor do parents this Sync wrote or read a moment ago, nor parents whose upsert this ledger
 * confirmed (the claim read their CRM id from the record's mark: `fromLedger`, to be confirmed
 * by the create itself), unless the CRM said that id is gone. Parents it found absent a moment
 * ago are not read again when nothing else in the batch needs a read: their activities fail as
 * parent-missing at once (retryable later), without a request.
 */
function seedParents(ctx: EngineContext, batch: Batch<Held>, written: ReadonlyMap<string, string>): { parents: Required<BatchParents>; fromLedger: Set<string> } {
  const keys = new Set<string>();
  const stored = new Map<string, string>();
  for (const group of batch.groups) {
    // Linked records are looked up as parents are: one read per object and batch, or none when known.
    for (const item of group) for (const link of item.action.links ?? []) keys.add(parentMemoKey(link.object, link.externalId));
    const key = parentKeyOf(group);
    if (key === undefined) continue;
    keys.add(key);
    if (group[0]!.ledgerParentId) stored.set(key, group[0]!.ledgerParentId);
  }
  const seeded = ctx.parents.seed(keys);
  const fromLedger = new Set<string>();
  for (const key of keys) {
    const id = written.get(key);
    if (id) seeded.memo.set(key, id);
    else if (!seeded.memo.has(key) && stored.has(key) && !ctx.parents.isGone(key, stored.get(key)!)) {
      seeded.memo.set(key, stored.get(key)!);
      fromLedger.add(key);
    }
    if (seeded.memo.has(key)) seeded.absent.delete(key);
  }
  // A batch that reads some parent anyway reads the held ones in the same request, for free.
  for (const key of keys) if (!seeded.memo.has(key) && !seeded.absent.has(key)) seeded.absent.clear();
  return { parents: seeded, fromLedger };
}

/**
 * What the batch learnt about parents, kept for this Sync's later calls; `lookedAt`: when it started
 * (its reads came after). A known id the adapter dropped (the CRM said that record is gone) is
 * forgotten, or replaced by the id it read again; an upsert batch learns only that (its links).
 */
function learnParents(ctx: EngineContext, op: Batch<Held>['op'], parents: Required<BatchParents>, seeded: { memo: ReadonlyMap<string, string>; absent: ReadonlySet<string> }, lookedAt: number): void {
  for (const [key, id] of seeded.memo) if (parents.memo.get(key) !== id) ctx.parents.gone(key, id);
  for (const [key, id] of parents.memo) {
    const before = seeded.memo.get(key);
    if (before === undefined ? op === 'create' : before !== id) ctx.parents.known(key, id);
  }
  if (op === 'create') for (const key of parents.absent) if (!seeded.absent.has(key)) ctx.parents.missing(key, lookedAt);
}

/**
 * Whether a failed group may have reached the CRM. One failed as parent-missing whose parent was
 * never found in this batch (the memo only grows, so no attempt had its id) was never sent: only
 * what an earlier holder left can have written it, whatever else went wrong in the batch. One
 * failed as RECORD_GONE was answered that no record holds its external id: nothing of it is in the
 * CRM, and its record's mark stays (the next write to it is still known as a record this ledger wrote).
 */
function possiblyWritten(batch: Batch<Held>, group: Held[], error: CrmError, parents: Required<BatchParents>, suspicion: Suspicion): boolean {
  if (error.vendorCode === ErrorCode.recordGone) return false;
  const parent = parentKeyOf(group);
  const neverSent = batch.op === 'create' && error.vendorCode === PARENT_NOT_FOUND && parent !== undefined && parents.absent.has(parent);
  return (neverSent ? suspicion.inherited : suspicion.suspect).has(group);
}

/** An event the ledger may not remember: without an event time, or older than its birth (plus the margin). */
function predatesLedger(item: Held, call: Call): boolean {
  if (call.verifyBefore === undefined || call.verifyBefore === -Infinity) return false;
  return item.action.occurredAt === undefined || item.at < call.verifyBefore;
}

/** A batch's answered groups, sorted by how each item is settled. */
interface Sorted {
  done: Decided[];
  failed: Decided[];
  unsent: Decided[];
  refused: Decided[];
  lost: Decided[];
  /** Creates waiting for the live worker writing their parent (released, `in_flight`). */
  waiting: Decided[];
  /** When each failed create's parent was looked up, ledger time (parent-held.ts). */
  lookedAt: Map<Decided, number>;
}

/**
 * The groups of a create batch the CRM refused on a parent id taken from the ledger, or on an id
 * of one of its parents or links the adapter dropped from the memo (the CRM said that record is
 * gone): the record may have been deleted (or merged away) in the CRM since it was written. Any
 * permanent refusal on a ledger id counts: CRMs word a dangling reference in their own ways, and a
 * refusal for another reason costs one more request that is refused again.
 */
function refusedOnStaleParent(batch: Batch<Held>, results: readonly GroupResult[], fromLedger: ReadonlySet<string>, dropped: (key: string) => boolean): number[] {
  if (batch.op !== 'create') return [];
  return batch.groups.flatMap((group, g) => {
    const r = results[g]!;
    const key = parentKeyOf(group);
    const refused = !r.ok && !isLost(r) && r.error.kind === 'permanent';
    return refused && ((key !== undefined && fromLedger.has(key)) || refsOf(group[0]!).some(dropped)) ? [g] : [];
  });
}

async function sendBatch(ctx: EngineContext, call: Call, batch: Batch<Held>, written: ReadonlyMap<string, string>): Promise<Sorted> {
  const { parents, fromLedger } = seedParents(ctx, batch, written);
  const seeded = { memo: new Map(parents.memo), absent: new Set(parents.absent) };
  // The ledger's time before any parent read of this batch, and of the earlier reads its held absences come from.
  // (The claims just read the ledger's clock: its last estimate needs no round trip.)
  const startedAt = ctx.now();
  const ledgerStart = ctx.clock.peek();
  const heldAbsentAt = new Map([...seeded.absent].map((key) => [key, ledgerStart - (startedAt - (ctx.parents.absentSince(key) ?? startedAt))]));
  // After a takeover the dead worker's create may have committed, and a ledger that cannot vouch
  // for its history (or for events older than itself) may have forgotten one: look before creating.
  const inheritedAtStart = new Set(batch.groups.filter((g) => call.verifyAll || g[0]!.recovered || (batch.op === 'create' && g.some((item) => predatesLedger(item, call)))));
  const inherited = new Set(inheritedAtStart);
  const suspicion: Suspicion = { suspect: new Set(inherited), inherited, heldAbsent: seeded.absent };
  const sent = await sendGroups(ctx, call, batch, batch.groups, parents, suspicion);
  const { results } = sent;
  let { attempts } = sent;
  // A parent id from the ledger the CRM refused, or one the CRM said is gone: forget it and send
  // those groups once more, their parents read from the CRM. A lookup on the refused id proved
  // nothing, so what an earlier holder left is suspect again (looked up on the parent the CRM names).
  const stale = refusedOnStaleParent(batch, results, fromLedger, (key) => seeded.memo.has(key) && !parents.memo.has(key));
  if (stale.length > 0) {
    for (const g of stale) {
      const key = parentKeyOf(batch.groups[g]!)!;
      parents.memo.delete(key);
      fromLedger.delete(key);
      if (inheritedAtStart.has(batch.groups[g]!)) {
        inherited.add(batch.groups[g]!);
        suspicion.suspect.add(batch.groups[g]!);
      }
    }
    const again = await sendGroups(ctx, call, batch, stale.map((g) => batch.groups[g]!), parents, suspicion);
    stale.forEach((g, j) => (results[g] = again.results[j]!));
    attempts += again.attempts;
  }
  learnParents(ctx, batch.op, parents, seeded, startedAt);
  const out: Sorted = { done: [], failed: [], unsent: [], refused: [], lost: [], waiting: [], lookedAt: new Map() };
  batch.groups.forEach((group, g) => {
    const r = results[g]!;
    if (isLost(r)) return void out.lost.push(...group.map((item) => ({ item, outcome: { key: item.key, status: 'in_flight' as const, attempts } })));
    if (r.ok) return void out.done.push(...writtenGroup(batch.op, group, r, attempts));
    group.forEach((item) => {
      const decided = { item, outcome: { key: item.key, status: 'failed' as const, error: r.error.toJSON(), attempts } };
      if (batch.op === 'create') out.lookedAt.set(decided, heldAbsentAt.get(parentKeyOf(group) ?? '') ?? ledgerStart);
      // Refused credentials wrote nothing: give the claims back instead of recording a failure.
      (r.error.kind === 'auth' ? out.refused : possiblyWritten(batch, group, r.error, parents, suspicion) ? out.failed : out.unsent).push(decided);
    });
  });
  return out;
}

/** Parent-missing failures whose parent another live worker is writing, or wrote since the look, wait for it instead. */
async function waitForHeldParents(ctx: EngineContext, out: Sorted): Promise<Sorted> {
  const held = await heldParents(ctx, [...out.failed, ...out.unsent], (d) => out.lookedAt.get(d)!);
  if (held.size === 0) return out;
  const keep = (ds: Decided[]) => ds.filter((d) => !held.has(d));
  return { ...out, failed: keep(out.failed), unsent: keep(out.unsent), waiting: [...out.waiting, ...held.values()] };
}

async function settleBatch(ctx: EngineContext, call: Call, sorted: Sorted): Promise<Decided[]> {
  const out = await waitForHeldParents(ctx, sorted);
  await completeEntries(ctx, call, out.done);
  await failEntries(ctx, call, out.failed, true);
  await failEntries(ctx, call, out.unsent, false);
  // Lost claims belong to another worker now; the still-held ones of the same groups go back.
  const stillHeld = out.lost.filter((d) => !call.keeper.lost(d.item.key));
  await releaseEntries(ctx, call, [...out.refused, ...stillHeld, ...out.waiting].map((d) => d.item as Held));
  call.keeper.drop(out.lost.map((d) => d.item.key));
  const all = [...out.done, ...out.failed, ...out.unsent, ...out.refused, ...out.lost, ...out.waiting];
  const slotted = all.filter((d) => (d.item as Held).slot);
  call.keeper.dropSlots(slotted.map((d) => (d.item as Held).slot!.id));
  await ctx.window.settle(slotted.map((d) => ({ slot: (d.item as Held).slot!, written: d.outcome.status !== 'failed' && d.outcome.status !== 'in_flight' })), await ctx.clock.now());
  return all;
}

/** Resolves after the I/O and timers now due: what was queued before it (the next request) goes first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Send these batches `concurrency` at a time. A batch's ledger writes do not hold its slot: the
 * slot's next request leaves first (while the budget or the CRM is the limit, the time from an
 * answer to the slot's next request is lost rate), and the batch is settled behind it, at most
 * one batch behind each slot. Everything sent is settled before this returns or throws; after a
 * failure no further batch is sent, and the claims of those never sent are released.
 */
async function writeBatches(ctx: EngineContext, call: Call, batches: readonly Batch<Held>[], written: ReadonlyMap<string, string>, decided: Decided[]): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const settle = settleTogether(ctx, call, decided, (error) => (failure ??= { error }));
  const slot = async () => {
    let behind: Promise<void> = Promise.resolve();
    try {
      while (next < batches.length && !failure) {
        const out = await sendBatch(ctx, call, batches[next++]!, written);
        await behind;
        behind = settle(out);
      }
    } catch (error) {
      // A request threw: no slot hands out another batch.
      failure ??= { error };
    } finally {
      await behind;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(ctx.concurrency, batches.length)) }, slot));
  if (failure) {
    // The claims of batches never handed to a slot go back: nothing of them was sent.
    await giveBack(ctx, call, batches.slice(next).flatMap((b) => b.groups.flat()));
    throw failure.error;
  }
}

/** The answered groups of several batches, settled as one. */
const merged = (outs: readonly Sorted[]): Sorted => ({
  done: outs.flatMap((o) => o.done),
  failed: outs.flatMap((o) => o.failed),
  unsent: outs.flatMap((o) => o.unsent),
  refused: outs.flatMap((o) => o.refused),
  lost: outs.flatMap((o) => o.lost),
  waiting: outs.flatMap((o) => o.waiting),
  lookedAt: new Map(outs.flatMap((o) => [...o.lookedAt])),
});

/**
 * Settles answered batches on the next turn, those answered by then together: one ledger round trip
 * per kind for all of them. Slots answered close together (they are, at a rate limit) share one
 * transaction instead of one each: on SQLite a complete of 400 entries costs about half of four of
 * 100, and blocks the event loop for less.
 */
function settleTogether(ctx: EngineContext, call: Call, decided: Decided[], failed: (error: unknown) => void): (out: Sorted) => Promise<void> {
  let pending: Sorted[] = [];
  let flush: Promise<void> | undefined;
  return (out) => {
    pending.push(out);
    return (flush ??= (async () => {
      await nextTurn();
      const outs = pending;
      pending = [];
      flush = undefined;
      try {
        decided.push(...(await settleBatch(ctx, call, merged(outs))));
      } catch (error) {
        failed(error);
      }
    })());
  };
}


/** Upserts by link level, lowest first (link-levels.ts): one level when no record links to another. */
function upsertLevels(ctx: EngineContext, items: readonly Held[]): Held[][] {
  const levels = new Map<number, Held[]>();
  for (const item of items) {
    if (item.op !== 'upsert') continue;
    const level = ctx.linkLevels.get(item.object) ?? 0;
    if (levels.has(level)) levels.get(level)!.push(item);
    else levels.set(level, [item]);
  }
  return [...levels.keys()].sort((a, b) => a - b).map((level) => levels.get(level)!);
}

/** The CRM ids of records this call upserted, for the creates and links that follow. */
function learnWritten(ctx: EngineContext, decided: readonly Decided[], written: Map<string, string>): void {
  for (const d of decided) {
    if (d.item.op !== 'upsert' || !d.outcome.recordId || !WRITTEN.has(d.outcome.status)) continue;
    const key = parentMemoKey(d.item.object, d.item.action.externalId!);
    if (written.has(key)) continue;
    written.set(key, d.outcome.recordId);
    ctx.parents.known(key, d.outcome.recordId);
  }
}

/**
 * Upserts level by level (each level's large groups through the bulk lane first, bulk.ts, the
 * rest in batch calls), then the creates that attach to them (the lane's first, in jobs of their own).
 */
export async function writeStage(ctx: EngineContext, call: Call, items: readonly Held[]): Promise<Decided[]> {
  const maxBatch = ctx.adapter.capabilities.maxBatch;
  const written = new Map<string, string>();
  const decided: Decided[] = [];
  const levels = upsertLevels(ctx, items);
  const creates = items.filter((i) => i.op === 'create');
  for (const [w, level] of levels.entries()) {
    try {
      const lane = await bulkStage(ctx, call, level);
      decided.push(...lane.decided);
      await writeBatches(ctx, call, planBatches(lane.rest, maxBatch), written, decided);
    } catch (error) {
      await giveBack(ctx, call, [...levels.slice(w + 1).flat(), ...creates]);
      throw error;
    }
    learnWritten(ctx, decided, written);
  }
  const lane = await bulkStage(ctx, call, creates);
  decided.push(...lane.decided);
  await writeBatches(ctx, call, planBatches(lane.rest, maxBatch), written, decided);
  return decided;
}
