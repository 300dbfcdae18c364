/**
 * Stage 7, write one batch: retries (p-retry, driven by the adapter's classification), activity
 * recovery before a create that may have happened, splitting a whole-batch 4xx in halves to
 * isolate the bad input, and the quota pause. Nothing leaves under a lost claim: the claims of
 * the open groups are confirmed before every send (renewing stale ones); a group whose claim was
 * lost is dropped (its new holder writes it) and the rest is sent.
 */
import type { ActivityWrite, BatchContext, RecordWrite } from '../adapter.js';
import type { Batch } from '../batcher.js';
import { CrmError } from '../errors.js';
import { PendingItemsError, withRetry } from '../retry.js';
import { ClaimLostError } from './lease-keeper.js';
import { recoverCreated, SENT_FRESH_MS } from './recover.js';
import { openRound, type GroupResult, type Round, type Suspicion } from './round.js';
import type { Call, EngineContext, Held } from './types.js';

export interface SendResult {
  results: GroupResult[];
  attempts: number;
}

/**
 * Adapters seen calling `beforeSend` before their write requests. Only for those does a failure
 * before any write left (a parent read, a lookup) prove nothing was written; for any other adapter
 * every ambiguous failure counts as possibly written.
 */
const gatedAdapters = new WeakSet<object>();

/** Run `fn` once every open group's claim is confirmed; a lost claim drops its group and runs `fn` for the rest. */
function guarded(ctx: EngineContext, round: Round, confirm: () => Promise<void>) {
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        await confirm();
        round.writeLeft = false;
        return await fn();
      } catch (err) {
        if (err instanceof ClaimLostError && round.open().length > 0) continue;
        if (err instanceof ClaimLostError) throw err;
        const crm = err instanceof CrmError ? err : ctx.adapter.classifyError(err);
        if (crm.ambiguous && (round.writeLeft || !gatedAdapters.has(ctx.adapter))) round.suspect(round.open());
        throw crm;
      }
    }
  };
}

async function attempt(ctx: EngineContext, round: Round, call: ReturnType<typeof guarded>): Promise<void> {
  ctx.quota.check();
  if (round.open().length === 0 || !(await recoverCreated(ctx, round, call))) return;
  round.attempts += 1;
  let pending: number[] = [];
  const res = await call(() => {
    pending = round.open();
    const writes = pending.map((i) => round.writes[i]!);
    return round.batch.op === 'upsert'
      ? ctx.adapter.upsertRecords(round.batch.object, writes as RecordWrite[], round.context)
      : ctx.adapter.createActivities(round.batch.object, writes as ActivityWrite[], round.context);
  });
  let retryable: CrmError | undefined;
  pending.forEach((wi, j) => {
    // A 2xx that omits an input's result may still have written it: possibly written.
    const r = res[j] ?? { ok: false as const, error: new CrmError('the CRM returned no result for this input', { vendor: ctx.adapter.name, kind: 'transient', ambiguous: true }) };
    round.results[wi] = r;
    if (!r.ok && r.error.ambiguous) round.suspect([wi]);
    if (!r.ok && r.error.retryable) retryable ??= r.error;
  });
  if (retryable) throw new PendingItemsError(retryable);
}

/** The parents a batch knows (`memo`) and knows absent (`absent`), shared by its attempts and halves. */
export type BatchParents = Pick<BatchContext, 'memo' | 'absent'>;

/**
 * Write these groups of a batch; `suspicion` says which may already be written (looked up before
 * creating) and collects the groups a failure may have written.
 */
export async function sendGroups(ctx: EngineContext, call: Call, batch: Batch<Held>, groups: Held[][], parents: BatchParents, suspicion: Suspicion): Promise<SendResult> {
  // A create that cannot be upserted on its key leaves with its claim renewed within the last
  // SENT_FRESH_MS: if this process dies with it in flight, its claim says when (recover.ts).
  const freshness = batch.op === 'create' && !ctx.adapter.capabilities.nativeActivityUpsert ? SENT_FRESH_MS : undefined;
  const confirm = async () => {
    const open = round.open();
    const lost = await call.keeper.confirm(open.flatMap((i) => groups[i]!.map((item) => item.key)), freshness);
    if (lost.size === 0) return;
    for (const i of open) if (groups[i]!.some((item) => lost.has(item.key))) round.results[i] = { ok: false, lost: true };
    throw new ClaimLostError([...lost]);
  };
  const beforeSend = async () => {
    await confirm();
    round.writeLeft = true;
    gatedAdapters.add(ctx.adapter);
  };
  const context: BatchContext = { ...parents, beforeSend };
  const round = openRound(batch, groups, context, suspicion);
  try {
    const send = guarded(ctx, round, confirm);
    await withRetry(() => attempt(ctx, round, send), { ...ctx.retry, sleep: ctx.sleep });
  } catch (err) {
    if (!(err instanceof PendingItemsError) && !(err instanceof ClaimLostError)) await settleWholeFailure(ctx, call, round, err);
  }
  const notAttempted = () => ({ ok: false as const, error: new CrmError('write was not attempted', { vendor: ctx.adapter.name, kind: 'transient' }) });
  return { results: round.results.map((r) => r ?? notAttempted()), attempts: round.attempts };
}

/** A whole-call failure: a quota error pauses the Sync; a splittable 4xx is split in halves; else every open group fails with it. */
async function settleWholeFailure(ctx: EngineContext, call: Call, round: Round, err: unknown): Promise<void> {
  const crm = err instanceof CrmError ? err : ctx.adapter.classifyError(err);
  ctx.quota.note(crm);
  const pending = round.open();
  if (!crm.splittable || pending.length < 2) {
    for (const i of pending) round.results[i] = { ok: false, error: crm };
    return;
  }
  const half = Math.ceil(pending.length / 2);
  for (const part of [pending.slice(0, half), pending.slice(half)]) {
    const sub = await sendGroups(ctx, call, round.batch, part.map((i) => round.groups[i]!), round.context, round.suspicion);
    part.forEach((wi, j) => (round.results[wi] = sub.results[j]));
    round.attempts += sub.attempts;
  }
}
