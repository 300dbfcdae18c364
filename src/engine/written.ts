/**
 * The outcomes of a group of items (one write) the CRM answered written, for any lane that writes
 * them (batch calls, bulk jobs).
 */
import type { Batch } from '../batcher.js';
import type { OutcomeStatus } from '../outcome.js';
import { leftReport, leftToNewer, leftWhole } from './order.js';
import { decodeMark } from './payloads.js';
import type { Decided, Held } from './types.js';

/**
 * A record upsert the CRM answered created although this ledger holds another CRM id for the
 * record (the mark its last confirmed write left, read with the claim of any of the group's
 * writes): the record was deleted in the CRM since and has been created again.
 */
function recreatedFrom(group: readonly Held[], recordId: string): { previousId: string } | undefined {
  for (const item of group) {
    const previousId = item.mark === undefined ? null : decodeMark(item.mark).id;
    if (previousId !== null && previousId !== recordId) return { previousId };
  }
  return undefined;
}

/**
 * The outcomes of a group the CRM answered written. Of several actions on one record, those whose
 * every value a newer one replaced are superseded; the first action that stands reports the record
 * created. An activity belongs to its action alone (its key is on it): finding it means this
 * action created it.
 */
export function writtenGroup(op: Batch<Held>['op'], group: readonly Held[], r: { recordId: string; created: boolean }, attempts: number): Decided[] {
  const left = op === 'upsert' ? leftToNewer(group) : new Map<Held, never>();
  const creator = group.findIndex((item) => !leftWhole(item, left.get(item)));
  return group.map((item, position) => {
    const status: OutcomeStatus = op === 'create' || (r.created && position === creator) ? 'created' : leftWhole(item, left.get(item)) ? 'superseded' : 'updated';
    const again = op === 'upsert' && status === 'created' ? recreatedFrom(group, r.recordId) : undefined;
    return { item, outcome: { key: item.key, status, recordId: r.recordId, ...(again ? { recreated: again } : {}), ...leftReport(left.get(item)), attempts } };
  });
}
