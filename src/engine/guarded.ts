/**
 * Guarded steps: `once` runs a side effect or a model call at most once per key and returns the
 * stored value afterwards; `handle` runs an event's handler at most once per event and applies
 * the actions it returns, with every `ctx.once` step keyed under the event.
 */
import { createHash } from 'node:crypto';
import type { Action } from '../../schemas/action.js';
import type { FieldValue } from '../adapter.js';
import { KeyConflictError, ValidationError, serializeError } from '../errors.js';
import { childKey, eventKey } from '../key.js';
import type { Json, LedgerBackend } from '../ledger/types.js';
import { claimKeys } from './claim-keys.js';
import { leaseKeeper } from './lease-keeper.js';
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

export function guardedSteps(options: GuardedOptions) {
  const { ledger, applyMany, leaseMs, retentionMs, clock, sleep } = options;

  /** Run `work` while the claim `key`/`token` is renewed; the claim stays alive exactly as long as the work runs. */
  async function keptAlive<T>(key: string, token: number, work: () => Promise<T>): Promise<T> {
    const keeper = leaseKeeper({ ledger, leaseMs, clock });
    keeper.hold([{ key, token }]);
    try {
      return await work();
    } finally {
      keeper.stop();
    }
  }

  async function once<T>(key: string, fn: (stepKey: string) => Promise<T> | T): Promise<T> {
    const fingerprint = sha(['once', key]);
    for (;;) {
      const [claim] = await claimKeys(ledger, [{ key, fingerprint, leaseMs, retryFailed: true }], await clock.now());
      if (claim!.outcome === 'completed') return ((claim!.entry.result as { v?: unknown } | null)?.v ?? undefined) as T;
      if (claim!.outcome === 'conflict') throw new KeyConflictError(key, claim!.entry);
      if (claim!.outcome === 'in_progress') {
        // Another live worker runs this step: wait for its result, or for its lease to run out.
        await sleep(Math.max(10, Math.min(1_000, (claim!.entry.leaseUntil ?? 0) - clock.peek())));
        continue;
      }
      const token = claim!.token!;
      let value: T;
      try {
        value = await keptAlive(key, token, async () => fn(key));
      } catch (err) {
        await ledger.fail([{ key, token, error: serializeError(err) as unknown as Json }], await clock.now());
        throw err;
      }
      await ledger.complete([{ key, token, result: { v: (value ?? null) as unknown as Json }, retentionMs }], await clock.now());
      return value;
    }
  }

  async function handle(event: HandleEvent, fn: Handler): Promise<HandleResult> {
    if (!event?.source || !event.eventId) throw new ValidationError([{ path: event?.source ? 'eventId' : 'source', message: 'is required to handle an event' }]);
    const key = eventKey(event);
    const [claim] = await claimKeys(ledger, [{ key, fingerprint: sha(['event', event.source, event.eventId]), leaseMs, retryFailed: true }], await clock.now());
    if (claim!.outcome === 'completed') {
      const stored = (claim!.entry.result as { outcomes?: Outcome[] } | null)?.outcomes ?? [];
      return { key, status: 'replayed', outcomes: stored.map((o) => ({ ...o, status: 'replayed', attempts: 0 })) };
    }
    if (claim!.outcome === 'in_progress') return { key, status: 'in_flight', outcomes: [] };
    if (claim!.outcome === 'conflict') throw new KeyConflictError(key, claim!.entry);
    const token = claim!.token!;
    const ctx: HandleContext = { key, event, once: (name, step) => once(childKey(key, name), step) };
    let outcomes: Outcome[];
    try {
      outcomes = await keptAlive(key, token, async () => {
        const actions = (await fn(ctx)) ?? [];
        return applyMany(
          actions.map((a) => withEvent(a, event)),
        );
      });
    } catch (err) {
      await ledger.fail([{ key, token, error: serializeError(err) as unknown as Json }], await clock.now());
      throw err;
    }
    const bad = outcomes.filter((o) => o.status === 'failed' || o.status === 'rejected' || o.status === 'in_flight');
    const summary = outcomes.map(({ key: k, status, recordId }) => ({ key: k, status, ...(recordId ? { recordId } : {}) }));
    if (bad.length > 0) {
      await ledger.fail([{ key, token, error: { code: 'ACTIONS_INCOMPLETE', message: `${bad.length} of ${outcomes.length} actions did not complete`, outcomes: summary } as unknown as Json }], await clock.now());
      return { key, status: 'failed', outcomes };
    }
    await ledger.complete([{ key, token, result: { outcomes: summary } as unknown as Json, retentionMs }], await clock.now());
    return { key, status: 'completed', outcomes };
  }

  return { once, handle };
}
