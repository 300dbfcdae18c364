/**
 * Stage 3, claim. First a read-only lookup (`getMany`, one round trip, no write transaction)
 * answers every key already completed with the same identity and not expired: `replayed` (keyless:
 * `suppressed`), without a claim and without reading the record's mark. Every other key (absent,
 * in progress, expired, failed, another identity) goes on to `claim`, which decides it as before.
 * A call whose keys were all new skips the lookup on the next call (a first run pays no extra
 * read per batch) until a claim answers `completed` again.
 *
 * The claim: one ledger round trip claims every key it is given (one more only when a dead
 * local holder is taken over). A claimed key is `Held` and kept alive by the call's keeper until
 * it is settled; every other answer settles the item at once: completed -> `replayed` (keyless:
 * `suppressed`) with the stored result and 0 API calls, held elsewhere -> `in_flight`, failed
 * without retry -> `failed`, a key of another identity -> `rejected` (KeyConflictError).
 */
import { KeyConflictError } from '../errors.js';
import { extend } from '../extend.js';
import type { ClaimRequest, ClaimResult, LedgerEntry } from '../ledger/types.js';
import { ownerId } from '../owner.js';
import type { Outcome } from '../outcome.js';
import { inheritedJob } from './bulk-note.js';
import { claimKeys } from './claim-keys.js';
import { holderIdOf } from './parent-held.js';
import { decodeActionFailure, decodeActionResult, decodeMark } from './payloads.js';
import { forClaim } from './prepare.js';
import type { Call, Decided, EngineContext, Held, Planned } from './types.js';

const errorOf = (entry: LedgerEntry) => {
  const error = decodeActionFailure(entry.error)?.error;
  return error ? { error } : {};
};

/** Whether the entry's failure record says no write left, and that failure was attempt `attempts`. */
function unwrittenAt(entry: LedgerEntry, attempts: number): boolean {
  const retry = decodeActionFailure(entry.error)?.retry;
  return retry?.possiblyWritten === false && retry.attempts === attempts;
}

/** A claim taken straight from a failed entry whose write surely never reached the CRM. */
const surelyUnwritten = (entry: LedgerEntry): boolean => unwrittenAt(entry, entry.attempts - 1);

/**
 * Whether a claim of this entry (as a lookup read it) would take over a holder's claim or a
 * failure that may have written, or find the key held elsewhere: in progress, or failed but not
 * surely unwritten by its last attempt. Such a create is looked up in the CRM before it is sent.
 */
export const heldOrPossiblyWritten = (entry: LedgerEntry | null): boolean =>
  entry !== null && (entry.status === 'in_progress' || (entry.status === 'failed' && !unwrittenAt(entry, entry.attempts)));

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

/** The record id a parent's mark holds (none in the unknown mark a possibly written upsert leaves). */
function parentIdOf(mark: string): { ledgerParentId?: string } {
  const { id } = decodeMark(mark);
  return id ? { ledgerParentId: id } : {};
}

/** Whether the next call of this engine reads before it claims: it did find repeats last time. */
const expectRepeats = new WeakMap<EngineContext, boolean>();

/** Whether the next lookup reads the ledger: it has a batched read, and the last lookup or claim found repeats (or none ran yet). */
export const readsAhead = (ctx: EngineContext): boolean => ctx.ledger.getMany !== undefined && expectRepeats.get(ctx) !== false;

/** A completed entry of the same identity, still kept at `now`: what `claim` would answer `completed` for. */
const replayable = (entry: LedgerEntry | null, item: Planned, now: number): entry is LedgerEntry =>
  entry !== null && entry.status === 'completed' && (entry.expiresAt === null || entry.expiresAt > now) && entry.fingerprint === item.fingerprint;

/** The keys answered from the lookup, and the items that go on to claim with the entries it read (null: not read, or absent). */
async function lookUp(ctx: EngineContext, items: readonly Planned[]): Promise<{ replayed: Decided[]; rest: Planned[]; seen: (LedgerEntry | null)[] }> {
  if (!readsAhead(ctx)) return { replayed: [], rest: [...items], seen: items.map(() => null) };
  const entries = await ctx.ledger.getMany!(items.map((i) => i.key));
  const now = await ctx.clock.now();
  const replayed: Decided[] = [];
  const rest: Planned[] = [];
  const seen: (LedgerEntry | null)[] = [];
  items.forEach((item, j) => {
    const entry = entries[j] ?? null;
    if (replayable(entry, item, now)) replayed.push({ item, outcome: answer(item, { key: item.key, outcome: 'completed', entry }) });
    else {
      rest.push(item);
      seen.push(entry);
    }
  });
  return { replayed, rest, seen };
}

/**
 * The lookup of a walk ahead of its calls (applyEach): skipped, as a call's, while the last lookup
 * or claim found no repeats; when it runs, what it finds decides the next.
 */
export async function lookUpAhead(ctx: EngineContext, items: readonly Planned[]): ReturnType<typeof lookUp> {
  const runs = readsAhead(ctx);
  const found = await lookUp(ctx, items);
  if (runs) expectRepeats.set(ctx, found.replayed.length > 0);
  return found;
}

/** `lookedUp`: these items went through `lookUpAhead` and none was answered: claim them at once. */
export async function claimStage(ctx: EngineContext, call: Call, all: readonly Planned[], lookedUp = false): Promise<{ held: Held[]; answered: Decided[] }> {
  const { replayed, rest } = lookedUp ? { replayed: [], rest: [...all] } : await lookUp(ctx, all);
  if (rest.length === 0) {
    expectRepeats.set(ctx, true);
    return { held: [], answered: replayed };
  }
  const owner = ownerId();
  const items = rest.map((i) => forClaim(ctx, i));
  // An upsert reads its own record's mark and names the record it writes (a create whose parent
  // the CRM finds missing looks for that writer: parent-held.ts); a create reads its parent's mark
  // (the parent's CRM id, with no CRM call).
  const requests: ClaimRequest[] = items.map((i) => ({
    key: i.key, fingerprint: i.fingerprint, leaseMs: ctx.leaseMs, retryFailed: ctx.retryFailed, owner, markId: i.markId ?? i.parentMarkId,
    ...(i.markId !== undefined ? { holds: holderIdOf(i.markId) } : {}),
  }));
  const claims = await claimKeys(ctx.ledger, requests, await ctx.clock.now());
  const held: Held[] = [];
  const answered: Decided[] = replayed;
  const repeats = replayed.length > 0 || claims.some((c) => c.outcome === 'completed');
  // After a walk's lookup, these claims were left by it: only a repeat says something new.
  if (!lookedUp || repeats) expectRepeats.set(ctx, repeats);
  items.forEach((item, j) => {
    const claim = claims[j]!;
    if (claim.outcome !== 'claimed') return void answered.push({ item: rest[j]!, outcome: answer(item, claim) });
    const recovered = claim.entry.attempts > 1 && !surelyUnwritten(claim.entry);
    const marked = claim.mark === undefined ? {} : item.markId !== undefined ? { mark: claim.mark } : parentIdOf(claim.mark);
    const dead = claim.deadSeenAt !== undefined ? { deadSeenAt: claim.deadSeenAt } : {};
    const holder = claim.holder && item.markId !== undefined ? { holder: claim.holder } : {};
    const job = inheritedJob(claim.entry);
    held.push(extend(item, { token: claim.token!, entryAttempts: claim.entry.attempts, recovered, ...marked, ...dead, ...holder, ...(job ? { bulkJob: job } : {}) }));
  });
  // Long calls (rate limits, model calls, slow CRMs) keep every claim alive while we work.
  call.keeper.hold(held.map((i) => ({ key: i.key, token: i.token })));
  return { held, answered };
}
