/**
 * The one claim state machine. Every backend answers a claim as `decideClaim` does: memory and
 * SQLite call it, the Postgres reconciliation calls it for the rows its statement did not take,
 * and the Postgres SQL and the Redis Lua, which cannot call it, are held to its table by the
 * conformance suite (src/ledger/conformance/claim-table.ts).
 */
import type { ClaimOutcome, ClaimRequest, LedgerEntry } from './types.js';

export const ClaimAction = {
  /** The key is absent, or past its retention: a new entry, attempts 1, the token above the floor. */
  fresh: 'fresh',
  /** In progress with a lease that ran out (`leaseUntil <= now`): the next token and attempt. */
  takeOver: 'take_over',
  /** Failed, and the request asked for `retryFailed`: the next token and attempt, the error kept. */
  retryFailed: 'retry_failed',
  /** Not taken: the request gets `outcome` and the entry as it is. */
  answer: 'answer',
} as const;
export type ClaimAction = (typeof ClaimAction)[keyof typeof ClaimAction];

export type ClaimDecision =
  | { action: 'fresh' | 'take_over' | 'retry_failed'; token: number; attempts: number }
  | { action: 'answer'; outcome: Exclude<ClaimOutcome, 'claimed'> };

/**
 * What a claim of `entry` (null: absent) does at `now`. `floor` is the backend's token floor:
 * above every token of an entry that was pruned or can vanish, so a fresh entry starts over it.
 */
export function decideClaim(entry: LedgerEntry | null, request: ClaimRequest, now: number, floor: number): ClaimDecision {
  // An in-progress entry never has an expiry: its lease decides instead.
  if (!entry || (entry.status !== 'in_progress' && entry.expiresAt !== null && entry.expiresAt <= now)) {
    return { action: ClaimAction.fresh, token: Math.max(entry?.token ?? 0, floor) + 1, attempts: 1 };
  }
  if (entry.fingerprint !== request.fingerprint) return { action: ClaimAction.answer, outcome: 'conflict' };
  const next = { token: entry.token + 1, attempts: entry.attempts + 1 };
  if (entry.status === 'in_progress' && (entry.leaseUntil ?? 0) <= now) return { action: ClaimAction.takeOver, ...next };
  if (entry.status === 'failed' && request.retryFailed === true) return { action: ClaimAction.retryFailed, ...next };
  return { action: ClaimAction.answer, outcome: entry.status };
}

/**
 * The entry a taking decision leaves behind. A takeover or retry keeps the entry's result, error
 * (the engine reads the failure it takes over) and createdAt; a fresh entry starts empty.
 */
export function takenEntry(
  entry: LedgerEntry | null,
  request: ClaimRequest,
  now: number,
  decision: Extract<ClaimDecision, { token: number }>,
): LedgerEntry {
  const claim = {
    status: 'in_progress' as const,
    token: decision.token,
    attempts: decision.attempts,
    leaseUntil: now + request.leaseMs,
    updatedAt: now,
    owner: request.owner ?? null,
    expiresAt: null,
  };
  if (decision.action !== ClaimAction.fresh && entry) return { ...entry, ...claim };
  return { key: request.key, fingerprint: request.fingerprint, result: null, error: null, createdAt: now, ...claim };
}
