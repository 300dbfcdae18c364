/**
 * Recovering create-only activities: when a create may already have happened (an ambiguous
 * failure after the request left, a takeover of a dead worker's claim or window slot, or a ledger
 * that cannot vouch for its history), those groups' keys are looked up in the CRM first
 * (read-after-write, never search alone); a found key is this action's record (`created`), and
 * only the rest is sent. A keyless create that passed over dead holders' window slots is looked up
 * by their keys too: an identical create of theirs that committed is its record. A group looked up
 * on its parent and not found is no longer suspect: it is sent without another lookup unless a
 * later failure makes it suspect again. So is a group whose parent the lookup read and found
 * absent: an activity is created attached to its parent, and a parent that does not exist has
 * nothing attached (its activity fails as parent-missing, surely unsent).
 *
 * A claim taken over from a dead process on this host is looked up no sooner than
 * DEAD_SETTLE_MS after that process's last sign of life in the ledger: its create left at most
 * SENT_FRESH_MS after it (send.ts), and a request already on its way when the process died may
 * still be committed by the CRM a moment later. Looking up before then could miss it and write
 * the activity a second time. This narrows the race to a request the CRM holds for longer; it
 * cannot close it (docs/guarantees.md).
 */
import { parentMemoKey, type ActivityWrite } from '../adapter.js';
import { extend } from '../extend.js';
import type { EngineContext } from './types.js';
import type { Round } from './round.js';

/** A create-only write leaves with its claim confirmed in the ledger at most this long before (ms; send.ts). */
export const SENT_FRESH_MS = 1_000;

/** How long after a dead holder's last sign of life its creates are looked up (ms). */
export const DEAD_SETTLE_MS = SENT_FRESH_MS + 1_500;

/** Wait until every dead holder of these groups has been silent for DEAD_SETTLE_MS (ledger time). */
async function settleDeadHolders(ctx: EngineContext, round: Round, looked: readonly number[]): Promise<void> {
  const seen = looked.flatMap((i) => round.groups[i]!.flatMap((item) => (item.deadSeenAt !== undefined ? [item.deadSeenAt] : [])));
  if (seen.length === 0) return;
  const wait = Math.max(...seen) + DEAD_SETTLE_MS - (await ctx.clock.now());
  if (wait > 0) await ctx.pause(wait);
}

/**
 * Not found on a parent the lookup resolved, or on a parent it read and found absent (not one
 * held absent from an earlier read, which a write since may have made): nothing of it is in the CRM.
 */
const nothingAttached = (round: Round, parent: string): boolean =>
  round.context.memo.has(parent) || (round.context.absent?.has(parent) === true && !round.suspicion.heldAbsent.has(parent));

/** The keys group `i` is looked up by: its own (unless the CRM upserts activities on it) and its dead window holders'. */
function keysOf(ctx: EngineContext, round: Round, i: number): string[] {
  const own = ctx.adapter.capabilities.nativeActivityUpsert ? [] : [round.writes[i]!.key];
  return [...own, ...(round.groups[i]![0]!.deadHolderKeys ?? [])];
}

/** Returns false when nothing is left to send. */
export async function recoverCreated(ctx: EngineContext, round: Round, call: <T>(fn: () => Promise<T>) => Promise<T>): Promise<boolean> {
  const { suspect, inherited } = round.suspicion;
  const looked = round.batch.op === 'create' ? round.open().filter((i) => suspect.has(round.groups[i]!) && keysOf(ctx, round, i).length > 0) : [];
  if (looked.length === 0) return round.open().length > 0;
  await settleDeadHolders(ctx, round, looked);
  const lookups = looked.flatMap((i) => keysOf(ctx, round, i).map((key) => extend(round.writes[i] as ActivityWrite, { key })));
  const found = await call(() => ctx.adapter.findActivities(round.batch.object, lookups, round.context));
  for (const i of looked) {
    const write = round.writes[i] as ActivityWrite;
    const recordId = keysOf(ctx, round, i).map((key) => found.get(key)).find((id) => id !== undefined);
    if (recordId) round.results[i] = { ok: true, recordId, created: true };
    else if (nothingAttached(round, parentMemoKey(write.parent.object, write.parent.externalId))) {
      suspect.delete(round.groups[i]!);
      inherited.delete(round.groups[i]!);
    }
  }
  return round.open().length > 0;
}
