/**
 * Guarded steps: `once` runs a side effect or a model call at most once per key and returns the
 * stored value afterwards; `handle` runs an event's handler at most once per event and applies
 * the actions it returns, with every `ctx.once` step keyed under the event.
 */
import { createHash } from 'node:crypto';
import type { Action } from '../../schemas/action.js';
import type { FieldValue } from '../adapter.js';
import { ErrorCode, KeyConflictError, ValidationError, serializeError } from '../errors.js';
import { childKey, eventKey } from '../key.js';
import type { LedgerBackend } from '../ledger/types.js';
import { claimKeys } from './claim-keys.js';
import { leaseKeeper } from './lease-keeper.js';
import { decodeEventResult, decodeStepResult, encodeError, encodeEventResult, encodeStepResult } from './payloads.js';
import type { LedgerClock } from '../ledger/clock.js';
import type { Outcome } from '../outcome.js';

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
  leaseMs: number;
  retentionMs: number | null;
  /** The ledger's clock: leases are measured on it. */
  clock: LedgerClock;
  sleep(ms: number): Promise<void>;
}

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 32);

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

/** Run `work` while the claim `key`/`token` is renewed: the claim stays alive exactly as long as the work runs. */
async function keptAlive<T>(o: GuardedOptions, key: string, token: number, work: () => Promise<T>): Promise<T> {
  const keeper = leaseKeeper({ ledger: o.ledger, leaseMs: o.leaseMs, clock: o.clock });
  keeper.hold([{ key, token }]);
  try {
    return await work();
  } finally {
    keeper.stop();
  }
}

async function once<T>(o: GuardedOptions, key: string, fn: (stepKey: string) => Promise<T> | T): Promise<T> {
  const fingerprint = sha(['once', key]);
  for (;;) {
    const [claim] = await claimKeys(o.ledger, [{ key, fingerprint, leaseMs: o.leaseMs, retryFailed: true }], await o.clock.now());
    if (claim!.outcome === 'completed') return decodeStepResult(claim!.entry.result) as T;
    if (claim!.outcome === 'conflict') throw new KeyConflictError(key, claim!.entry);
    if (claim!.outcome === 'in_progress') {
      // Another live worker runs this step: wait for its result, or for its lease to run out.
      await o.sleep(Math.max(10, Math.min(1_000, (claim!.entry.leaseUntil ?? 0) - o.clock.peek())));
      continue;
    }
    const token = claim!.token!;
    let value: T;
    try {
      value = await keptAlive(o, key, token, async () => fn(key));
    } catch (err) {
      await o.ledger.fail([{ key, token, error: encodeError(serializeError(err)) }], await o.clock.now());
      throw err;
    }
    await o.ledger.complete([{ key, token, result: encodeStepResult(value), retentionMs: o.retentionMs }], await o.clock.now());
    return value;
  }
}

/** Complete the event when every action completed, else fail it (it runs again on its next delivery). */
async function settleEvent(o: GuardedOptions, key: string, token: number, outcomes: Outcome[]): Promise<HandleResult> {
  const bad = outcomes.filter((x) => x.status === 'failed' || x.status === 'rejected' || x.status === 'in_flight');
  const summary = outcomes.map(({ key: k, status, recordId }) => ({ key: k, status, ...(recordId ? { recordId } : {}) }));
  if (bad.length > 0) {
    const error = encodeError({ name: 'CrmSyncError', code: ErrorCode.actionsIncomplete, message: `${bad.length} of ${outcomes.length} actions did not complete` });
    await o.ledger.fail([{ key, token, error: { ...error, ...(encodeEventResult({ outcomes: summary }) as object) } }], await o.clock.now());
    return { key, status: 'failed', outcomes };
  }
  await o.ledger.complete([{ key, token, result: encodeEventResult({ outcomes: summary }), retentionMs: o.retentionMs }], await o.clock.now());
  return { key, status: 'completed', outcomes };
}

async function handle(o: GuardedOptions, event: HandleEvent, fn: Handler): Promise<HandleResult> {
  if (!event?.source || !event.eventId) throw new ValidationError([{ path: event?.source ? 'eventId' : 'source', message: 'is required to handle an event' }]);
  const key = eventKey(event);
  const [claim] = await claimKeys(o.ledger, [{ key, fingerprint: sha(['event', event.source, event.eventId]), leaseMs: o.leaseMs, retryFailed: true }], await o.clock.now());
  if (claim!.outcome === 'completed') {
    const { outcomes } = decodeEventResult(claim!.entry.result);
    return { key, status: 'replayed', outcomes: outcomes.map((x) => ({ ...x, status: 'replayed', attempts: 0 })) };
  }
  if (claim!.outcome === 'in_progress') return { key, status: 'in_flight', outcomes: [] };
  if (claim!.outcome === 'conflict') throw new KeyConflictError(key, claim!.entry);
  const token = claim!.token!;
  const ctx: HandleContext = { key, event, once: (name, step) => once(o, childKey(key, name), step) };
  let outcomes: Outcome[];
  try {
    outcomes = await keptAlive(o, key, token, async () => o.applyMany(((await fn(ctx)) ?? []).map((a) => withEvent(a, event))));
  } catch (err) {
    await o.ledger.fail([{ key, token, error: encodeError(serializeError(err)) }], await o.clock.now());
    throw err;
  }
  return settleEvent(o, key, token, outcomes);
}

export function guardedSteps(options: GuardedOptions) {
  return {
    once: <T>(key: string, fn: (stepKey: string) => Promise<T> | T) => once(options, key, fn),
    handle: (event: HandleEvent, fn: Handler) => handle(options, event, fn),
  };
}
