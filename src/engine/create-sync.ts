/**
 * createSync(): the engine's wiring. An applyMany runs the stages in the order of the data flow:
 *
 *   prepare -> shared keys -> in-call repeats -> claim -> dedupe window -> unchanged -> plan + write (retry,
 *   recover, split) + settle -> follow
 *
 * each in its own file of this folder, taking and returning typed values (types.ts). One lease
 * keeper per call renews everything the call holds until it is settled.
 */
import type { CrmAdapter } from '../adapter.js';
import { dedupeWindow } from '../dedupe-window.js';
import { ValidationError } from '../errors.js';
import { DEFAULT_BUCKET_MS } from '../key.js';
import { ledgerClock } from '../ledger/clock.js';
import type { LedgerBackend, LedgerEntry } from '../ledger/types.js';
import type { Outcome } from '../outcome.js';
import type { RetryOptions } from '../retry.js';
import { syncTelemetry, type SyncTelemetry } from '../telemetry/sync-telemetry.js';
import type { TelemetryOption } from '../telemetry/types.js';
import { announcingRetryAfter } from '../telemetry/waits.js';
import { applyEachSteps, type ApplyEachOptions, type Settled } from './apply-each.js';
import { claimStage } from './claim.js';
import { deferStage } from './defer.js';
import { followStage } from './follow.js';
import { guardedSteps, type Handler, type HandleEvent, type HandleResult } from './guarded.js';
import { leaseKeeper } from './lease-keeper.js';
import { decodeActionFailure } from './payloads.js';
import { prepareAction, prepareAll, reported, type Prepared, type StoredKey } from './prepare.js';
import { parentMemo } from './parents.js';
import { quotaPause } from './quota.js';
import { repeatOutcome, sharedKeyClashes, splitRepeats, type SharedKeys } from './repeats.js';
import { completeEntries, failEntries } from './settle.js';
import type { BulkMode, Call, Decided, EngineContext, Planned } from './types.js';
import { unchangedStage } from './unchanged.js';
import { windowStage } from './window.js';
import { orderStage } from './order.js';
import { recordHoldStage } from './record-hold.js';
import { writeStage } from './write.js';
import { hash as digest } from 'node:crypto';
import { linkLevels } from './link-levels.js';
import { readRecords, type ReadAnswer, type ReadOptions } from './read.js';

export type { Prepared } from './prepare.js';
export type { ApplyEachOptions, Settled } from './apply-each.js';
export type { ReadAnswer, ReadOptions } from './read.js';
export type { SharedKeys } from './repeats.js';

export interface ApplyManyOptions {
  /**
   * Actions of the call that share a key but not their fields or links (after normalization).
   * `reject` (default): the call is one set of actions, as one event's; they are two actions the
   * key cannot tell apart, so every one of them is `rejected` naming the key and `intent`, and
   * none is written. `replay`: the call carries several deliveries (a file's lines, several
   * events' jobs); the first is applied and the later ones are `replayed`, as a redelivery with
   * other model text is in another call. Identical actions are one action either way.
   */
  sharedKeys?: SharedKeys;
  /**
   * Whether upserts go through the adapter's bulk lane (Salesforce Bulk API 2.0; docs/salesforce.md).
   * `auto` (default): an object's upserts in this call that reach the lane's `minRecords` (2,000 on
   * Salesforce); `always`: every upsert of an object the lane takes; `never`: none. A job an
   * earlier holder of a claim recorded is followed whatever this says. Without a lane: no effect.
   */
  bulk?: BulkMode;
}

export interface SyncOptions {
  adapter: CrmAdapter;
  ledger: LedgerBackend;
  /** Suppress identical keyless actions on the same record inside this window, ms. 0 turns it off. Default 10 min. */
  dedupeWindowMs?: number;
  /** Period bucket of keyless fallback keys, ms. Default: the dedupe window (or 10 min). */
  bucketMs?: number;
  /** How long a claim is owned before another worker may take it over, ms. Default 5 min. */
  leaseMs?: number;
  /** Keep completed entries this long (then `prune` removes them), ms. Default: keep. */
  retentionMs?: number | null;
  /** Take over failed entries when the same action arrives again. Default true. */
  retryFailed?: boolean;
  /** Retry policy for CRM calls. */
  retry?: RetryOptions;
  /** Batches written in parallel inside one applyMany. Default 1. */
  concurrency?: number;
  /** Longest string field value accepted. Default 65,536. */
  maxFieldLength?: number;
  /** Most links one action may carry (duplicates merged first); more is `rejected`. Default 10. */
  maxLinks?: number;
  /**
   * With field definitions (the adapter's `fieldDefinitions`): bring each value to the CRM's form
   * where that cannot change its meaning (trim, an enumeration's case or label, a numeric string,
   * an ISO date's wire form) before checking it. `false`: a value must already be in that form.
   * Default true.
   */
  normalize?: boolean;
  /** After a quota error (daily limit spent), send nothing to the CRM for this long, ms (or the error's Retry-After). Default 15 min. */
  quotaPauseMs?: number;
  /**
   * Reject an action with neither `eventId` nor `occurredAt` (its key would come from the clock, so
   * a re-run after the window writes it again). Default true. False restores clock buckets: such
   * actions are then protected only while a re-run falls in the same bucket or the same window.
   */
  requireOccurredAt?: boolean;
  /**
   * When to look activity keys up in the CRM before creating them (CRMs without a native upsert
   * on the key, such as HubSpot notes). `after-failure`: after an ambiguous failure or a takeover.
   * `always`: before every create. `auto` (default): `always` on a ledger that does not report
   * itself durable (memory; Redis without AOF or with eviction); otherwise `after-failure`, and
   * also before creating an activity whose event has no `occurredAt` or is older than the ledger
   * (its `bornAt`) plus BIRTH_MARGIN_MS: a new or moved ledger cannot vouch for those.
   */
  verifyCreates?: 'auto' | 'always' | 'after-failure';
  /**
   * How writes to one record are ordered over time. `event` (default): the ledger keeps, per record
   * and field, the event time of the newest value written through it, and a field is not sent for
   * an older event (that action is `superseded`, or `updated` listing the fields it left); writes
   * of one record from several workers go one at a time. `arrival`: the last write to arrive wins
   * (field times are still recorded, for a Sync in `event` order on the same ledger).
   */
  order?: 'event' | 'arrival';
  /** How long a confirmed dedupe-window slot is kept, so a late identical create is still caught, ms. Default 7 days (at least the window). */
  windowRetentionMs?: number;
  /**
   * How long concurrent `once` / `ctx.once` / `handle` calls wait to share one ledger round trip
   * for their claims (and one for their completions), ms. Default 0: the calls of the current tick.
   */
  onceLingerMs?: number;
  /** Injected clock (ms). Default Date.now. Leases are measured on the ledger's clock when it has one. */
  now?: () => number;
  /** Injected sleep, used for Retry-After waits and in-flight polling. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * OpenTelemetry spans and metrics (docs/operations.md): `{ tracerProvider, meterProvider }` to
   * use these providers, `false` for none. Default: the global providers once an SDK registered
   * them (`@opentelemetry/api` is an optional peer, loaded only then); nothing otherwise.
   */
  telemetry?: TelemetryOption;
}

export interface Sync {
  apply(action: unknown): Promise<Outcome>;
  applyMany(actions: readonly unknown[], options?: ApplyManyOptions): Promise<Outcome[]>;
  /**
   * Apply a long list or stream of actions in calls sized by the work they carry: every
   * `batchSize` actions are looked up in the ledger first (one read); rejected input and keys
   * already completed are answered at once and take no room in a call, and the rest goes out in
   * calls of at least `batchSize` actions that need a claim and a write (fewer at the end); creates
   * found held or possibly written go out apart, last. Meant for walking a list that may have been
   * walked before (a restarted worker, a sync run again after a crash): what is left between the
   * completed actions (failed, held by a dead process) goes out in full batches, with one key
   * lookup each, not a few per chunk. Yields each step's outcomes with their input index (not in
   * input order; every input once), the outcomes `applyMany` gives. Creates whose parent this
   * Sync does not know yet are held back until it does, or until the end (`deferUnknownParents`).
   * Stopping the iteration early leaves the actions read but not yet sent unclaimed, and those
   * held back failed as surely unwritten (retried under their keys).
   */
  applyEach(actions: Iterable<unknown> | AsyncIterable<unknown>, options?: ApplyEachOptions): AsyncIterable<Settled>;
  handle(event: HandleEvent, fn: Handler): Promise<HandleResult>;
  /**
   * Records of a record object by external id (or by a `lookupBy` field with `{ by }`): one answer
   * per id, in order, `{ found: true, recordId, externalId, fields, links? }` or `{ found: false }`.
   * Batched to the CRM's limit, read-after-write consistent (never a search index), retried like a
   * write; touches no ledger and caches nothing. Answers only the allowlisted and `readFields`
   * fields. Throws a ValidationError for a bad request and a CrmError for a failed read.
   */
  read(object: string, ids: readonly string[], options?: ReadOptions): Promise<ReadAnswer[]>;
  /**
   * A guarded side effect outside `handle`: `fn` runs at most once per `key` while this process
   * lives, and gets the step's stable key: pass it to the provider as its idempotency key, since
   * after a crash between the effect and its record the step runs again (after the lease).
   */
  once<T>(key: string, fn: (stepKey: string) => Promise<T> | T): Promise<T>;
  /**
   * Re-apply stored failed entries (`ledger.list({ status: 'failed' })`) under their stored keys,
   * never re-derived: what `crm-upsert retry-failed` runs. Entries that carry no action (failed
   * `handle` events, job locks) get a `rejected` outcome naming why.
   */
  retryStored(entries: readonly LedgerEntry[]): Promise<Outcome[]>;
  /** Validate and key an action without claiming or writing anything. */
  prepare(action: unknown): Prepared;
  readonly adapter: CrmAdapter;
  readonly ledger: LedgerBackend;
  close(): Promise<void>;
}

const DEFAULT_LEASE_MS = 5 * 60_000;
const DEFAULT_QUOTA_PAUSE_MS = 15 * 60_000;
const DEFAULT_WINDOW_MS = 10 * 60_000;
const DEFAULT_WINDOW_RETENTION_MS = 7 * 24 * 3_600_000;
/**
 * `verifyCreates: 'auto'` also looks up creates of events up to this long after the ledger's
 * birth: an event's time comes from its source's clock, the birth from the ledger's.
 */
export const BIRTH_MARGIN_MS = 5 * 60_000;

/** The event time before which `auto` looks creates up: the ledger's birth plus the margin; every create when it cannot say. */
async function birthLine(ledger: LedgerBackend): Promise<number> {
  try {
    const born = await ledger.bornAt?.();
    return typeof born === 'number' && Number.isFinite(born) ? born + BIRTH_MARGIN_MS : Infinity;
  } catch {
    return Infinity;
  }
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function engineContext(options: SyncOptions, telemetry: SyncTelemetry = syncTelemetry(options)): EngineContext {
  const { adapter, ledger } = telemetry;
  const now = options.now ?? Date.now;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const windowMs = options.dedupeWindowMs ?? DEFAULT_WINDOW_MS;
  const retentionMs = options.retentionMs ?? null;
  const verify = options.verifyCreates ?? 'auto';
  let verifyAll: Promise<boolean> | undefined;
  let verifyBefore: Promise<number> | undefined;
  return {
    adapter, ledger, now, leaseMs, windowMs, retentionMs,
    clock: ledgerClock(ledger, { now }),
    sleep: announcingRetryAfter(options.sleep ?? realSleep, adapter.name),
    pause: options.sleep ?? realSleep,
    bucketMs: options.bucketMs ?? (windowMs > 0 ? windowMs : DEFAULT_BUCKET_MS),
    retryFailed: options.retryFailed ?? true,
    concurrency: options.concurrency ?? 1,
    requireOccurredAt: options.requireOccurredAt ?? true,
    maxFieldLength: options.maxFieldLength,
    maxLinks: options.maxLinks,
    linkLevels: linkLevels(adapter.objects, adapter.name),
    normalize: options.normalize ?? true,
    order: options.order ?? 'event',
    retry: options.retry,
    window: dedupeWindow(ledger, { windowMs, pendingMs: leaseMs, keepMs: options.windowRetentionMs ?? Math.max(DEFAULT_WINDOW_RETENTION_MS, retentionMs ?? 0) }),
    quota: quotaPause({ now, pauseMs: options.quotaPauseMs ?? DEFAULT_QUOTA_PAUSE_MS }),
    parents: parentMemo({ now }),
    verifiesEveryCreate: () =>
      (verifyAll ??= verify !== 'auto' ? Promise.resolve(verify === 'always') : Promise.resolve(ledger.isDurable?.() ?? false).then((d) => !d, () => true)),
    verifiesBefore: () => (verifyBefore ??= verify !== 'auto' ? Promise.resolve(-Infinity) : birthLine(ledger)),
  };
}

const ORDERED: ReadonlySet<Outcome['status']> = new Set(['created', 'updated', 'unchanged', 'superseded']);

/** An upsert written without an event time was ordered by its arrival: its outcome says so. */
const orderedBy = (ctx: EngineContext, { item, outcome }: Decided): Outcome =>
  ctx.order === 'event' && item.op === 'upsert' && item.action.occurredAt === undefined && ORDERED.has(outcome.status) ? { ...outcome, orderedBy: 'arrival' } : outcome;

/**
 * How a call runs. `lookedUp`: a walk's lookup already read these keys (none was answered).
 * `defer`: hold back creates whose parent is not known yet (defer.ts), handing their indexes to it.
 */
export interface CallOptions {
  lookedUp?: boolean;
  bulk?: BulkMode;
  defer?: (indexes: readonly number[]) => void;
}

/**
 * Claim, window, unchanged, (defer,) write and follow the call's leaders; every claim is settled
 * before it returns. Outcomes by input index (stages pass new values along, so the index is the
 * item's identity); a deferred item's outcome is its held-back failure.
 */
async function runCall(ctx: EngineContext, leaders: readonly Planned[], options: CallOptions = {}): Promise<Map<number, Outcome>> {
  if (leaders.length === 0) return new Map();
  const keeper = leaseKeeper({ ledger: ctx.ledger, leaseMs: ctx.leaseMs, clock: ctx.clock });
  try {
    const writesCreates = leaders.some((i) => i.op === 'create');
    const verifyAll = writesCreates && (await ctx.verifiesEveryCreate());
    const call: Call = { keeper, verifyAll, verifyBefore: writesCreates && !verifyAll ? await ctx.verifiesBefore() : -Infinity, bulk: options.bulk ?? 'auto' };
    const claimed = await claimStage(ctx, call, leaders, options.lookedUp);
    const hold = await recordHoldStage(ctx, call, claimed.held);
    const windowed = await windowStage(ctx, call, hold.held);
    const same = unchangedStage(windowed.pass);
    const ordered = orderStage(ctx, same.pass);
    const deferral = options.defer ? deferStage(ctx, ordered.pass) : { pass: ordered.pass, deferred: [] };
    await completeEntries(ctx, call, [...windowed.suppressed, ...same.unchanged, ...ordered.superseded]);
    await failEntries(ctx, call, deferral.deferred, false);
    options.defer?.(deferral.deferred.map((d) => d.item.index));
    const written = await writeStage(ctx, call, deferral.pass);
    const decided = new Map<number, Outcome>([...claimed.answered, ...hold.waited, ...windowed.suppressed, ...windowed.yielded, ...same.unchanged, ...ordered.superseded, ...deferral.deferred, ...written].map((d: Decided) => [d.item.index, orderedBy(ctx, d)]));
    for (const d of await followStage(ctx, call, windowed.followers, (leader) => decided.get(leader.index)!)) decided.set(d.item.index, d.outcome);
    return decided;
  } finally {
    keeper.stop();
  }
}

export function createSync(options: SyncOptions): Sync {
  const telemetry = syncTelemetry(options);
  const ctx = engineContext(options, telemetry);
  const { adapter, ledger } = ctx;

  async function applyInternal(inputs: readonly unknown[], stored?: readonly (StoredKey | undefined)[], sharedKeys: SharedKeys = 'reject', bulk?: BulkMode): Promise<Outcome[]> {
    const prepared = prepareAll(ctx, inputs, stored);
    const { pass: planned, clashed } = sharedKeys === 'reject' ? sharedKeyClashes(prepared.planned) : { pass: prepared.planned, clashed: [] };
    const { leaders, repeats } = splitRepeats(planned);
    const decided = await runCall(ctx, leaders, { bulk });
    const outcomes = prepared.rejected;
    for (const { item, outcome } of clashed) outcomes[item.index] = reported(item, outcome);
    for (const item of leaders) outcomes[item.index] = reported(item, decided.get(item.index)!);
    for (const { item, leader } of repeats) outcomes[item.index] = reported(item, repeatOutcome(item, decided.get(leader.index)!));
    return Array.from({ length: inputs.length }, (_, i) => outcomes[i]!);
  }

  const retryStored = telemetry.retryStored(async (entries: readonly LedgerEntry[]): Promise<Outcome[]> => {
    const stored = entries.map((e) => {
      const retry = decodeActionFailure(e.error)?.retry;
      return { key: e.key, action: retry?.action, at: retry && Number.isFinite(retry.at) ? retry.at : undefined };
    });
    const runnable = stored.flatMap((s, i) => (s.action && typeof s.action === 'object' ? [i] : []));
    const ran = await applyInternal(runnable.map((i) => stored[i]!.action), runnable.map((i) => ({ key: stored[i]!.key, ...(stored[i]!.at !== undefined ? { at: stored[i]!.at } : {}) })));
    const noAction = new ValidationError([{ path: 'error.action', message: 'the stored entry carries no action to retry (a failed handle event or a job lock is retried by its own caller)' }]).toJSON();
    const out: Outcome[] = stored.map((s) => ({ key: s.key, status: 'rejected', error: noAction, attempts: 0 }));
    runnable.forEach((i, j) => (out[i] = ran[j]!));
    return out;
  });

  const applyOneSet = telemetry.applyMany((inputs: readonly unknown[], bulk?: BulkMode) => applyInternal(inputs, undefined, 'reject', bulk));
  const applyDeliveries = telemetry.applyMany((inputs: readonly unknown[], bulk?: BulkMode) => applyInternal(inputs, undefined, 'replay', bulk));
  const applyMany = (inputs: readonly unknown[], many: ApplyManyOptions = {}) => (many.sharedKeys === 'replay' ? applyDeliveries(inputs, many.bulk) : applyOneSet(inputs, many.bulk));
  // Each step is one apply_many span: its outcomes are counted once, where they were settled.
  const step = async (fn: () => Promise<Settled>): Promise<Settled> => {
    let settled: Settled = [];
    await telemetry.applyStep(async () => (settled = await fn()).map((s) => s.outcome))();
    return settled;
  };
  const applyEach = (actions: Iterable<unknown> | AsyncIterable<unknown>, each: ApplyEachOptions = {}) =>
    applyEachSteps(ctx, (leaders, defer) => runCall(ctx, leaders, { lookedUp: true, defer, bulk: each.bulk }), actions, each, step);
  const read = (object: string, ids: readonly string[], readOptions?: ReadOptions) => readRecords(ctx, object, ids, readOptions);
  const { once, handle } = guardedSteps({ ledger, applyMany, read, leaseMs: ctx.leaseMs, retentionMs: ctx.retentionMs, clock: ctx.clock, sleep: options.sleep ?? realSleep, lingerMs: options.onceLingerMs });
  const sha = (value: unknown) => digest('sha256', JSON.stringify(value), 'base64url').slice(0, 32);

  return {
    adapter: options.adapter,
    ledger: options.ledger,
    prepare: (action) => prepareAction(ctx, action),
    applyMany,
    applyEach,
    retryStored,
    read,
    apply: async (action) => (await applyOneSet([action]))[0]!,
    handle: telemetry.handle(handle),
    once: (key, fn) => once(key.startsWith('v1:') ? key : `v1:o:${sha(['once', key])}`, fn),
    async close() {
      await adapter.close?.();
      await ledger.close();
      await telemetry.flush();
    },
  };
}
