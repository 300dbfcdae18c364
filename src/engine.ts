/**
 * createSync(): validate -> key -> claim -> dedupe window -> batch -> adapter (with retries)
 * -> complete. The only place that decides what a repeated action does.
 */
import { createHash } from 'node:crypto';
import { actionSchema, type Action } from '../schemas/action.js';
import { checkAgainstObjects } from '../schemas/objects.js';
import { formatZodIssues } from '../schemas/parse.js';
import { snapshotInput } from '../schemas/snapshot.js';
import { parentMemoKey, type ActivityWrite, type BatchContext, type CrmAdapter, type Fields, type RecordWrite, type WriteResult } from './adapter.js';
import { planBatches, runPool, type Batch } from './batcher.js';
import { claimKeys } from './claim.js';
import { dedupeWindow, leadersOf, windowId, type HeldSlot } from './dedupe-window.js';
import { CrmError, KeyConflictError, ValidationError, type SerializedError, type ValidationIssue } from './errors.js';
import { deriveKey, fingerprintOf, DEFAULT_BUCKET_MS } from './key.js';
import { ClaimLostError, leaseKeeper, type LeaseKeeper } from './lease-keeper.js';
import { ledgerClock } from './ledger-clock.js';
import type { ClaimResult, Json, LedgerBackend, LedgerEntry } from './ledger/types.js';
import { PendingItemsError, withRetry, type RetryOptions } from './retry.js';
import { guardedSteps, type Handler, type HandleEvent, type HandleResult } from './guarded.js';
import { OutcomeStatus, type Outcome } from './outcome.js';

export { OutcomeStatus, type Outcome } from './outcome.js';
export type { HandleContext, HandleEvent, HandleResult, HandlerAction } from './guarded.js';

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
   * itself durable (memory; Redis without AOF or with eviction), `after-failure` otherwise.
   */
  verifyCreates?: 'auto' | 'always' | 'after-failure';
  /** How long a confirmed dedupe-window slot is kept, so a late identical create is still caught, ms. Default 7 days (at least the window). */
  windowRetentionMs?: number;
  /** Injected clock (ms). Default Date.now. Leases are measured on the ledger's clock when it has one. */
  now?: () => number;
  /** Injected sleep, used for Retry-After waits and in-flight polling. */
  sleep?: (ms: number) => Promise<void>;
}

export interface Sync {
  apply(action: unknown): Promise<Outcome>;
  applyMany(actions: readonly unknown[]): Promise<Outcome[]>;
  handle(event: HandleEvent, fn: Handler): Promise<HandleResult>;
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

export type Prepared =
  | { ok: true; action: Action; key: string; fingerprint: string }
  | { ok: false; key: string; error: ValidationError };

interface Item {
  index: number;
  action: Action;
  key: string;
  fingerprint: string;
  keyless: boolean;
  windowId?: string;
  /** Event time, epoch ms: `occurredAt`, else the stored time of a retried entry, else the time applied. */
  at: number;
  /** The pending window slot this item holds. */
  slot?: HeldSlot;
  markId?: string;
  fieldHash?: string;
  token?: number;
  /** Claimed by takeover (a previous attempt may have written before dying). */
  recovered?: boolean;
  /** Attempts of the entry when claimed (recorded in a failed entry). */
  entryAttempts?: number;
  outcome?: Outcome;
  /** Same key earlier in this call: this item's outcome follows that one's. */
  leader?: Item;
  op: 'upsert' | 'create';
  object: string;
  coalesceId?: string;
}

interface StoredResult {
  status: OutcomeStatus;
  recordId?: string;
}

const DEFAULT_LEASE_MS = 5 * 60_000;
const DEFAULT_QUOTA_PAUSE_MS = 15 * 60_000;
const DEFAULT_WINDOW_MS = 10 * 60_000;
const DEFAULT_WINDOW_RETENTION_MS = 7 * 24 * 3_600_000;
const CLOCK_KEY_REASON = 'no eventId and no occurredAt: its key would come from the clock, so a re-run after the window writes it again (set requireOccurredAt: false to accept clock buckets)';
/** A mark that no field hash equals: the record may hold a write the ledger never saw confirmed. */
const UNKNOWN_MARK = JSON.stringify({ h: null, id: null });
const WRITTEN = new Set<OutcomeStatus>(['created', 'updated', 'unchanged']);

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 32);

/** Hash of the fields as the CRM will store them (key order does not matter). */
function fieldsHash(fields: Fields): string {
  return sha(Object.keys(fields).sort().map((k) => [k, fields[k]]));
}

/** A claim taken straight from a failed entry whose write surely never reached the CRM. */
function surelyUnwritten(entry: LedgerEntry): boolean {
  const failure = entry.error as { possiblyWritten?: boolean; attempts?: number } | null;
  return failure?.possiblyWritten === false && failure.attempts === entry.attempts - 1;
}

function storedOutcome(key: string, entry: LedgerEntry, status: OutcomeStatus): Outcome {
  const result = (entry.result ?? {}) as Partial<StoredResult>;
  return { key, status, ...(result.recordId ? { recordId: result.recordId } : {}), attempts: 0 };
}

export function createSync(options: SyncOptions): Sync {
  const { adapter, ledger } = options;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const windowMs = options.dedupeWindowMs ?? DEFAULT_WINDOW_MS;
  const bucketMs = options.bucketMs ?? (windowMs > 0 ? windowMs : DEFAULT_BUCKET_MS);
  const retentionMs = options.retentionMs ?? null;
  const retryFailed = options.retryFailed ?? true;
  const concurrency = options.concurrency ?? 1;
  const requireOccurredAt = options.requireOccurredAt ?? true;
  const verifyMode = options.verifyCreates ?? 'auto';
  const clock = ledgerClock(ledger, { now });
  const keepMs = options.windowRetentionMs ?? Math.max(DEFAULT_WINDOW_RETENTION_MS, retentionMs ?? 0);
  const window = dedupeWindow(ledger, { windowMs, pendingMs: leaseMs, keepMs });
  let verifyAlways: Promise<boolean> | undefined;
  const verifiesEveryCreate = () =>
    (verifyAlways ??= verifyMode === 'always' ? Promise.resolve(true) : verifyMode === 'after-failure' ? Promise.resolve(false) : Promise.resolve(ledger.isDurable?.() ?? false).then((d) => !d, () => true));
  const maxBatch = adapter.capabilities.maxBatch;
  /** Set after a quota error: nothing is sent to the CRM until `until`. */
  let stopped: { error: CrmError; until: number } | undefined;
  const quotaPauseMs = options.quotaPauseMs ?? DEFAULT_QUOTA_PAUSE_MS;

  const toCrmError = (err: unknown): CrmError => (err instanceof CrmError ? err : adapter.classifyError(err));

  function prepareAction(input: unknown, storedKey?: string): Prepared {
    // Read once into plain data: what is validated is what is written; an unreadable input is rejected alone.
    const snapshot = snapshotInput(input);
    if (!snapshot.ok) return { ok: false, key: storedKey ?? '', error: new ValidationError(snapshot.issues) };
    const parsed = actionSchema.safeParse(snapshot.value);
    if (!parsed.success) return { ok: false, key: storedKey ?? '', error: new ValidationError(formatZodIssues(parsed.error)) };
    const action = parsed.data;
    if (storedKey === undefined && requireOccurredAt && action.eventId === undefined && action.occurredAt === undefined) {
      return { ok: false, key: '', error: new ValidationError([{ path: 'occurredAt', message: CLOCK_KEY_REASON }]) };
    }
    // A stored action is retried under the key it was first given, never a re-derived one.
    const key = storedKey ?? deriveKey(action, { bucketMs, now });
    const issues: ValidationIssue[] = checkAgainstObjects(action, adapter.objects, { maxFieldLength: options.maxFieldLength });
    if (issues.length > 0) return { ok: false, key, error: new ValidationError(issues) };
    return { ok: true, action, key, fingerprint: fingerprintOf(action) };
  }

  function toItem(index: number, action: Action, key: string, fingerprint: string, storedAt?: number): Item {
    const keyless = action.eventId === undefined;
    const at = action.occurredAt !== undefined ? Date.parse(action.occurredAt) : storedAt ?? clock.peek();
    const item: Item = { index, action, key, fingerprint, keyless, at, op: action.op, object: action.object };
    // Only creates are windowed: a keyless upsert's external id is its key.
    if (keyless && windowMs > 0 && action.op === 'create') item.windowId = windowId(adapter.name, action);
    if (action.op === 'upsert') {
      item.coalesceId = action.externalId;
      item.markId = `m1:${sha([adapter.name, action.object, action.externalId])}`;
      item.fieldHash = fieldsHash(action.fields);
    }
    return item;
  }

  /** Everything one applyMany call holds, renewed by one keeper until it is settled. */
  interface CallState {
    keeper: LeaseKeeper;
    verifyAll: boolean;
  }

  /**
   * Failed entries keep the action (for retry-failed, under this same key), its event time, the
   * attempt they failed on and whether the write may have reached the CRM: the next claim that
   * follows directly of an entry that surely wrote nothing needs no lookup before creating. A
   * possibly written upsert also makes the record's "last written" mark unknown, so the next write
   * to it is never judged unchanged.
   */
  async function failEntries(state: CallState, items: Item[], error: (item: Item) => SerializedError, possiblyWritten: boolean): Promise<void> {
    const owned = items.filter((i) => i.token !== undefined);
    if (owned.length === 0) return;
    state.keeper.drop(owned.map((i) => i.key));
    await ledger.fail(
      owned.map((i) => ({
        key: i.key,
        token: i.token!,
        error: { ...error(i), action: i.action, at: i.at, attempts: i.entryAttempts ?? 1, possiblyWritten } as unknown as Json,
        ...(possiblyWritten && i.markId ? { mark: { id: i.markId, value: UNKNOWN_MARK } } : {}),
      })),
      await clock.now(),
    );
  }

  async function completeEntries(state: CallState, items: Item[]): Promise<void> {
    const owned = items.filter((i) => i.token !== undefined && i.outcome);
    if (owned.length === 0) return;
    state.keeper.drop(owned.map((i) => i.key));
    await ledger.complete(
      owned.map((i) => {
        const o = i.outcome!;
        const result: StoredResult = { status: o.status, ...(o.recordId ? { recordId: o.recordId } : {}) };
        const mark = i.markId && o.recordId && WRITTEN.has(o.status) ? { id: i.markId, value: JSON.stringify({ h: i.fieldHash, id: o.recordId }) } : undefined;
        return { key: i.key, token: i.token!, result: result as unknown as Json, retentionMs, ...(mark ? { mark } : {}) };
      }),
      await clock.now(),
    );
  }

  /** Give claims up without a result (nothing was written): claimable again at once. */
  async function releaseEntries(state: CallState, items: Item[]): Promise<void> {
    const owned = items.filter((i) => i.token !== undefined);
    if (owned.length === 0) return;
    state.keeper.drop(owned.map((i) => i.key));
    await ledger.release(owned.map((i) => ({ key: i.key, token: i.token! })), await clock.now());
    owned.forEach((i) => delete i.token);
  }

  type GroupResult = WriteResult | { ok: false; lost: true };
  const isLost = (r: GroupResult | undefined): r is { ok: false; lost: true } => r !== undefined && 'lost' in r;

  /** One CRM write per group, with retries, batch splitting and activity recovery. */
  async function runWrites(state: CallState, batch: Batch<Item>, groups: Item[][], context: BatchContext): Promise<{ results: GroupResult[]; attempts: number; ambiguous: boolean }> {
    const results: (GroupResult | undefined)[] = new Array(groups.length);
    const writes = groups.map((group) => {
      const lead = group[0]!.action;
      const fields = Object.assign({}, ...group.map((i) => i.action.fields)) as Fields;
      return batch.op === 'upsert'
        ? ({ key: group[0]!.key, object: batch.object, externalId: lead.externalId!, fields } satisfies RecordWrite)
        : ({ key: group[0]!.key, object: batch.object, parent: lead.target!, fields } satisfies ActivityWrite);
    });
    const open = () => writes.map((_, i) => i).filter((i) => !results[i] || (!isLost(results[i]) && !results[i]!.ok && (results[i] as { error: CrmError }).error.retryable));
    let attempts = 0;
    // After a takeover the dead worker's create may have committed, and a ledger that cannot vouch
    // for its history may have forgotten a create: look before creating.
    let ambiguous = state.verifyAll || groups.some((g) => g[0]!.recovered);
    /** Nothing leaves under a lost claim: confirm the claims of pending groups (renewing stale ones). */
    const confirmHeld = async () => {
      const pending = open();
      const lost = await state.keeper.confirm(pending.flatMap((i) => groups[i]!.map((item) => item.key)));
      if (lost.size === 0) return;
      for (const i of pending) if (groups[i]!.some((item) => lost.has(item.key))) results[i] = { ok: false, lost: true };
      throw new ClaimLostError([...lost]);
    };
    const sendContext: BatchContext = { memo: context.memo, beforeSend: confirmHeld };
    const call = async <T>(fn: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          await confirmHeld();
          return await fn();
        } catch (err) {
          // A claim lost while waiting: its group is dropped (the holder writes it); send the rest.
          if (err instanceof ClaimLostError) {
            if (open().length === 0) throw err;
            continue;
          }
          const crm = toCrmError(err);
          if (crm.ambiguous) ambiguous = true;
          throw crm;
        }
      }
    };
    try {
      await withRetry(async () => {
        if (stopped && now() < stopped.until) throw stopped.error;
        let pending = open();
        if (pending.length === 0) return;
        if (batch.op === 'create' && ambiguous && !adapter.capabilities.nativeActivityUpsert) {
          const found = await call(() => adapter.findActivities(batch.object, open().map((i) => writes[i] as ActivityWrite), sendContext));
          for (const i of open()) {
            const recordId = found.get(writes[i]!.key);
            if (recordId) results[i] = { ok: true, recordId, created: true };
          }
          if (open().length === 0) return;
        }
        attempts += 1;
        const res = await call(() => {
          pending = open();
          return batch.op === 'upsert'
            ? adapter.upsertRecords(batch.object, pending.map((i) => writes[i] as RecordWrite), sendContext)
            : adapter.createActivities(batch.object, pending.map((i) => writes[i] as ActivityWrite), sendContext);
        });
        let retryable: CrmError | undefined;
        pending.forEach((wi, j) => {
          // A 2xx that omits an input's result may still have written it: possibly written.
          const r = res[j] ?? { ok: false, error: new CrmError('the CRM returned no result for this input', { vendor: adapter.name, kind: 'transient', ambiguous: true }) };
          results[wi] = r;
          if (!r.ok && r.error.retryable) {
            retryable ??= r.error;
            if (r.error.ambiguous) ambiguous = true;
          }
        });
        if (retryable) throw new PendingItemsError(retryable);
      }, { ...options.retry, sleep });
    } catch (err) {
      if (!(err instanceof PendingItemsError) && !(err instanceof ClaimLostError)) {
        const crm = toCrmError(err);
        if (crm.kind === 'quota' && !(stopped && now() < stopped.until)) stopped = { error: crm, until: now() + (crm.retryAfterMs ?? quotaPauseMs) };
        const pending = open();
        if (crm.splittable && pending.length > 1) {
          const half = Math.ceil(pending.length / 2);
          for (const part of [pending.slice(0, half), pending.slice(half)]) {
            const sub = await runWrites(state, batch, part.map((i) => groups[i]!), context);
            part.forEach((wi, j) => (results[wi] = sub.results[j]));
            attempts += sub.attempts;
            ambiguous ||= sub.ambiguous;
          }
        } else {
          for (const i of pending) results[i] = { ok: false, error: crm };
        }
      }
    }
    return { results: results.map((r) => r ?? { ok: false, error: new CrmError('write was not attempted', { vendor: adapter.name, kind: 'transient' }) }), attempts, ambiguous };
  }

  async function executeBatch(state: CallState, batch: Batch<Item>, written: ReadonlyMap<string, string>): Promise<void> {
    // Parents upserted earlier in this call need no read: their ids were just confirmed by the CRM.
    const memo = new Map<string, string>();
    for (const group of batch.groups) {
      const parent = group[0]!.action.target;
      const id = parent && written.get(parentMemoKey(parent.object, parent.externalId));
      if (id) memo.set(parentMemoKey(parent!.object, parent!.externalId), id);
    }
    const { results, attempts, ambiguous } = await runWrites(state, batch, batch.groups, { memo });
    const done: Item[] = [];
    const failed: Item[] = [];
    const refused: Item[] = [];
    const lost: Item[] = [];
    batch.groups.forEach((group, g) => {
      const r = results[g]!;
      group.forEach((item, position) => {
        if (isLost(r)) {
          item.outcome = { key: item.key, status: 'in_flight', attempts };
          lost.push(item);
        } else if (r.ok) {
          // An activity belongs to its action alone (its key is on it): finding it means this action created it.
          const status: OutcomeStatus = batch.op === 'create' || (r.created && position === 0) ? 'created' : 'updated';
          item.outcome = { key: item.key, status, recordId: r.recordId, attempts };
          done.push(item);
        } else {
          item.outcome = { key: item.key, status: 'failed', error: r.error.toJSON(), attempts };
          // Refused credentials wrote nothing: give the claims back instead of recording a failure.
          (r.error.kind === 'auth' ? refused : failed).push(item);
        }
      });
    });
    // Lost claims belong to another worker now; the still-held ones of the same groups go back.
    for (const item of lost) if (state.keeper.lost(item.key)) {
      state.keeper.drop([item.key]);
      delete item.token;
    }
    await completeEntries(state, done);
    await failEntries(state, failed, (i) => i.outcome!.error!, ambiguous);
    await releaseEntries(state, [...refused, ...lost]);
    const slotted = [...done, ...failed, ...refused, ...lost].filter((i) => i.slot);
    state.keeper.dropSlots(slotted.map((i) => i.slot!.id));
    await window.settle(slotted.map((i) => ({ slot: i.slot!, written: i.outcome!.status !== 'failed' && i.outcome!.status !== 'in_flight' })), await clock.now());
  }

  function fromClaim(item: Item, claim: ClaimResult): Outcome | undefined {
    switch (claim.outcome) {
      case 'claimed':
        item.token = claim.token;
        item.entryAttempts = claim.entry.attempts;
        item.recovered = claim.entry.attempts > 1 && !surelyUnwritten(claim.entry);
        return undefined;
      case 'completed':
        return storedOutcome(item.key, claim.entry, item.keyless ? 'suppressed' : 'replayed');
      case 'in_progress':
        return { key: item.key, status: 'in_flight', attempts: 0 };
      case 'failed':
        return { key: item.key, status: 'failed', error: (claim.entry.error as SerializedError | null) ?? undefined, attempts: 0 };
      case 'conflict':
        return { key: item.key, status: 'rejected', error: new KeyConflictError(item.key, claim.entry).toJSON(), attempts: 0 };
    }
  }

  /**
   * The dedupe window for keyless creates we own. Identical ones in this call within the window of
   * each other (either side of a bucket boundary) follow one leader: it takes the slot, the rest
   * follow its outcome instead of seeing its pending hold as another worker's.
   */
  async function applyWindow(state: CallState, own: Item[]): Promise<{ suppressed: Item[]; followers: Map<Item, Item> }> {
    const candidates = own.filter((i) => !i.outcome && i.windowId);
    const leaders = leadersOf(candidates.map((i) => ({ id: i.windowId!, key: i.key, at: i.at })), windowMs);
    const followers = new Map<Item, Item>();
    const windowed: Item[] = [];
    candidates.forEach((item, j) => (leaders[j] === j ? windowed.push(item) : followers.set(item, candidates[leaders[j]!]!)));
    const verdicts = await window.acquire(windowed.map((i) => ({ id: i.windowId!, key: i.key, at: i.at })), await clock.now());
    const suppressed: Item[] = [];
    const yielded: Item[] = [];
    windowed.forEach((item, j) => {
      const v = verdicts[j]!;
      if (v.verdict === 'suppressed') {
        item.outcome = { key: item.key, status: 'suppressed', attempts: 0 };
        suppressed.push(item);
      } else if (v.verdict === 'in_flight') {
        item.outcome = { key: item.key, status: 'in_flight', attempts: 0 };
        yielded.push(item);
      } else item.slot = v.slot;
    });
    state.keeper.holdSlots(windowed.filter((i) => i.slot).map((i) => i.slot!));
    await releaseEntries(state, yielded);
    return { suppressed, followers };
  }

  /** Unchanged: a new key that would write exactly what this ledger last wrote to the record. */
  function findUnchanged(own: Item[], marks: Map<Item, string | undefined>): Item[] {
    const unchanged: Item[] = [];
    const writesPerRecord = new Map<string, number>();
    const recordOf = (i: Item) => `${i.object}\u0000${i.coalesceId}`;
    for (const item of own) if (!item.outcome && item.coalesceId !== undefined) writesPerRecord.set(recordOf(item), (writesPerRecord.get(recordOf(item)) ?? 0) + 1);
    for (const item of own) {
      if (item.outcome || item.fieldHash === undefined) continue;
      const mark = marks.get(item);
      if (!mark) continue;
      const last = JSON.parse(mark) as { h: string | null; id: string | null };
      // Two writes to one record in this call are coalesced instead: the later fields win.
      if (last.h !== null && last.id !== null && last.h === item.fieldHash && writesPerRecord.get(recordOf(item)) === 1) {
        item.outcome = { key: item.key, status: 'unchanged', recordId: last.id, attempts: 0 };
        unchanged.push(item);
      }
    }
    return unchanged;
  }

  async function settleFollowers(state: CallState, followers: Map<Item, Item>): Promise<void> {
    const follow = { done: [] as Item[], failed: [] as Item[], yielded: [] as Item[] };
    for (const [item, lead] of followers) {
      const o = lead.outcome!;
      if (WRITTEN.has(o.status) || o.status === 'suppressed' || o.status === 'replayed') {
        item.outcome = { key: item.key, status: 'suppressed', ...(o.recordId ? { recordId: o.recordId } : {}), attempts: 0 };
        follow.done.push(item);
      } else {
        item.outcome = { ...o, key: item.key, attempts: 0 };
        (o.status === 'failed' ? follow.failed : follow.yielded).push(item);
      }
    }
    await completeEntries(state, follow.done);
    await failEntries(state, follow.failed, (i) => i.outcome!.error!, false);
    await releaseEntries(state, follow.yielded);
  }

  async function writeAll(state: CallState, toWrite: Item[]): Promise<void> {
    const batches = planBatches(toWrite, maxBatch);
    const written = new Map<string, string>();
    for (const op of ['upsert', 'create'] as const) {
      await runPool(batches.filter((b) => b.op === op).map((b) => () => executeBatch(state, b, written)), concurrency);
      if (op === 'upsert') {
        for (const i of toWrite) if (i.op === 'upsert' && i.outcome?.recordId && WRITTEN.has(i.outcome.status)) written.set(parentMemoKey(i.object, i.action.externalId!), i.outcome.recordId);
      }
    }
  }

  async function applyInternal(inputs: readonly unknown[], stored?: readonly ({ key: string; at?: number } | undefined)[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array(inputs.length);
    const leaders = new Map<string, Item>();
    const items: Item[] = [];
    inputs.forEach((input, index) => {
      const pinned = stored?.[index];
      const p = prepareAction(input, pinned?.key);
      if (!p.ok) {
        outcomes[index] = { key: p.key, status: 'rejected', error: p.error.toJSON(), attempts: 0 };
        return;
      }
      const item = toItem(index, p.action, p.key, p.fingerprint, pinned?.at);
      const leader = leaders.get(p.key);
      if (leader) item.leader = leader;
      else leaders.set(p.key, item);
      items.push(item);
    });
    const own = items.filter((i) => !i.leader);

    if (own.length > 0) {
      const state: CallState = { keeper: leaseKeeper({ ledger, leaseMs, clock }), verifyAll: false };
      try {
        const claims = await claimKeys(
          ledger,
          own.map((i) => ({ key: i.key, fingerprint: i.fingerprint, leaseMs, retryFailed, ...(i.markId ? { markId: i.markId } : {}) })),
          await clock.now(),
        );
        const marks = new Map<Item, string | undefined>();
        own.forEach((item, j) => {
          item.outcome = fromClaim(item, claims[j]!);
          marks.set(item, claims[j]!.mark);
        });
        // Long calls (rate limits, model calls, slow CRMs) keep every claim alive while we work.
        state.keeper.hold(own.filter((i) => i.token !== undefined).map((i) => ({ key: i.key, token: i.token! })));
        const { suppressed, followers } = await applyWindow(state, own);
        const unchanged = findUnchanged(own, marks);
        await completeEntries(state, [...suppressed, ...unchanged]);
        const toWrite = own.filter((i) => !i.outcome && !followers.has(i));
        if (toWrite.some((i) => i.op === 'create')) state.verifyAll = await verifiesEveryCreate();
        await writeAll(state, toWrite);
        await settleFollowers(state, followers);
      } finally {
        state.keeper.stop();
      }
    }

    for (const item of items) {
      if (item.leader) {
        const lead = item.leader.outcome!;
        const status: OutcomeStatus = WRITTEN.has(lead.status) || lead.status === 'replayed' || lead.status === 'suppressed' ? (item.keyless ? 'suppressed' : 'replayed') : lead.status;
        outcomes[item.index] = { ...lead, status, attempts: 0 };
      } else {
        outcomes[item.index] = item.outcome!;
      }
    }
    return outcomes;
  }

  const applyMany = (inputs: readonly unknown[]) => applyInternal(inputs);

  async function retryStored(entries: readonly LedgerEntry[]): Promise<Outcome[]> {
    const stored = entries.map((e) => {
      const error = e.error as { action?: unknown; at?: unknown } | null;
      return { key: e.key, action: error?.action, at: typeof error?.at === 'number' ? error.at : undefined };
    });
    const runnable = stored.map((s, i) => (s.action && typeof s.action === 'object' ? i : -1)).filter((i) => i >= 0);
    const ran = await applyInternal(runnable.map((i) => stored[i]!.action), runnable.map((i) => ({ key: stored[i]!.key, ...(stored[i]!.at !== undefined ? { at: stored[i]!.at } : {}) })));
    const out: Outcome[] = stored.map((s) => ({
      key: s.key,
      status: 'rejected',
      error: new ValidationError([{ path: 'error.action', message: 'the stored entry carries no action to retry (a failed handle event or a job lock is retried by its own caller)' }]).toJSON(),
      attempts: 0,
    }));
    runnable.forEach((i, j) => (out[i] = ran[j]!));
    return out;
  }

  const { once, handle } = guardedSteps({ ledger, applyMany, leaseMs, retentionMs, clock, sleep });

  return {
    adapter,
    ledger,
    prepare: (action) => prepareAction(action),
    applyMany,
    retryStored,
    apply: async (action) => (await applyMany([action]))[0]!,
    handle,
    once: (key, fn) => once(key.startsWith('v1:') ? key : `v1:o:${sha(['once', key])}`, fn),
    async close() {
      await adapter.close?.();
      await ledger.close();
    },
  };
}

