/**
 * Recovering create-only activities: when a create may already have happened (an ambiguous
 * failure, a takeover of a dead worker's claim, or a ledger that cannot vouch for its history),
 * the open groups' keys are looked up in the CRM first (read-after-write, never search alone);
 * a found key is this action's record (`created`), and only the rest is sent.
 */
import type { ActivityWrite } from '../adapter.js';
import type { EngineContext } from './types.js';
import type { Round } from './round.js';

/** Returns false when nothing is left to send. */
export async function recoverCreated(ctx: EngineContext, round: Round, call: <T>(fn: () => Promise<T>) => Promise<T>): Promise<boolean> {
  if (round.batch.op !== 'create' || !round.ambiguous || ctx.adapter.capabilities.nativeActivityUpsert) return round.open().length > 0;
  const found = await call(() => ctx.adapter.findActivities(round.batch.object, round.open().map((i) => round.writes[i] as ActivityWrite), round.context));
  for (const i of round.open()) {
    const recordId = found.get(round.writes[i]!.key);
    if (recordId) round.results[i] = { ok: true, recordId, created: true };
  }
  return round.open().length > 0;
}
