/**
 * applyEach: a long list applied in calls sized by the work they carry. Every `batchSize` inputs
 * are prepared and looked up in the ledger (one read-only `getMany`, as a call's claim does);
 * what that settles (rejected input, a key already completed: `replayed` / `suppressed`) is
 * yielded at once and takes no room in a call. The rest waits until `batchSize` actions need a
 * claim, then goes out as one call (claim, window, write, settle; its lookup is not repeated).
 * As a call's, the lookup is skipped while the last lookup or claim found no repeats (a first run
 * over new actions pays no read per chunk; its chunks are then sent as they come).
 * Creates that the lookup found held (in progress) or failed after a write that may have left
 * wait apart, in calls of their own: each of them is looked up in the CRM before it is sent (on
 * CRMs without a native upsert on the key), so together they cost one lookup per batch, where
 * mixed into the other calls they would add one to nearly every batch. They go out last.
 *
 * Why: a re-run over inputs done before (a restarted worker walking its share again, a sync run
 * again after a crash) finds most of them completed and a few left between them (failed, held by
 * the dead process). Cut in fixed chunks of inputs, those few go out as many small batches, each
 * with its own parent read, key lookup and create; gathered, they fill whole batches.
 *
 * With more than one request in flight, a call carries whole rounds of requests (`concurrency`
 * batches of the adapter's maximum), at least `batchSize` actions; what is left over waits for
 * the next call (the last call takes everything). Cut at `batchSize` alone, a call of 500 with 4
 * in flight and 100 per batch would send a round of 4 and then a round of 1, and a call of 100
 * one request at a time.
 *
 * Nothing is claimed before its call: inputs read and not yet sent when the caller stops
 * iterating are left as they were (a later run does them).
 */
import { extend } from '../extend.js';
import type { Outcome } from '../outcome.js';
import { heldOrPossiblyWritten, lookUpAhead, readsAhead } from './claim.js';
import { knownParents, refsOf } from './defer.js';
import { prepareAll, reported } from './prepare.js';
import { repeatOutcome, splitRepeats } from './repeats.js';
import type { BulkMode, EngineContext, Planned } from './types.js';

export interface ApplyEachOptions {
  /** Inputs read (and looked up) at a time, and actions that need a claim per call. Default 500. */
  batchSize?: number;
  /**
   * Hold back creates whose parent record this Sync does not know yet (no confirmed write of it in
   * the ledger, none a moment ago, none in the same call) until it does, or until the end of the
   * walk. Their parents are then read together, and those written meanwhile (by this walk or
   * another worker) are not read at all. Default true. Turn it off when activities attach to
   * records that exist in the CRM already and were never written through this ledger: holding
   * them back then only delays them.
   */
  deferUnknownParents?: boolean;
  /** Creates held back at most; beyond, the oldest `batchSize` of them go out (their parents read). Default 20,000. */
  maxDeferred?: number;
  /**
   * Whether upserts go through the adapter's bulk lane (`applyMany`'s `bulk`). With a lane and
   * `auto` or `always`, calls are sized for it: upserts wait until `bulkCallSize` of them need a
   * claim (or the walk ends), so that one call carries as many rows as one job takes.
   */
  bulk?: BulkMode;
  /** Actions per call while the bulk lane is in use (at least `batchSize`). Default 50,000. */
  bulkCallSize?: number;
}

/** Outcomes by input index: what one step of `applyEach` settled. */
export type Settled = { index: number; outcome: Outcome }[];

export const DEFAULT_EACH_BATCH = 500;

/**
 * Runs one call of claimed-to-be items (looked up already) and returns their outcomes by index.
 * With `defer`, creates whose parent is not known yet are held back and their indexes handed to it.
 */
export type RunLooked = (leaders: readonly Planned[], defer?: (indexes: readonly number[]) => void) => Promise<Map<number, Outcome>>;

export const DEFAULT_MAX_DEFERRED = 20_000;

export const DEFAULT_BULK_CALL = 50_000;

/**
 * How many of `waiting` actions the next call takes, or 0 to wait for more. At least `batchSize`;
 * with more than one request in flight, also whole rounds of them (`concurrency` batches of
 * `maxBatch` actions), the rest waiting for the next call, so that no slot idles while a call
 * ends on a short round. One request at a time, a call takes what waits (`batchSize` is then
 * the caller's own step, a line at a time if so asked).
 */
export function callTake(waiting: number, batchSize: number, concurrency: number, maxBatch: number): number {
  if (concurrency <= 1) return waiting >= batchSize ? waiting : 0;
  const round = concurrency * Math.max(1, maxBatch);
  if (waiting < Math.ceil(batchSize / round) * round) return 0;
  return waiting - (waiting % round);
}

/**
 * One call over items none of which the lookup answered: in-call repeats follow their leader.
 * With `later`, held-back leaders go there with their repeats, and are not settled.
 */
async function runWork(run: RunLooked, work: readonly Planned[], later?: Planned[]): Promise<Settled> {
  const { leaders, repeats } = splitRepeats(work);
  const deferred = new Set<number>();
  const decided = await run(leaders, later && ((indexes) => indexes.forEach((i) => deferred.add(i))));
  const settled: Settled = [];
  for (const item of leaders) {
    if (deferred.has(item.index)) later!.push(item);
    else settled.push({ index: item.index, outcome: reported(item, decided.get(item.index)!) });
  }
  for (const { item, leader } of repeats) {
    if (deferred.has(leader.index)) later!.push(item);
    else settled.push({ index: item.index, outcome: reported(item, repeatOutcome(item, decided.get(leader.index)!)) });
  }
  return settled;
}

/**
 * Takes from `later` the items whose parent and links this Sync knows now (they go out with no read),
 * when there are at least `min` of them; otherwise leaves `later` as it is.
 */
function takeReady(ctx: EngineContext, later: Planned[], min: number): Planned[] {
  const known = knownParents(ctx, later.flatMap(refsOf));
  const isReady = (item: Planned) => refsOf(item).every((ref) => known.has(ref));
  if (later.filter(isReady).length < min) return [];
  const ready: Planned[] = [];
  let kept = 0;
  for (const item of later) {
    if (isReady(item)) ready.push(item);
    else later[kept++] = item;
  }
  later.length = kept;
  return ready;
}

/**
 * The steps of an applyEach, each wrapped by `step` (telemetry: one apply_many span per step, its
 * outcomes counted once). Yields after each lookup (what it settled, possibly nothing) and after each call.
 */
export async function* applyEachSteps(
  ctx: EngineContext,
  run: RunLooked,
  inputs: Iterable<unknown> | AsyncIterable<unknown>,
  options: ApplyEachOptions,
  step: (fn: () => Promise<Settled>) => Promise<Settled>,
): AsyncGenerator<Settled> {
  const batchSize = options.batchSize ?? DEFAULT_EACH_BATCH;
  if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new RangeError('applyEach: batchSize must be a positive integer');
  const maxDeferred = options.maxDeferred ?? DEFAULT_MAX_DEFERRED;
  // With a bulk lane, a call carries as many upserts as a job should: cut at batchSize, a backfill
  // would go out as many calls each too small for the lane.
  const bulkCall = options.bulkCallSize ?? DEFAULT_BULK_CALL;
  if (!(Number.isInteger(bulkCall) && bulkCall >= 1)) throw new RangeError('applyEach: bulkCallSize must be a positive integer');
  const callSize = ctx.adapter.bulkLane && ctx.ledger.note && options.bulk !== 'never' ? Math.max(batchSize, bulkCall) : batchSize;
  if (!(Number.isInteger(maxDeferred) && maxDeferred >= 1)) throw new RangeError('applyEach: maxDeferred must be a positive integer');
  // Creates a holder may have written (or still holds) are looked up before they are sent: kept
  // apart, they fill batches of their own, one lookup each, instead of adding one to every batch.
  const apart = ctx.adapter.capabilities.nativeActivityUpsert !== true;
  const work: Planned[] = [];
  const held: Planned[] = [];
  let read: unknown[] = [];
  let next = 0;
  // A step of its own (a span) only when it answers something or reads the ledger: a first run
  // over new actions, its lookup skipped, hands its chunks straight on to the calls.
  const look = async (): Promise<Settled> => {
    const base = next - read.length;
    const { planned, rejected } = prepareAll(ctx, read);
    read = [];
    const settled: Settled = [];
    rejected.forEach((outcome, i) => outcome && settled.push({ index: base + i, outcome }));
    const items = planned.map((p) => extend(p, { index: base + p.index }));
    const lookup = async () => {
      const { replayed, rest, seen } = await lookUpAhead(ctx, items);
      for (const d of replayed) settled.push({ index: d.item.index, outcome: reported(d.item, d.outcome) });
      rest.forEach((item, j) => (apart && item.op === 'create' && heldOrPossiblyWritten(seen[j]!) ? held : work).push(item));
      return settled;
    };
    return settled.length === 0 && !readsAhead(ctx) ? lookup() : step(lookup);
  };
  // Creates held back until their parent is known: sent once `batchSize` of them are (no parent
  // read), the oldest when too many wait, the rest last (what `held` holds back too).
  const later: Planned[] | undefined = options.deferUnknownParents === false ? undefined : [];
  let calls = 0;
  const send = (items: Planned[], defer = true) => ((calls += 1), step(() => runWork(run, items, defer ? later : undefined)));
  for await (const input of inputs) {
    read.push(input);
    next += 1;
    if (read.length < batchSize) continue;
    const before = calls;
    yield await look();
    const taken = callTake(work.length, callSize, ctx.concurrency, ctx.adapter.capabilities.maxBatch);
    if (taken > 0) yield await send(work.splice(0, taken));
    if (held.length >= batchSize) yield await send(held.splice(0));
    if (!later) continue;
    // Only a call can have taught this Sync a parent.
    const ready = calls > before && later.length >= batchSize ? takeReady(ctx, later, batchSize) : [];
    if (ready.length > 0) yield await send(ready);
    while (later.length > maxDeferred) yield await send(later.splice(0, batchSize), false);
  }
  if (read.length > 0) yield await look();
  if (work.length > 0) yield await send(work.splice(0));
  if (held.length > 0) yield await send(held.splice(0));
  while (later && later.length > 0) yield await send(later.splice(0, batchSize), false);
}
