/**
 * What `sync --dry-run` says about the bulk lane: which objects' writes a run would send through
 * the adapter's bulk jobs instead of the batch requests each line previews. A run sends the file
 * in calls of up to 50,000 actions that need a write (with the lane in use); in a call, an
 * object's writes go through a job under `always`, or under `auto` once they reach the lane's
 * `minRecords`. The lane takes record upserts (one row per record) of the objects it accepts, and
 * activity creates upserted on their key (one row per key) when the adapter upserts activities
 * natively and the create is keyed (has an event id): a keyless create's dedupe-window slot
 * belongs to the batch calls. The plan counts the same way as the engine (bulk.ts), call by call.
 */
import type { BulkLane } from '../adapter.js';
import { DEFAULT_BULK_CALL } from '../engine/apply-each.js';
import type { BulkMode } from '../engine/types.js';

/**
 * One object's writes that would go through jobs: a record object's upserts, or an activity
 * object's creates (each upserted on its key), and in how many calls (a job each, or more when
 * one is too large to upload). Exactly one of `upserts` and `creates` is present.
 */
export interface BulkPlanEntry {
  upserts?: number;
  creates?: number;
  calls: number;
}

export interface BulkPlan {
  /** An action that would be written (its verdict sends it), with its key. */
  write(action: { op: string; object: string; externalId?: string; eventId?: string }, key: string): void;
  /** Objects whose writes would go through jobs, by logical object name. */
  finish(): Record<string, BulkPlanEntry>;
}

export interface BulkPlanOptions {
  /** The adapter's `capabilities.nativeActivityUpsert`: without it, activity creates never go through the lane. */
  nativeActivityUpsert?: boolean;
}

export function bulkPlan(lane: BulkLane | undefined, mode: BulkMode, batchSize: number, options: BulkPlanOptions = {}): BulkPlan {
  const plan: Record<string, BulkPlanEntry> = {};
  const callSize = Math.max(batchSize, DEFAULT_BULK_CALL);
  const activities = options.nativeActivityUpsert === true && lane?.upsertActivities !== undefined;
  // Rows per object in the call being filled, by op: writes to one record (or one key) are one row.
  let call = new Map<string, { op: 'upsert' | 'create'; object: string; rows: Set<string> }>();
  let writes = 0;
  const endCall = () => {
    for (const { op, object, rows } of call.values()) {
      const taken = mode === 'always' || rows.size >= lane!.minRecords;
      if (!taken) continue;
      const entry = (plan[object] ??= { calls: 0 });
      const count = op === 'upsert' ? 'upserts' : 'creates';
      entry[count] = (entry[count] ?? 0) + rows.size;
      entry.calls += 1;
    }
    call = new Map();
    writes = 0;
  };
  const row = (op: 'upsert' | 'create', object: string, id: string) => {
    const at = `${op}\u0000${object}`;
    const rows = call.get(at)?.rows ?? new Set<string>();
    rows.add(id);
    call.set(at, { op, object, rows });
  };
  const off = lane === undefined || mode === 'never';
  return {
    write(action, key) {
      if (off) return;
      writes += 1;
      if (action.op === 'upsert' && action.externalId !== undefined && lane.accepts(action.object)) row('upsert', action.object, action.externalId);
      else if (action.op === 'create' && activities && action.eventId !== undefined && lane.acceptsActivities?.(action.object) === true) row('create', action.object, key);
      if (writes >= callSize) endCall();
    },
    finish() {
      if (!off) endCall();
      return plan;
    },
  };
}

/**
 * The dry run's stderr line for one object (after its name), `job` as the vendor names one job and
 * `minRecords` the lane's under `--bulk auto` (undefined under `always`):
 *
 *   10,000 upserts in a Bulk API 2.0 job (…), not the batch requests shown for them (--bulk auto: 2,000 or more upserts of an object in one call)
 *   2,500 creates upserted on their key in a Bulk API 2.0 job (…), not the batch requests shown for them (--bulk auto: 2,000 or more keyed creates of an object in one call)
 */
export function bulkJobText(entry: BulkPlanEntry, job: string, minRecords: number | undefined): string {
  const count = (n: number) => n.toLocaleString('en-US');
  const what = entry.creates === undefined ? `${count(entry.upserts ?? 0)} upserts` : `${count(entry.creates)} creates upserted on their key`;
  const via = entry.calls === 1 ? job : `${entry.calls} calls, each ${job}`;
  const writes = entry.creates === undefined ? 'upserts' : 'keyed creates';
  const why = minRecords === undefined ? '--bulk always' : `--bulk auto: ${count(minRecords)} or more ${writes} of an object in one call`;
  return `${what} in ${via}, not the batch requests shown for them (${why})`;
}
