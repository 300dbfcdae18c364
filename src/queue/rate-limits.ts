/**
 * 429s seen by one worker slow every worker of the queue: wrap the adapter with
 * `watchRateLimits` before `createSync`, pass the watcher to `startWorker`, and each 429 (or spent
 * quota) the CRM answers also pauses the queue's job fetching in BullMQ for the wait it asked for.
 * The adapter itself still waits Retry-After before resending; this only keeps the other workers
 * from starting more jobs into the same limit.
 */
import type { CrmAdapter } from '../adapter.js';
import { CrmError, CrmErrorKind } from '../errors.js';

/** Something that reports the CRM's rate limits: `listener(ms)` per 429 or spent quota. */
export interface RateLimitSource {
  onRateLimited(listener: (waitMs: number) => void): () => void;
}

export interface RateLimitWatch extends RateLimitSource {
  /** The adapter to give `createSync`: the same calls, watched. */
  readonly adapter: CrmAdapter;
}

/** Wait used when a 429 names none, ms (HubSpot's rolling window). */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 10_000;

export function watchRateLimits(inner: CrmAdapter): RateLimitWatch {
  const listeners = new Set<(waitMs: number) => void>();
  const seen = (err: unknown) => {
    const crm = err instanceof CrmError ? err : inner.classifyError(err);
    if (crm.kind !== CrmErrorKind.rateLimited && crm.kind !== CrmErrorKind.quota) return;
    const wait = crm.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS;
    for (const l of listeners) l(wait);
  };
  async function watched<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      seen(err);
      throw err;
    }
  }
  const adapter: CrmAdapter = {
    ...inner,
    upsertRecords: (object, writes, context) => watched(() => inner.upsertRecords(object, writes, context)),
    createActivities: (object, writes, context) => watched(() => inner.createActivities(object, writes, context)),
    findActivities: (object, writes, context) => watched(() => inner.findActivities(object, writes, context)),
    apiCalls: () => inner.apiCalls(),
  };
  return {
    adapter,
    onRateLimited(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
