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
 * host: someone is alive to write it. A holder whose response was lost keeps its claim (renewed)
 * while it sends again, so it counts as held until it knows.
 *
 * It counts as held too when it completed after this create's batch looked the parent up: the
 * CRM answered "missing" before that write committed. The batch may take long between the look
 * and this check (its own create lost its response and was sent again, a backoff, a lookup), and
 * the holder may settle meanwhile; what counts is what the look could have seen. The look's time
 * is the ledger time before the batch's parent read, or before the earlier read a held absence
 * comes from (parents.ts). The holder records its completion after the CRM answered its write, so
 * a completion stamped before the look committed before the look reached the CRM, unless the two
 * workers' estimates of the ledger's time differ by more than a CRM round trip (they differ by at
 * most a ledger round trip: ledger/clock.ts). A parent written before the look and missing now
 * was deleted in the CRM since.
 *
 * The create's claim is then released (nothing was written for it, nothing is recorded as failed)
 * and the caller retries it later, as any `in_flight`; by then the parent's mark carries its CRM
 * id. A parent nobody holds (absent; its upsert completed before the look, failed or given back;
 * its lease run out; its owner dead) leaves the create failed as before.
 */
import { CrmError, CrmErrorKind } from '../errors.js';
import type { LedgerEntry } from '../ledger/types.js';
import { isDeadLocalOwner } from '../owner.js';
import { PARENT_NOT_FOUND } from './defer.js';
import { decodeActionResult } from './payloads.js';
import type { Decided, EngineContext } from './types.js';

/** The vendor code of a create that waits for the worker writing its parent (its outcome is `in_flight`). */
export const PARENT_IN_FLIGHT = 'PARENT_IN_FLIGHT';

/** The holder mark of the record whose "last written" mark is `markId`: the key of the claim writing it. */
export const holderIdOf = (markId: string): string => `h1:${markId}`;

/** A claim someone is alive to finish: in progress, its lease running at `now` (ledger time), its owner not a dead local process. */
export const liveClaim = (entry: LedgerEntry | null, now: number): boolean =>
  entry !== null && entry.status === 'in_progress' && (entry.leaseUntil ?? 0) > now && !isDeadLocalOwner(entry.owner);

/**
 * An upsert completed, with the record's id, after `since` (ledger time): its write may have
 * committed after a look at `since`. One stamped at `since` itself committed before it.
 */
export const writtenSince = (entry: LedgerEntry | null, since: number): boolean =>
  entry !== null && entry.status === 'completed' && entry.updatedAt > since && decodeActionResult(entry.result)?.recordId !== undefined;

const parentMissing = (d: Decided): boolean =>
  d.outcome.status === 'failed' && d.outcome.error?.vendorCode === PARENT_NOT_FOUND && d.item.parentMarkId !== undefined;

function waiting(ctx: EngineContext, d: Decided, written: boolean): Decided {
  const { object, externalId } = d.item.action.target!;
  const parent = `parent ${object} ${JSON.stringify(externalId)}`;
  const message = written
    ? `${parent} was written by another worker after this create looked for it: this create was not written; retry it under the same key`
    : `${parent} is being written by another worker: this create was not written and waits for it; retry it under the same key`;
  const error = new CrmError(message, { vendor: ctx.adapter.name, kind: CrmErrorKind.transient, vendorCode: PARENT_IN_FLIGHT });
  return { item: d.item, outcome: { key: d.outcome.key, status: 'in_flight', error: error.toJSON(), attempts: d.outcome.attempts } };
}

/**
 * The parent-missing failures among `failed` whose parent another live worker is writing, or
 * wrote after `lookedAt(d)` (ledger time: when the parent was looked up for `d`), each mapped to
 * its `in_flight` outcome. One ledger read, and only when some create failed so.
 */
export async function heldParents(ctx: EngineContext, failed: readonly Decided[], lookedAt: (d: Decided) => number): Promise<Map<Decided, Decided>> {
  const missing = failed.filter(parentMissing);
  const found = new Map<Decided, Decided>();
  if (missing.length === 0 || !ctx.ledger.heldBy) return found;
  const ids = [...new Set(missing.map((d) => holderIdOf(d.item.parentMarkId!)))];
  const entries = await ctx.ledger.heldBy(ids);
  const now = await ctx.clock.now();
  const holders = new Map(ids.map((id, i) => [id, entries[i] ?? null]));
  for (const d of missing) {
    const entry = holders.get(holderIdOf(d.item.parentMarkId!))!;
    if (liveClaim(entry, now)) found.set(d, waiting(ctx, d, false));
    else if (writtenSince(entry, lookedAt(d))) found.set(d, waiting(ctx, d, true));
  }
  return found;
}
