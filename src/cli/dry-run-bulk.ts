/**
 * What `sync --dry-run` says about the bulk lane: which objects' upserts a run would send through
 * the adapter's bulk jobs instead of the batch requests each line previews. A run
 * sends the file in calls of up to 50,000 actions that need a write (with the lane in use); in a
 * call, an object's upserts (one per record) go through a job under `always`, or under `auto`
 * once they reach the lane's `minRecords`. The plan counts the same way, call by call.
 */
import type { BulkLane } from '../adapter.js';
import { DEFAULT_BULK_CALL } from '../engine/apply-each.js';
import type { BulkMode } from '../engine/types.js';

/** One object's upserts that would go through jobs: how many, in how many calls (a job each, or more when one is too large to upload). */
export interface BulkPlanEntry {
  upserts: number;
  calls: number;
}

export interface BulkPlan {
  /** An action that would be written (its verdict sends it). */
  write(action: { op: string; object: string; externalId?: string }): void;
  /** Objects whose upserts would go through jobs, by logical object name. */
  finish(): Record<string, BulkPlanEntry>;
}

export function bulkPlan(lane: BulkLane | undefined, mode: BulkMode, batchSize: number): BulkPlan {
  const plan: Record<string, BulkPlanEntry> = {};
  const callSize = Math.max(batchSize, DEFAULT_BULK_CALL);
  // Records per object in the call being filled: writes to one record are one row.
  let call = new Map<string, Set<string>>();
  let writes = 0;
  const endCall = () => {
    for (const [object, records] of call) {
      const taken = mode === 'always' || records.size >= lane!.minRecords;
      if (!taken) continue;
      const entry = (plan[object] ??= { upserts: 0, calls: 0 });
      entry.upserts += records.size;
      entry.calls += 1;
    }
    call = new Map();
    writes = 0;
  };
  const off = lane === undefined || mode === 'never';
  return {
    write(action) {
      if (off) return;
      writes += 1;
      if (action.op === 'upsert' && action.externalId !== undefined && lane.accepts(action.object)) {
        const records = call.get(action.object) ?? new Set<string>();
        records.add(action.externalId);
        call.set(action.object, records);
      }
      if (writes >= callSize) endCall();
    },
    finish() {
      if (!off) endCall();
      return plan;
    },
  };
}
