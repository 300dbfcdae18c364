/**
 * Stage 3, claim: one ledger round trip claims every key of the call (one more only when a dead
 * local holder is taken over). A claimed key is `Held` and kept alive by the call's keeper until
 * it is settled; every other answer settles the item at once: completed -> `replayed` (keyless:
 * `suppressed`) with the stored result and 0 API calls, held elsewhere -> `in_flight`, failed
 * without retry -> `failed`, a key of another identity -> `rejected` (KeyConflictError).
 */
import { KeyConflictError } from '../errors.js';
import type { ClaimRequest, ClaimResult, LedgerEntry } from '../ledger/types.js';
import { ownerId } from '../owner.js';
import type { Outcome } from '../outcome.js';
import { claimKeys } from './claim-keys.js';
import { decodeActionFailure, decodeActionResult } from './payloads.js';
import type { Call, Decided, EngineContext, Held, Planned } from './types.js';

const errorOf = (entry: LedgerEntry) => {
  const error = decodeActionFailure(entry.error)?.error;
  return error ? { error } : {};
};

/** A claim taken straight from a failed entry whose write surely never reached the CRM. */
function surelyUnwritten(entry: LedgerEntry): boolean {
  const retry = decodeActionFailure(entry.error)?.retry;
  return retry?.possiblyWritten === false && retry.attempts === entry.attempts - 1;
}

function answer(item: Planned, claim: ClaimResult): Outcome {
  switch (claim.outcome) {
    case 'completed': {
      const result: { recordId?: string } = decodeActionResult(claim.entry.result) ?? {};
      return { key: item.key, status: item.keyless ? 'suppressed' : 'replayed', ...(result.recordId ? { recordId: result.recordId } : {}), attempts: 0 };
    }
    case 'failed':
      return { key: item.key, status: 'failed', ...errorOf(claim.entry), attempts: 0 };
    case 'conflict':
      return { key: item.key, status: 'rejected', error: new KeyConflictError(item.key, claim.entry).toJSON(), attempts: 0 };
    default:
      return { key: item.key, status: 'in_flight', attempts: 0 };
  }
}

export async function claimStage(ctx: EngineContext, call: Call, items: readonly Planned[]): Promise<{ held: Held[]; answered: Decided[] }> {
  const owner = ownerId();
  const requests: ClaimRequest[] = items.map((i) => ({ key: i.key, fingerprint: i.fingerprint, leaseMs: ctx.leaseMs, retryFailed: ctx.retryFailed, owner, markId: i.markId }));
  const claims = await claimKeys(ctx.ledger, requests, await ctx.clock.now());
  const held: Held[] = [];
  const answered: Decided[] = [];
  items.forEach((item, j) => {
    const claim = claims[j]!;
    if (claim.outcome !== 'claimed') return void answered.push({ item, outcome: answer(item, claim) });
    const recovered = claim.entry.attempts > 1 && !surelyUnwritten(claim.entry);
    held.push({ ...item, token: claim.token!, entryAttempts: claim.entry.attempts, recovered, ...(claim.mark !== undefined ? { mark: claim.mark } : {}) });
  });
  // Long calls (rate limits, model calls, slow CRMs) keep every claim alive while we work.
  call.keeper.hold(held.map((i) => ({ key: i.key, token: i.token })));
  return { held, answered };
}
