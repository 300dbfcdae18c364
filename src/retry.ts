/**
 * p-retry, fed by the adapter's error classification: transient errors back off exponentially,
 * rate limits wait for Retry-After (or the vendor's window) and do not spend the retry budget
 * (up to `maxRateLimitWaits`), everything else stops at once.
 */
import pRetry from 'p-retry';
import { CrmError } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt for transient failures (5xx, resets, lost responses). Default 6. */
  retries?: number;
  /** First backoff, ms. Default 250. */
  minTimeoutMs?: number;
  /** Largest backoff, ms. Default 15,000. */
  maxTimeoutMs?: number;
  /** Longest Retry-After honoured, ms; a longer one fails the attempt for a later run. Default 120,000. */
  maxRetryAfterMs?: number;
  /** Rate-limit waits allowed in one call before giving up. Default 20. */
  maxRateLimitWaits?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  retries: 6,
  minTimeoutMs: 250,
  maxTimeoutMs: 15_000,
  maxRetryAfterMs: 120_000,
  maxRateLimitWaits: 20,
};

/** Thrown inside an attempt when some items of a batch are still pending after a retryable failure. */
export class PendingItemsError extends Error {
  constructor(override readonly cause: CrmError) {
    super(cause.message);
  }
}

const crmErrorOf = (error: unknown): CrmError | undefined =>
  error instanceof CrmError ? error : error instanceof PendingItemsError ? error.cause : undefined;

export function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions & { sleep: (ms: number) => Promise<void> },
): Promise<T> {
  const o = { ...DEFAULT_RETRY, ...options };
  let rateLimitWaits = 0;
  let consumed = true;
  return pRetry(attempt, {
    retries: o.retries + o.maxRateLimitWaits,
    minTimeout: o.minTimeoutMs,
    maxTimeout: o.maxTimeoutMs,
    factor: 2,
    randomize: true,
    onFailedAttempt: async ({ error }) => {
      const crm = crmErrorOf(error);
      if (crm?.retryAfterMs !== undefined && crm.retryAfterMs <= o.maxRetryAfterMs) await o.sleep(crm.retryAfterMs);
    },
    shouldConsumeRetry: ({ error }) => {
      consumed = !(crmErrorOf(error)?.kind === 'rate_limited' && rateLimitWaits < o.maxRateLimitWaits);
      if (!consumed) rateLimitWaits += 1;
      return consumed;
    },
    shouldRetry: ({ error, retriesConsumed }) => {
      const crm = crmErrorOf(error);
      if (!crm?.retryable) return false;
      if (crm.retryAfterMs !== undefined && crm.retryAfterMs > o.maxRetryAfterMs) return false;
      return !consumed || retriesConsumed < o.retries;
    },
  });
}
