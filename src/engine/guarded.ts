/**
 * Guarded steps: `once` runs a side effect or a model call at most once per key and returns the
 * stored value afterwards; `handle` runs an event's handler at most once per event and applies
 * the actions it returns, with every `ctx.once` step keyed under the event.
 */
import type { ReadAnswer, ReadOptions } from './read.js';
import { hash as digest } from 'node:crypto';
import type { Action } from '../../schemas/action.js';
import type { FieldValue } from '../adapter.js';
import { ErrorCode, KeyConflictError, ValidationError, serializeError } from '../errors.js';
import { childKey, eventKey } from '../key.js';
import type { ClaimRequest, ClaimResult, CompleteRequest, FailRequest, LedgerBackend } from '../ledger/types.js';
import { claimKeys } from './claim-keys.js';
import { coalesce, type Coalesced } from './coalesce.js';
import { leaseKeeper, type LeaseKeeper } from './lease-keeper.js';
import { decodeEventResult, decodeStepResult, encodeError, encodeEventResult, encodeStepResult } from './payloads.js';
import type { LedgerClock } from '../ledger/clock.js';
import { redactedChange, type Outcome } from '../outcome.js';
import { ownerId } from '../owner.js';
import type { Prepared } from './prepare.js';
import { sharedKeyClashes, type KeyedItem } from './repeats.js';

export interface HandleEvent {
  source: string;
  eventId: string;
  occurredAt?: string;
}

/**
 * An action returned from a handler: source, eventId and occurredAt come from the event.
 * A field whose value is `undefined` is left out (as in JSON).
 */
export type HandlerAction = Omit<Action, 'source' | 'eventId' | 'occurredAt' | 'fields'> &
  Partial<Pick<Action, 'source' | 'eventId' | 'occurredAt'>> & { fields: Record<string, FieldValue | undefined> };

export interface HandleContext {
  key: string;
  event: HandleEvent;
  /**
   * Run `fn` for this event and step name and store its (JSON) value; a replay returns the stored
   * value. At most once while this process lives; after a crash between the effect and its record,
   * the step may run again (after the lease) with the same `stepKey`: pass it to the provider as its
   * idempotency key (Slack `client_msg_id`, Stripe `Idempotency-Key`) to make the effect exactly once.
   */
  once<T>(name: string, fn: (stepKey: string) => Promise<T> | T): Promise<T>;
  /**
   * `sync.read`: the records as the CRM holds them now (read again on a replay of the handler, never
   * stored). A decision a model makes from what it read is model output: make it inside `ctx.once`.
   */
  read(object: string, ids: readonly string[], options?: ReadOptions): Promise<ReadAnswer[]>;
}

export interface HandleResult {
  key: string;
  /** completed: this call ran the handler; replayed: it ran before; in_flight: another worker is running it; failed: some action failed. */
  status: 'completed' | 'replayed' | 'in_flight' | 'failed';
  outcomes: Outcome[];
}

export type Handler = (ctx: HandleContext) => Promise<readonly HandlerAction[] | void> | readonly HandlerAction[] | void;

export interface GuardedOptions {
  ledger: LedgerBackend;
  applyMany(actions: readonly unknown[]): Promise<Outcome[]>;
  /**
   * The engine's `prepare`. Given, `handle` refuses an event's actions that share a key but not
   * their fields or links before it hands the others to `applyMany`: for an `applyMany` that
   * carries other deliveries too (a worker's coalesced call), which cannot tell one event's
   * actions from another's. Without it, `applyMany` must refuse them itself (the Sync's does).
   */
  prepare?(action: unknown): Prepared;
  read(object: string, ids: readonly string[], options?: ReadOptions): Promise<ReadAnswer[]>;
  leaseMs: number;
  retentionMs: number | null;
  /** The ledger's clock: leases are measured on it. */
  clock: LedgerClock;
  sleep(ms: number): Promise<void>;
  /** How long concurrent steps wait to share one claim (and one completion) round trip, ms. Default 0: the current tick. */
  lingerMs?: number;
}

/** One attempt in progress: `ended` (made only when a second caller waits) settles, never rejects, when it ends. */
interface Running {
  ended?: Promise<void>;
  end?: () => void;
}

/** The ledger calls of every step of one engine, coalesced, and the keys this process is running now. */
interface Steps {
  claim: Coalesced<ClaimRequest, ClaimResult>;
  complete: Coalesced<CompleteRequest, boolean>;
  fail: Coalesced<FailRequest, boolean>;
  /** The keys this process is attempting now; a second caller of one waits for its attempt to end. */
  running: Map<string, Running>;
  /** Run `work` while the claim `key`/`token` is renewed: the claim stays alive exactly as long as the work runs. */
  keep<T>(key: string, token: number, work: () => Promise<T> | T): Promise<T>;
}

function steps(o: GuardedOptions): Steps {
  const linger = o.lingerMs ?? 0;
  return {
    claim: coalesce(async (reqs: ClaimRequest[]) => claimKeys(o.ledger, reqs, await o.clock.now()), linger),
    complete: coalesce(async (reqs: CompleteRequest[]) => o.ledger.complete(reqs, await o.clock.now()), linger),
    fail: coalesce(async (reqs: FailRequest[]) => o.ledger.fail(reqs, await o.clock.now()), linger),
    running: new Map(),
    keep: sharedKeeper(o),
  };
}

const sha = (value: unknown) => digest('sha256', JSON.stringify(value), 'base64url').slice(0, 32);

function definedFields(fields: Record<string, FieldValue | undefined> | undefined): Record<string, FieldValue> | undefined {
  if (!fields || typeof fields !== 'object') return fields as undefined;
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<string, FieldValue>;
}

/** A handler's action with the event's source, id and time filled in; one that cannot be read goes on as it is, to be rejected alone. */
function withEvent(a: HandlerAction, event: HandleEvent): unknown {
  try {
    const occurredAt = a.occurredAt ?? event.occurredAt;
    return { ...a, fields: definedFields(a.fields), source: a.source ?? event.source, eventId: a.eventId ?? event.eventId, ...(occurredAt ? { occurredAt } : {}) };
  } catch {
    return a;
  }
}

/**
 * One lease keeper for every step and event this engine runs at once: their claims are renewed
 * together (one round trip), and the keeper stops when nothing is held.
 */
function sharedKeeper(o: GuardedOptions): Steps['keep'] {
  let keeper: LeaseKeeper | undefined;
  let held = 0;
  return async (key, token, work) => {
    keeper ??= leaseKeeper({ ledger: o.ledger, leaseMs: o.leaseMs, clock: o.clock });
    const mine = keeper;
    mine.hold([{ key, token }]);
    held += 1;
    try {
      return await work();
    } finally {
      mine.drop([key]);
      held -= 1;
      if (held === 0 && keeper === mine) {
        mine.stop();
        keeper = undefined;
      }
    }
  };
}

/** What `attempt` answers when another worker holds the step (a value of its own, never a step's). */
const WAIT: unique symbol = Symbol('wait');

/** One attempt at a step: its value (stored or just made), or `WAIT` when another worker holds it. */
async function attempt<T>(o: GuardedOptions, s: Steps, key: string, fn: (stepKey: string) => Promise<T> | T): Promise<T | typeof WAIT> {
  const claim = await s.claim({ key, fingerprint: sha(['once', key]), leaseMs: o.leaseMs, retryFailed: true, owner: ownerId() });
  if (claim.outcome === 'completed') return decodeStepResult(claim.entry.result) as T;
  if (claim.outcome === 'conflict') throw new KeyConflictError(key, claim.entry);
  if (claim.outcome === 'in_progress') {
    // Another live worker runs this step: wait for its result, or for its lease to run out.
    await o.sleep(Math.max(10, Math.min(1_000, (claim.entry.leaseUntil ?? 0) - o.clock.peek())));
    return WAIT;
  }
  const token = claim.token!;
  let value: T;
  try {
    value = await s.keep(key, token, () => fn(key));
  } catch (err) {
    await s.fail({ key, token, error: encodeError(serializeError(err)) });
    throw err;
  }
  await s.complete({ key, token, result: encodeStepResult(value), retentionMs: o.retentionMs });
  return value;
}

async function once<T>(o: GuardedOptions, s: Steps, key: string, fn: (stepKey: string) => Promise<T> | T): Promise<T> {
  for (;;) {
    // The same key already running in this process: wait for it here instead of polling the ledger.
    const ahead = s.running.get(key);
    if (ahead) {
      await (ahead.ended ??= new Promise<void>((resolve) => (ahead.end = resolve)));
      continue;
    }
    const mine: Running = {};
    s.running.set(key, mine);
    try {
      const got = await attempt(o, s, key, fn);
      if (got !== WAIT) return got;
    } finally {
      s.running.delete(key);
      mine.end?.();
    }
  }
}

/**
 * Apply one event's actions. With `prepare`, those sharing a key but not their content are
 * `rejected` here, and only the others go to `applyMany`.
 */
async function applyEvent(o: GuardedOptions, inputs: readonly unknown[]): Promise<Outcome[]> {
  if (!o.prepare) return o.applyMany(inputs);
  const items: (KeyedItem & { prepared: Extract<Prepared, { ok: true }> })[] = [];
  inputs.forEach((input, index) => {
    const p = o.prepare!(input);
    if (p.ok) items.push({ index, key: p.key, action: p.action, prepared: p });
  });
  const { clashed } = sharedKeyClashes(items);
  if (clashed.length === 0) return o.applyMany(inputs);
  const outcomes: Outcome[] = [];
  for (const { item, outcome } of clashed) {
    const normalized = item.prepared.normalized;
    outcomes[item.index] = normalized ? { ...outcome, normalized: normalized.map((n) => redactedChange(n)) } : outcome;
  }
  const rest = inputs.flatMap((_, i) => (outcomes[i] ? [] : [i]));
  const applied = await o.applyMany(rest.map((i) => inputs[i]));
  rest.forEach((i, j) => (outcomes[i] = applied[j]!));
  return Array.from({ length: inputs.length }, (_, i) => outcomes[i]!);
}

/** Complete the event when every action completed, else fail it (it runs again on its next delivery). */
async function settleEvent(s: Steps, o: GuardedOptions, key: string, token: number, outcomes: Outcome[]): Promise<HandleResult> {
  const bad = outcomes.filter((x) => x.status === 'failed' || x.status === 'rejected' || x.status === 'in_flight');
  const summary = outcomes.map(({ key: k, status, recordId }) => ({ key: k, status, ...(recordId ? { recordId } : {}) }));
  if (bad.length > 0) {
    const error = encodeError({ name: 'CrmSyncError', code: ErrorCode.actionsIncomplete, message: `${bad.length} of ${outcomes.length} actions did not complete` });
    await s.fail({ key, token, error: { ...error, ...(encodeEventResult({ outcomes: summary }) as object) } });
    return { key, status: 'failed', outcomes };
  }
  await s.complete({ key, token, result: encodeEventResult({ outcomes: summary }), retentionMs: o.retentionMs });
  return { key, status: 'completed', outcomes };
}

async function handle(o: GuardedOptions, s: Steps, event: HandleEvent, fn: Handler): Promise<HandleResult> {
  if (!event?.source || !event.eventId) throw new ValidationError([{ path: event?.source ? 'eventId' : 'source', message: 'is required to handle an event' }]);
  const key = eventKey(event);
  const claim = await s.claim({ key, fingerprint: sha(['event', event.source, event.eventId]), leaseMs: o.leaseMs, retryFailed: true });
  if (claim.outcome === 'completed') {
    const { outcomes } = decodeEventResult(claim.entry.result);
    return { key, status: 'replayed', outcomes: outcomes.map((x) => ({ ...x, status: 'replayed', attempts: 0 })) };
  }
  if (claim.outcome === 'in_progress') return { key, status: 'in_flight', outcomes: [] };
  if (claim.outcome === 'conflict') throw new KeyConflictError(key, claim.entry);
  const token = claim.token!;
  const ctx: HandleContext = { key, event, once: (name, step) => once(o, s, childKey(key, name), step), read: o.read };
  let outcomes: Outcome[];
  try {
    outcomes = await s.keep(key, token, async () => applyEvent(o, ((await fn(ctx)) ?? []).map((a) => withEvent(a, event))));
  } catch (err) {
    await s.fail({ key, token, error: encodeError(serializeError(err)) });
    throw err;
  }
  return settleEvent(s, o, key, token, outcomes);
}

/** `once` and `handle` of one engine: concurrent calls share their claim and completion round trips. */
export function guardedSteps(options: GuardedOptions) {
  const s = steps(options);
  return {
    once: <T>(key: string, fn: (stepKey: string) => Promise<T> | T) => once(options, s, key, fn),
    handle: (event: HandleEvent, fn: Handler) => handle(options, s, event, fn),
  };
}
