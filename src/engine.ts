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
import { dedupeWindow, windowId } from './dedupe-window.js';
import { CrmError, KeyConflictError, ValidationError, type SerializedError, type ValidationIssue } from './errors.js';
import { deriveKey, fingerprintOf, DEFAULT_BUCKET_MS } from './key.js';
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
  /** Injected clock (ms). Default Date.now. */
  now?: () => number;
  /** Injected sleep, used for Retry-After waits and in-flight polling. */
  sleep?: (ms: number) => Promise<void>;
}

export interface Sync {
  apply(action: unknown): Promise<Outcome>;
  applyMany(actions: readonly unknown[]): Promise<Outcome[]>;
  handle(event: HandleEvent, fn: Handler): Promise<HandleResult>;
  /** A guarded side effect outside `handle`: `fn` runs at most once per `key`. */
  once<T>(key: string, fn: () => Promise<T> | T): Promise<T>;
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
  markId?: string;
  fieldHash?: string;
  token?: number;
  /** Claimed by takeover (a previous attempt may have written before dying). */
  recovered?: boolean;
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
const WRITTEN = new Set<OutcomeStatus>(['created', 'updated', 'unchanged']);

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 32);

/** Hash of the fields as the CRM will store them (key order does not matter). */
function fieldsHash(fields: Fields): string {
  return sha(Object.keys(fields).sort().map((k) => [k, fields[k]]));
}

/** A claim taken straight from a failed entry whose write surely never reached the CRM. */
function surelyUnwritten(entry: LedgerEntry): boolean {
  const failure = entry.error as { possiblyWritten?: boolean; token?: number } | null;
  return failure?.possiblyWritten === false && failure.token === entry.token - 1;
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
  const window = dedupeWindow(ledger, { windowMs, pendingMs: leaseMs });
  const maxBatch = adapter.capabilities.maxBatch;
  /** Set after a quota error: nothing is sent to the CRM until `until`. */
  let stopped: { error: CrmError; until: number } | undefined;
  const quotaPauseMs = options.quotaPauseMs ?? DEFAULT_QUOTA_PAUSE_MS;

  const toCrmError = (err: unknown): CrmError => (err instanceof CrmError ? err : adapter.classifyError(err));

  function prepare(input: unknown): Prepared {
    // Read once into plain data: what is validated is what is written; an unreadable input is rejected alone.
    const snapshot = snapshotInput(input);
    if (!snapshot.ok) return { ok: false, key: '', error: new ValidationError(snapshot.issues) };
    const parsed = actionSchema.safeParse(snapshot.value);
    if (!parsed.success) return { ok: false, key: '', error: new ValidationError(formatZodIssues(parsed.error)) };
    const action = parsed.data;
    const key = deriveKey(action, { bucketMs, now });
    const issues: ValidationIssue[] = checkAgainstObjects(action, adapter.objects, { maxFieldLength: options.maxFieldLength });
    if (issues.length > 0) return { ok: false, key, error: new ValidationError(issues) };
    return { ok: true, action, key, fingerprint: fingerprintOf(action) };
  }

  function toItem(index: number, action: Action, key: string, fingerprint: string): Item {
    const keyless = action.eventId === undefined;
    const item: Item = { index, action, key, fingerprint, keyless, op: action.op, object: action.object };
    if (keyless && windowMs > 0) item.windowId = windowId(adapter.name, action);
    if (action.op === 'upsert') {
      item.coalesceId = action.externalId;
      item.markId = `m1:${sha([adapter.name, action.object, action.externalId])}`;
      item.fieldHash = fieldsHash(action.fields);
    }
    return item;
  }

  /**
   * Failed entries keep the action (for retry-failed), the token they failed under and whether
   * the write may have reached the CRM: a later claim that follows directly (token + 1) of an
   * entry that surely wrote nothing needs no lookup before creating.
   */
  async function failEntries(items: Item[], error: (item: Item) => SerializedError, possiblyWritten: boolean): Promise<void> {
    const owned = items.filter((i) => i.token !== undefined);
    if (owned.length === 0) return;
    await ledger.fail(
      owned.map((i) => ({ key: i.key, token: i.token!, error: { ...error(i), action: i.action, token: i.token!, possiblyWritten } as unknown as Json })),
      now(),
    );
  }

  async function completeEntries(items: Item[]): Promise<void> {
    const owned = items.filter((i) => i.token !== undefined && i.outcome);
    if (owned.length === 0) return;
    await ledger.complete(
      owned.map((i) => {
        const o = i.outcome!;
        const result: StoredResult = { status: o.status, ...(o.recordId ? { recordId: o.recordId } : {}) };
        const mark = i.markId && o.recordId && WRITTEN.has(o.status) ? { id: i.markId, value: JSON.stringify({ h: i.fieldHash, id: o.recordId }) } : undefined;
        return { key: i.key, token: i.token!, result: result as unknown as Json, retentionMs, ...(mark ? { mark } : {}) };
      }),
      now(),
    );
  }

  /** One CRM write per group, with retries, batch splitting and activity recovery. */
  async function runWrites(batch: Batch<Item>, groups: Item[][], context: BatchContext = { memo: new Map() }): Promise<{ results: WriteResult[]; attempts: number; ambiguous: boolean }> {
    const results: (WriteResult | undefined)[] = new Array(groups.length);
    const writes = groups.map((group) => {
      const lead = group[0]!.action;
      const fields = Object.assign({}, ...group.map((i) => i.action.fields)) as Fields;
      return batch.op === 'upsert'
        ? ({ key: group[0]!.key, object: batch.object, externalId: lead.externalId!, fields } satisfies RecordWrite)
        : ({ key: group[0]!.key, object: batch.object, parent: lead.target!, fields } satisfies ActivityWrite);
    });
    const open = () => writes.map((_, i) => i).filter((i) => !results[i] || (!results[i]!.ok && results[i]!.error.retryable));
    let attempts = 0;
    // After a takeover the dead worker's create may have committed: look before creating.
    let ambiguous = groups.some((g) => g[0]!.recovered);
    const call = async <T>(fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        const crm = toCrmError(err);
        if (crm.ambiguous) ambiguous = true;
        throw crm;
      }
    };
    try {
      await withRetry(async () => {
        if (stopped && now() < stopped.until) throw stopped.error;
        let pending = open();
        if (batch.op === 'create' && ambiguous && !adapter.capabilities.nativeActivityUpsert) {
          const found = await call(() => adapter.findActivities(batch.object, pending.map((i) => writes[i] as ActivityWrite), context));
          for (const i of pending) {
            const recordId = found.get(writes[i]!.key);
            if (recordId) results[i] = { ok: true, recordId, created: true };
          }
          pending = open();
          if (pending.length === 0) return;
        }
        attempts += 1;
        const res = await call(() =>
          batch.op === 'upsert'
            ? adapter.upsertRecords(batch.object, pending.map((i) => writes[i] as RecordWrite))
            : adapter.createActivities(batch.object, pending.map((i) => writes[i] as ActivityWrite), context),
        );
        let retryable: CrmError | undefined;
        pending.forEach((wi, j) => {
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
      if (!(err instanceof PendingItemsError)) {
        const crm = toCrmError(err);
        if (crm.kind === 'quota' && !(stopped && now() < stopped.until)) stopped = { error: crm, until: now() + (crm.retryAfterMs ?? quotaPauseMs) };
        const pending = open();
        if (crm.splittable && pending.length > 1) {
          const half = Math.ceil(pending.length / 2);
          for (const part of [pending.slice(0, half), pending.slice(half)]) {
            const sub = await runWrites(batch, part.map((i) => groups[i]!), context);
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

  async function executeBatch(batch: Batch<Item>, written: ReadonlyMap<string, string>): Promise<void> {
    // Parents upserted earlier in this call need no read: their ids were just confirmed by the CRM.
    const memo = new Map<string, string>();
    for (const group of batch.groups) {
      const parent = group[0]!.action.target;
      const id = parent && written.get(parentMemoKey(parent.object, parent.externalId));
      if (id) memo.set(parentMemoKey(parent!.object, parent!.externalId), id);
    }
    const { results, attempts, ambiguous } = await runWrites(batch, batch.groups, { memo });
    const done: Item[] = [];
    const failed: Item[] = [];
    batch.groups.forEach((group, g) => {
      const r = results[g]!;
      group.forEach((item, position) => {
        if (r.ok) {
          // An activity belongs to its action alone (its key is on it): finding it means this action created it.
          const status: OutcomeStatus = batch.op === 'create' || (r.created && position === 0) ? 'created' : 'updated';
          item.outcome = { key: item.key, status, recordId: r.recordId, attempts };
          done.push(item);
        } else {
          item.outcome = { key: item.key, status: 'failed', error: r.error.toJSON(), attempts };
          failed.push(item);
        }
      });
    });
    await completeEntries(done);
    await failEntries(failed, (i) => i.outcome!.error!, ambiguous);
    await window.settle(
      [...done, ...failed].filter((i) => i.windowId).map((i) => ({ id: i.windowId!, owner: i.key, written: i.outcome!.status !== 'failed' })),
      now(),
    );
  }

  function fromClaim(item: Item, claim: ClaimResult): Outcome | undefined {
    switch (claim.outcome) {
      case 'claimed':
        item.token = claim.token;
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

  async function applyMany(inputs: readonly unknown[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array(inputs.length);
    const leaders = new Map<string, Item>();
    const items: Item[] = [];
    inputs.forEach((input, index) => {
      const p = prepare(input);
      if (!p.ok) {
        outcomes[index] = { key: p.key, status: 'rejected', error: p.error.toJSON(), attempts: 0 };
        return;
      }
      const item = toItem(index, p.action, p.key, p.fingerprint);
      const leader = leaders.get(p.key);
      if (leader) item.leader = leader;
      else leaders.set(p.key, item);
      items.push(item);
    });
    const own = items.filter((i) => !i.leader);

    if (own.length > 0) {
      const claims = await ledger.claim(
        own.map((i) => ({ key: i.key, fingerprint: i.fingerprint, leaseMs, retryFailed, ...(i.markId ? { markId: i.markId } : {}) })),
        now(),
      );
      const marks = new Map<Item, string | undefined>();
      own.forEach((item, j) => {
        item.outcome = fromClaim(item, claims[j]!);
        marks.set(item, claims[j]!.mark);
      });

      // Dedupe window for keyless actions we own. Identical keyless actions in this call with
      // different fallback keys (either side of a bucket boundary) share one slot: the first takes
      // it, the rest follow its outcome instead of seeing its pending hold as another worker's.
      const windowLeads = new Map<string, Item>();
      const followers = new Map<Item, Item>();
      const windowed: Item[] = [];
      for (const item of own) {
        if (item.outcome || !item.windowId) continue;
        const lead = windowLeads.get(item.windowId);
        if (lead) followers.set(item, lead);
        else {
          windowLeads.set(item.windowId, item);
          windowed.push(item);
        }
      }
      const verdicts = await window.acquire(windowed.map((i) => ({ id: i.windowId!, owner: i.key })), now());
      const suppressed: Item[] = [];
      const yielded: Item[] = [];
      windowed.forEach((item, j) => {
        if (verdicts[j] === 'suppressed') {
          item.outcome = { key: item.key, status: 'suppressed', attempts: 0 };
          suppressed.push(item);
        } else if (verdicts[j] === 'in_flight') {
          item.outcome = { key: item.key, status: 'in_flight', attempts: 0 };
          yielded.push(item);
        }
      });
      if (yielded.length > 0) {
        await ledger.release(yielded.map((i) => ({ key: i.key, token: i.token! })), now());
        yielded.forEach((i) => delete i.token);
      }

      // Unchanged: a new key that would write exactly what this ledger last wrote to the record.
      const unchanged: Item[] = [];
      const writesPerRecord = new Map<string, number>();
      const recordOf = (i: Item) => `${i.object}\u0000${i.coalesceId}`;
      for (const item of own) if (!item.outcome && item.coalesceId !== undefined) writesPerRecord.set(recordOf(item), (writesPerRecord.get(recordOf(item)) ?? 0) + 1);
      for (const item of own) {
        if (item.outcome || item.fieldHash === undefined) continue;
        const mark = marks.get(item);
        if (!mark) continue;
        const last = JSON.parse(mark) as { h: string; id: string };
        // Two writes to one record in this call are coalesced instead: the later fields win.
        if (last.h === item.fieldHash && writesPerRecord.get(recordOf(item)) === 1) {
          item.outcome = { key: item.key, status: 'unchanged', recordId: last.id, attempts: 0 };
          unchanged.push(item);
        }
      }
      await completeEntries([...suppressed, ...unchanged]);
      await window.settle(unchanged.filter((i) => i.windowId).map((i) => ({ id: i.windowId!, owner: i.key, written: true })), now());

      const toWrite = own.filter((i) => !i.outcome && !followers.has(i));
      const batches = planBatches(toWrite, maxBatch);
      // Long calls (rate limits, slow CRMs) keep their leases, so no other worker takes over mid-write.
      const renewal = setInterval(() => {
        const live = toWrite.filter((i) => !i.outcome && i.token !== undefined);
        if (live.length > 0) ledger.renew(live.map((i) => ({ key: i.key, token: i.token! })), leaseMs, now()).catch(() => undefined);
      }, Math.max(100, leaseMs / 3));
      renewal.unref();
      try {
        const written = new Map<string, string>();
        for (const op of ['upsert', 'create'] as const) {
          await runPool(batches.filter((b) => b.op === op).map((b) => () => executeBatch(b, written)), concurrency);
          if (op === 'upsert') {
            for (const i of toWrite) if (i.op === 'upsert' && i.outcome?.recordId && WRITTEN.has(i.outcome.status)) written.set(parentMemoKey(i.object, i.action.externalId!), i.outcome.recordId);
          }
        }
      } finally {
        clearInterval(renewal);
      }
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
      await completeEntries(follow.done);
      await failEntries(follow.failed, (i) => i.outcome!.error!, false);
      if (follow.yielded.length > 0) await ledger.release(follow.yielded.map((i) => ({ key: i.key, token: i.token! })), now());
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

  const { once, handle } = guardedSteps({ ledger, applyMany, leaseMs, retentionMs, now, sleep });

  return {
    adapter,
    ledger,
    prepare,
    applyMany,
    apply: async (action) => (await applyMany([action]))[0]!,
    handle,
    once: (key, fn) => once(key.startsWith('v1:') ? key : `v1:o:${sha(['once', key])}`, fn),
    async close() {
      await adapter.close?.();
      await ledger.close();
    },
  };
}

