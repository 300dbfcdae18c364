/**
 * Stage 6 and 8, plan and settle: the items to write are planned into batches (by object and op,
 * writes to one record coalesced, cut at the adapter's maximum; record upserts before the
 * activities that attach to them), each batch is sent (send.ts) and its results settled: written
 * -> completed, refused credentials -> released (nothing was written), other failures -> failed,
 * a lost claim -> `in_flight` (another worker holds it). Window slots are confirmed or released
 * in the same pass.
 */
import { parentMemoKey } from '../adapter.js';
import { planBatches, runPool, type Batch } from '../batcher.js';
import type { OutcomeStatus } from '../outcome.js';
import { isLost } from './round.js';
import { sendGroups } from './send.js';
import { completeEntries, failEntries, releaseEntries } from './settle.js';
import { WRITTEN, type Call, type Decided, type EngineContext, type Held } from './types.js';

/** Parents upserted earlier in this call need no read: their ids were just confirmed by the CRM. */
function seedMemo(batch: Batch<Held>, written: ReadonlyMap<string, string>): Map<string, string> {
  const memo = new Map<string, string>();
  for (const group of batch.groups) {
    const parent = group[0]!.action.target;
    const id = parent && written.get(parentMemoKey(parent.object, parent.externalId));
    if (id) memo.set(parentMemoKey(parent.object, parent.externalId), id);
  }
  return memo;
}

async function writeBatch(ctx: EngineContext, call: Call, batch: Batch<Held>, written: ReadonlyMap<string, string>): Promise<Decided[]> {
  const { results, attempts, ambiguous } = await sendGroups(ctx, call, batch, batch.groups, seedMemo(batch, written), false);
  const out = { done: [] as Decided[], failed: [] as Decided[], refused: [] as Decided[], lost: [] as Decided[] };
  batch.groups.forEach((group, g) => {
    const r = results[g]!;
    group.forEach((item, position) => {
      if (isLost(r)) return void out.lost.push({ item, outcome: { key: item.key, status: 'in_flight', attempts } });
      if (r.ok) {
        // An activity belongs to its action alone (its key is on it): finding it means this action created it.
        const status: OutcomeStatus = batch.op === 'create' || (r.created && position === 0) ? 'created' : 'updated';
        return void out.done.push({ item, outcome: { key: item.key, status, recordId: r.recordId, attempts } });
      }
      const decided = { item, outcome: { key: item.key, status: 'failed' as const, error: r.error.toJSON(), attempts } };
      // Refused credentials wrote nothing: give the claims back instead of recording a failure.
      (r.error.kind === 'auth' ? out.refused : out.failed).push(decided);
    });
  });
  await completeEntries(ctx, call, out.done);
  await failEntries(ctx, call, out.failed, ambiguous);
  // Lost claims belong to another worker now; the still-held ones of the same groups go back.
  const stillHeld = out.lost.filter((d) => !call.keeper.lost(d.item.key));
  await releaseEntries(ctx, call, [...out.refused, ...stillHeld].map((d) => d.item as Held));
  call.keeper.drop(out.lost.map((d) => d.item.key));
  const all = [...out.done, ...out.failed, ...out.refused, ...out.lost];
  const slotted = all.filter((d) => (d.item as Held).slot);
  call.keeper.dropSlots(slotted.map((d) => (d.item as Held).slot!.id));
  await ctx.window.settle(slotted.map((d) => ({ slot: (d.item as Held).slot!, written: d.outcome.status !== 'failed' && d.outcome.status !== 'in_flight' })), await ctx.clock.now());
  return all;
}

export async function writeStage(ctx: EngineContext, call: Call, items: readonly Held[]): Promise<Decided[]> {
  const batches = planBatches(items, ctx.adapter.capabilities.maxBatch);
  const written = new Map<string, string>();
  const decided: Decided[] = [];
  for (const op of ['upsert', 'create'] as const) {
    const start = decided.length;
    await runPool(batches.filter((b) => b.op === op).map((b) => async () => void decided.push(...(await writeBatch(ctx, call, b, written)))), ctx.concurrency);
    if (op !== 'upsert') continue;
    for (const d of decided.slice(start)) if (d.outcome.recordId && WRITTEN.has(d.outcome.status)) written.set(parentMemoKey(d.item.object, d.item.action.externalId!), d.outcome.recordId);
  }
  return decided;
}
