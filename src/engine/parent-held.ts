/**
 * A create refused as parent-missing while another live worker is writing that parent ends
 * `in_flight`, not `failed`: workers that share a list (or webhooks delivered close together)
 * routinely send a note while the worker holding its contact's upsert has not written it yet, and
 * that is no failure to alert on.
 *
 * Keys are per event, so the note cannot name its contact's upsert key. Every upsert's claim
 * names its record instead (`holds`: the record's holder mark, in the claim's own round trip), and
 * only when the CRM reported a parent missing is that mark read (`heldBy`, one read for all such
 * creates of a settle, none on the common path). The parent's upsert counts as held when its entry
 * is in progress, its lease runs on the ledger's clock and its owner is not a dead process on this
 * host: someone is alive to write it. The create's claim is then released (nothing was written for
 * it, nothing is recorded as failed) and the caller retries it later, as any `in_flight`; by then
 * the parent's mark carries its CRM id. A parent nobody holds (absent, its upsert completed,
 * failed or given back, its lease run out, its owner dead) leaves the create failed as before.
 */
import { CrmError, CrmErrorKind } from '../errors.js';
import type { LedgerEntry } from '../ledger/types.js';
import { isDeadLocalOwner } from '../owner.js';
import { PARENT_NOT_FOUND } from './defer.js';
import type { Decided, EngineContext } from './types.js';

/** The vendor code of a create that waits for the worker writing its parent (its outcome is `in_flight`). */
export const PARENT_IN_FLIGHT = 'PARENT_IN_FLIGHT';

/** The holder mark of the record whose "last written" mark is `markId`: the key of the claim writing it. */
export const holderIdOf = (markId: string): string => `h1:${markId}`;

/** A claim someone is alive to finish: in progress, its lease running at `now` (ledger time), its owner not a dead local process. */
export const liveClaim = (entry: LedgerEntry | null, now: number): boolean =>
  entry !== null && entry.status === 'in_progress' && (entry.leaseUntil ?? 0) > now && !isDeadLocalOwner(entry.owner);

const parentMissing = (d: Decided): boolean =>
  d.outcome.status === 'failed' && d.outcome.error?.vendorCode === PARENT_NOT_FOUND && d.item.parentMarkId !== undefined;

function waiting(ctx: EngineContext, d: Decided): Decided {
  const { object, externalId } = d.item.action.target!;
  const error = new CrmError(`parent ${object} ${JSON.stringify(externalId)} is being written by another worker: this create was not written and waits for it; retry it under the same key`, {
    vendor: ctx.adapter.name, kind: CrmErrorKind.transient, vendorCode: PARENT_IN_FLIGHT,
  });
  return { item: d.item, outcome: { key: d.outcome.key, status: 'in_flight', error: error.toJSON(), attempts: d.outcome.attempts } };
}

/**
 * The parent-missing failures among `failed` whose parent another live worker is writing, each
 * mapped to its `in_flight` outcome. One ledger read, and only when some create failed so.
 */
export async function heldParents(ctx: EngineContext, failed: readonly Decided[]): Promise<Map<Decided, Decided>> {
  const missing = failed.filter(parentMissing);
  const found = new Map<Decided, Decided>();
  if (missing.length === 0 || !ctx.ledger.heldBy) return found;
  const ids = [...new Set(missing.map((d) => holderIdOf(d.item.parentMarkId!)))];
  const entries = await ctx.ledger.heldBy(ids);
  const now = await ctx.clock.now();
  const held = new Set(ids.filter((_, i) => liveClaim(entries[i] ?? null, now)));
  for (const d of missing) if (held.has(holderIdOf(d.item.parentMarkId!))) found.set(d, waiting(ctx, d));
  return found;
}
