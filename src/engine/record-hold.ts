/**
 * Stage 3b, one writer per record: writes of one record from several workers go one at a time, so
 * the record ends with the newest event's values whatever order the CRM receives them in.
 *
 * Every upsert's claim names its record (`holds`, the record's holder mark, in the claim's own
 * round trip) and learns the claim that mark named before it (`ClaimResult.holder`). A holder of
 * another key that is alive (in progress, lease running on the ledger's clock, owner not a dead
 * process of this host) is writing the same record right now: this claim waits for it to settle,
 * keeping its own claims alive (so a third writer waits in turn for this one), then reads the
 * record's mark again (`readMarks`) and is judged on it as any other: unchanged, superseded by the
 * newer values the holder wrote, or written. Two claims of one batch never wait for each other
 * (they are one write), and a claim round is atomic, so a waiter only ever waits for a claim taken
 * before its own. A holder still writing after `MAX_WAIT_MS` (or the lease, if shorter) leaves
 * this write `in_flight` (`RECORD_IN_FLIGHT`), its claim given back: retried later, it is judged then.
 *
 * Nothing of this runs on the common path: only a claim that found a live holder reads the ledger
 * again. A backend without `getMany` or `readMarks`, and `order: 'arrival'`, do not wait.
 */
import { CrmError, CrmErrorKind } from '../errors.js';
import type { LedgerEntry } from '../ledger/types.js';
import { extend } from '../extend.js';
import { liveClaim } from './parent-held.js';
import { decodeMark, encodeMark } from './payloads.js';
import { releaseEntries } from './settle.js';
import type { Call, Decided, EngineContext, Held } from './types.js';

/** The vendor code of an upsert given back while another worker kept writing its record (its outcome is `in_flight`). */
export const RECORD_IN_FLIGHT = 'RECORD_IN_FLIGHT';

/** The longest an upsert waits for another worker writing its record, ms (at most the lease). */
export const MAX_WAIT_MS = 120_000;
const FIRST_POLL_MS = 20;
const LONGEST_POLL_MS = 1_000;

/** A wait on the machine's timers: callers' injected sleeps may not pass time at all. */
const realPause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Poll the holders' entries until none is alive or the time is up; the keys still alive, and each holder's entry as last read. */
async function waitFor(ctx: EngineContext, keys: ReadonlySet<string>, limitMs: number): Promise<{ alive: Set<string>; last: Map<string, LedgerEntry | null> }> {
  const started = performance.now();
  let alive = new Set(keys);
  const last = new Map<string, LedgerEntry | null>();
  for (let delay = 0; ; delay = Math.min(LONGEST_POLL_MS, Math.max(FIRST_POLL_MS, delay * 2))) {
    if (delay > 0) await realPause(delay);
    const keysNow = [...alive];
    const entries: (LedgerEntry | null)[] = await ctx.ledger.getMany!(keysNow);
    const now = await ctx.clock.now();
    keysNow.forEach((key, i) => last.set(key, entries[i] ?? null));
    alive = new Set(keysNow.filter((_, i) => liveClaim(entries[i] ?? null, now)));
    if (alive.size === 0 || performance.now() - started >= limitMs) return { alive, last };
  }
}

/**
 * The record's mark with its hash dropped: the claim that last named the record never settled (it
 * died, gave its claim back, or its lease ran out), and its write may have reached the CRM, so what
 * the ledger last confirmed is not known to be what the record holds: the write is never judged
 * `unchanged` on it. Its record id and field times stay.
 */
const distrusted = (mark: string | undefined): string | undefined => (mark === undefined ? undefined : encodeMark({ ...decodeMark(mark), h: null }));

function givenBack(ctx: EngineContext, item: Held): Decided {
  const record = `${item.object} ${JSON.stringify(item.action.externalId)}`;
  const message = `${record} is being written by another worker (${item.holder!.key}): this write was not sent and waits for it; retry it under the same key`;
  const error = new CrmError(message, { vendor: ctx.adapter.name, kind: CrmErrorKind.transient, vendorCode: RECORD_IN_FLIGHT });
  return { item, outcome: { key: item.key, status: 'in_flight', error: error.toJSON(), attempts: 0 } };
}

export async function recordHoldStage(ctx: EngineContext, call: Call, held: readonly Held[]): Promise<{ held: Held[]; waited: Decided[] }> {
  if (ctx.order === 'arrival' || !ctx.ledger.getMany || !ctx.ledger.readMarks) return { held: [...held], waited: [] };
  const ours = new Set(held.map((i) => i.key));
  const now = await ctx.clock.now();
  const unsettled = held.filter((i) => i.holder && !ours.has(i.holder.key) && i.holder.status === 'in_progress');
  if (unsettled.length === 0) return { held: [...held], waited: [] };
  // A holder with no known lease was claimed concurrently (ledger/types.ts `holder`): its entry is read.
  const blocked = unsettled.filter((i) => i.holder!.leaseUntil === null || i.holder!.leaseUntil > now);
  const { alive, last } = blocked.length > 0 ? await waitFor(ctx, new Set(blocked.map((i) => i.holder!.key)), Math.min(MAX_WAIT_MS, ctx.leaseMs)) : { alive: new Set<string>(), last: new Map<string, LedgerEntry | null>() };
  const stuck = new Set(blocked.filter((i) => alive.has(i.holder!.key)));
  await releaseEntries(ctx, call, [...stuck]);
  const ready = blocked.filter((i) => !alive.has(i.holder!.key));
  const marks = ready.length > 0 ? await ctx.ledger.readMarks(ready.map((i) => i.markId!)) : [];
  const fresh = new Map(ready.map((item, j) => [item, marks[j] ?? undefined]));
  // Settled holders (completed, failed) left the mark as it is; one that never settled may have written.
  const waitedFor = new Set(blocked);
  const neverSettled = (i: Held) => !waitedFor.has(i) || (last.get(i.holder!.key)?.status ?? 'in_progress') === 'in_progress';
  const mine = new Set(unsettled);
  const out = held.filter((i) => !stuck.has(i)).map((i) => {
    if (!mine.has(i)) return i;
    const mark = fresh.has(i) ? fresh.get(i) : i.mark;
    return extend(i, { mark: neverSettled(i) ? distrusted(mark) : mark });
  });
  return { held: out, waited: [...stuck].map((i) => givenBack(ctx, i)) };
}
