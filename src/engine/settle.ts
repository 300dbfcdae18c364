/**
 * Settling claims in the ledger, one round trip per kind and batch. Completed entries store the
 * outcome's status and record id, and for written upserts the record's "last written" mark.
 * Failed entries keep the action (retried under this same key), its event time, the attempt they
 * failed on and whether the write may have reached the CRM: the next claim that follows directly
 * of an entry that surely wrote nothing needs no lookup before creating. A possibly written
 * upsert also makes the record's mark unknown, so the next write to it is never judged unchanged.
 * Released claims (nothing written) are claimable again at once.
 */
import { advancedTimes } from './order.js';
import { encodeActionFailure, encodeActionResult, encodeMark } from './payloads.js';
import { inEventOrder } from './round.js';
import { WRITTEN, type Call, type Decided, type EngineContext, type Held, type Planned } from './types.js';

/** A mark that no field hash equals: the record may hold a write the ledger never saw confirmed. */
export const UNKNOWN_MARK = encodeMark({ h: null, id: null });

/**
 * The items that set their record's mark: of the writes to one record settled together (coalesced
 * into one write), the latest event's, whose values are the ones the record now holds; with the
 * field times all of them advance (order.ts).
 */
function markers(owned: readonly (Decided & { item: Held })[]): Map<Planned, Record<string, number>> {
  const latest = new Map<string, Held>();
  const writers = new Map<string, Held[]>();
  for (const { item, outcome: o } of owned) {
    if (!item.markId || !o.recordId || !WRITTEN.has(o.status)) continue;
    writers.set(item.markId, [...(writers.get(item.markId) ?? []), item]);
    const seen = latest.get(item.markId);
    if (!seen || inEventOrder([seen, item])[1] === item) latest.set(item.markId, item);
  }
  return new Map([...latest].map(([markId, item]) => [item, advancedTimes(writers.get(markId)!)]));
}

/** The unknown mark a possibly written upsert leaves: no hash, no id, and its fields' times advanced (they may hold its values). */
function unknownMarks(items: readonly Held[]): Map<Held, string> {
  const byRecord = new Map<string, Held[]>();
  for (const item of items) if (item.markId) byRecord.set(item.markId, [...(byRecord.get(item.markId) ?? []), item]);
  const out = new Map<Held, string>();
  for (const group of byRecord.values()) {
    const t = advancedTimes(group);
    for (const item of group) out.set(item, encodeMark({ h: null, id: null, t }));
  }
  return out;
}

export async function completeEntries(ctx: EngineContext, call: Call, decided: readonly Decided[]): Promise<void> {
  const owned = decided.filter((d): d is Decided & { item: Held } => 'token' in d.item);
  if (owned.length === 0) return;
  call.keeper.drop(owned.map((d) => d.item.key));
  const marking = markers(owned);
  await ctx.ledger.complete(
    owned.map(({ item, outcome: o }) => {
      const result = encodeActionResult({ status: o.status, ...(o.recordId ? { recordId: o.recordId } : {}) });
      const t = marking.get(item);
      const mark = t ? { mark: { id: item.markId!, value: encodeMark({ h: item.fieldHash ?? null, id: o.recordId!, t }) } } : {};
      return { key: item.key, token: item.token, result, retentionMs: ctx.retentionMs, ...mark };
    }),
    await ctx.clock.now(),
  );
}

export async function failEntries(ctx: EngineContext, call: Call, decided: readonly Decided[], possiblyWritten: boolean): Promise<void> {
  const owned = decided.filter((d): d is Decided & { item: Held } => 'token' in d.item);
  if (owned.length === 0) return;
  call.keeper.drop(owned.map((d) => d.item.key));
  const unknown = possiblyWritten ? unknownMarks(owned.map((d) => d.item)) : new Map<Held, string>();
  await ctx.ledger.fail(
    owned.map(({ item, outcome }) => ({
      key: item.key,
      token: item.token,
      error: encodeActionFailure({ error: outcome.error!, retry: { action: item.action, at: item.at, attempts: item.entryAttempts, possiblyWritten } }),
      ...(unknown.has(item) ? { mark: { id: item.markId!, value: unknown.get(item)! } } : {}),
    })),
    await ctx.clock.now(),
  );
}

export async function releaseEntries(ctx: EngineContext, call: Call, items: readonly Held[]): Promise<void> {
  if (items.length === 0) return;
  call.keeper.drop(items.map((i) => i.key));
  await ctx.ledger.release(items.map((i) => ({ key: i.key, token: i.token })), await ctx.clock.now());
}

/** After a failure, claims of which nothing was sent go back; best effort, the ledger may be what failed. */
export const giveBack = (ctx: EngineContext, call: Call, items: readonly Held[]): Promise<void> => releaseEntries(ctx, call, items).catch(() => undefined);
