/**
 * A breaker around the CRM adapter for one CLI run. Two failures make every later batch
 * pointless, so once either is seen no further request is sent and the run stops:
 *
 *   auth         a 401/403 (CrmError kind `auth`): every request with this token fails alike.
 *   unreachable  as many connection-level failures in a row (no HTTP response at all) as one
 *                batch's retry budget allows: the CRM is down or cut off.
 *
 * After it trips, calls throw at once (no request leaves): the refusal itself for `auth`, a
 * not-retryable "not sent" error for `unreachable`, so the engine settles the rest of the chunk in
 * flight without spending another request or retry wait on it.
 */
import type { ActivityWrite, BulkHooks, BulkLane, BulkRowResult, CrmAdapter, WriteResult } from '../adapter.js';
import { CrmError } from '../errors.js';
import { DEFAULT_RETRY } from '../retry.js';

export type TripReason = 'auth' | 'unreachable';

export interface AdapterGuard {
  readonly adapter: CrmAdapter;
  /** Why the breaker tripped, with the CRM error that tripped it; undefined while closed. */
  tripped(): { reason: TripReason; error: CrmError } | undefined;
}

export interface AdapterGuardOptions {
  /** Connection-level failures in a row that mean "unreachable". Default: one batch's budget (retries + 1). */
  unreachableAfter?: number;
  /** Called once, when the breaker trips. */
  onTrip?: (reason: TripReason, error: CrmError) => void;
}

/**
 * The error for a call refused after `unreachable` tripped. Not retryable on purpose: the engine
 * would otherwise spend a whole backoff schedule on each remaining batch of the chunk before the
 * run can stop. Nothing was sent, so it is not ambiguous; the next run retries the entries.
 */
const notSent = (cause: CrmError) =>
  new CrmError(`not sent, the CRM is unreachable: ${cause.message.replace(/^\[crm-upsert\] \[[^\]]+\] /, '')}`, { vendor: cause.vendor, kind: 'permanent', ambiguous: false });

export function guardAdapter(inner: CrmAdapter, options: AdapterGuardOptions = {}): AdapterGuard {
  const unreachableAfter = options.unreachableAfter ?? DEFAULT_RETRY.retries + 1;
  let trip: { reason: TripReason; error: CrmError } | undefined;
  let unanswered = 0;

  const open = (reason: TripReason, error: CrmError) => {
    if (trip) return;
    trip = { reason, error };
    options.onTrip?.(reason, error);
  };
  const refusedBy = (results: WriteResult[]) => results.find((r): r is Extract<WriteResult, { ok: false }> => !r.ok && r.error.kind === 'auth')?.error;

  async function guarded<T>(call: () => Promise<T>, results?: (value: T) => WriteResult[], crmOnly = false): Promise<T> {
    if (trip) throw trip.reason === 'auth' ? trip.error : notSent(trip.error);
    let value: T;
    try {
      value = await call();
    } catch (err) {
      // A bulk job's hooks run the ledger inside the call: what they throw is not the CRM's answer.
      if (crmOnly && !(err instanceof CrmError)) throw err;
      const crm = err instanceof CrmError ? err : inner.classifyError(err);
      if (crm.kind === 'auth') open('auth', crm);
      else if (crm.kind === 'transient' && crm.status === undefined) {
        unanswered += 1;
        if (unanswered >= unreachableAfter) open('unreachable', crm);
      } else unanswered = 0;
      throw err;
    }
    unanswered = 0;
    const refused = results && refusedBy(results(value));
    if (refused) open('auth', refused);
    return value;
  }

  const adapter: CrmAdapter = {
    ...inner,
    upsertRecords: (object, writes, context) => guarded(() => inner.upsertRecords(object, writes, context), (r) => r),
    createActivities: (object, writes, context) => guarded(() => inner.createActivities(object, writes, context), (r) => r),
    findActivities: (object, writes, context) => guarded(() => inner.findActivities(object, writes, context)),
    ...(inner.bulkLane ? { bulkLane: guardLane(inner.bulkLane) } : {}),
  };
  // A Bulk job's requests are CRM calls too: a refused token or an unreachable CRM trips the breaker from there as well.
  function guardLane(lane: BulkLane): BulkLane {
    const rows = (results: Map<string, BulkRowResult>) => [...results.values()].filter((r): r is WriteResult => !('unprocessed' in r));
    return {
      minRecords: lane.minRecords,
      accepts: (object) => lane.accepts(object),
      upsert: (object, writes, hooks) => guarded(() => lane.upsert(object, writes, hooks), rows, true),
      follow: (object, job, writes) => guarded(() => lane.follow(object, job, writes), rows, true),
      ...(lane.acceptsActivities ? { acceptsActivities: (object: string) => lane.acceptsActivities!(object) } : {}),
      ...(lane.upsertActivities ? { upsertActivities: (object: string, writes: readonly ActivityWrite[], hooks: BulkHooks) => guarded(() => lane.upsertActivities!(object, writes, hooks), rows, true) } : {}),
    };
  }
  return { adapter, tripped: () => trip };
}
