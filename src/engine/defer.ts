/**
 * Stage 5b, defer (walks only: `applyEach`). Activities routinely arrive before their parent: a
 * webhook for the note before the one for its contact, a list whose contacts come later, workers
 * that share a list and write each other's parents. A create whose parent nothing has shown this
 * Sync yet (no CRM id in the parent's mark, none in this Sync's memo, no upsert of it in this
 * call) would cost a parent read that, in those cases, mostly finds nothing, and then fail as
 * parent-missing. The walk holds such a create back instead: its claim is failed as surely
 * unwritten (retryable under the same key with no lookup first, and `retry-failed` finds it if
 * the process dies before the walk sends it again), and the walk sends it again once its parent is
 * known to this Sync (then with no read at all) or at its end, when its claim reads the parent's
 * mark again (another worker may have written the parent meanwhile). What is still unknown then
 * is read from the CRM together, in full batches.
 *
 * A create's links count as its parent does: held back while one of them is not known to this
 * Sync (a link has no mark to read, so a record written by another process is read at the end).
 *
 * Not held back: keyless creates (their dedupe-window slot is part of the call), claims taken
 * over from another holder (their create may have reached the CRM: they go on to their lookup),
 * and anything when the Sync does not retry failed entries (the walk's second claim would not take
 * them).
 */
import { parentMemoKey } from '../adapter.js';
import { CrmError, CrmErrorKind } from '../errors.js';
import type { Decided, EngineContext, Held, Planned } from './types.js';

/** The vendor code adapters give an activity whose parent record does not exist. */
export const PARENT_NOT_FOUND = 'PARENT_NOT_FOUND';
/** The vendor code adapters give a write one of whose linked records does not exist (the record itself may be written). */
export const LINK_NOT_FOUND = 'LINK_NOT_FOUND';
/** The vendor code of a create held back until its parent is known. */
export const PARENT_DEFERRED = 'PARENT_DEFERRED';

/** The memo key of an item's parent (only creates have a target). */
export const parentOf = (item: Planned): string | undefined =>
  item.action.target ? parentMemoKey(item.action.target.object, item.action.target.externalId) : undefined;

/** The memo keys of the records an item's create needs: its target, then its links. */
export const refsOf = (item: Planned): string[] => [
  ...(item.action.target ? [parentMemoKey(item.action.target.object, item.action.target.externalId)] : []),
  ...(item.action.op === 'create' ? (item.action.links ?? []).map((l) => parentMemoKey(l.object, l.externalId)) : []),
];

/** The parents among these that this Sync knows the CRM id of right now. */
export const knownParents = (ctx: EngineContext, keys: Iterable<string>): ReadonlySet<string> => new Set(ctx.parents.seed(keys).memo.keys());

export function deferStage(ctx: EngineContext, items: readonly Held[]): { pass: Held[]; deferred: Decided[] } {
  if (!ctx.retryFailed) return { pass: [...items], deferred: [] };
  const upserted = new Set<string>();
  const parents = new Set<string>();
  for (const item of items) {
    if (item.op === 'upsert' && item.action.externalId !== undefined) upserted.add(parentMemoKey(item.object, item.action.externalId));
    for (const ref of refsOf(item)) parents.add(ref);
  }
  if (parents.size === 0) return { pass: [...items], deferred: [] };
  const known = knownParents(ctx, parents);
  const pass: Held[] = [];
  const deferred: Decided[] = [];
  // The target's CRM id may also come from its mark (read with the claim); a link's only from this Sync.
  const isKnown = (item: Held, ref: string, i: number) => known.has(ref) || upserted.has(ref) || (i === 0 && item.ledgerParentId !== undefined);
  for (const item of items) {
    const refs = refsOf(item);
    const missing = item.keyless || item.recovered ? -1 : refs.findIndex((ref, i) => !isKnown(item, ref, i));
    if (missing < 0) {
      pass.push(item);
      continue;
    }
    const ref = missing === 0 ? item.action.target! : item.action.links![missing - 1]!;
    const role = missing === 0 ? 'parent' : 'linked';
    const error = new CrmError(`${role} ${ref.object} ${JSON.stringify(ref.externalId)} is not known yet: the create was held back until it is, and not sent`, {
      vendor: ctx.adapter.name, kind: CrmErrorKind.transient, vendorCode: PARENT_DEFERRED,
    });
    deferred.push({ item, outcome: { key: item.key, status: 'failed', error: error.toJSON(), attempts: 0 } });
  }
  return { pass, deferred };
}
