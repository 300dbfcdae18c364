/**
 * One EVENT_JOB: the source's handler runs through `handle` (at most once per event; `ctx.once`
 * memoizes its model calls), and its actions ride the worker's coalesced applyMany. What BullMQ
 * should do next follows from the HandleResult:
 *
 *   completed, replayed   the job completes (a redelivered or stalled job replays: 0 CRM calls)
 *   in_flight             another worker holds the event, or every action that did not complete
 *                         is held by another worker (its key, or the upsert of its parent record):
 *                         the job is delayed and runs again, no attempt spent
 *   failed                the job throws: BullMQ retries it with backoff, then keeps it failed
 *   failed by 429s only   the queue is rate-limited and the job goes back to wait (no attempt spent);
 *                         an activity whose parent record got the 429 counts as one of them
 *   failed, parent absent every failure is an activity whose parent record does not exist yet (the
 *                         event that writes it has not run: webhooks arrive in any order): the job
 *                         is delayed, no attempt spent, for up to `parentWaitMs` after it was added
 *   failed, CRM silent    every failure is the CRM not answering (5xx, timeout, reset, 429):
 *                         `CrmUnanswered` is thrown, and the worker's outage rule (outage.ts)
 *                         decides whether the job spends an attempt
 */
import { DelayedError, RateLimitError, UnrecoverableError, type Job } from 'bullmq';
import { LINK_NOT_FOUND, PARENT_DEFERRED, PARENT_NOT_FOUND } from '../engine/defer.js';
import { guardedSteps, type HandleContext, type HandlerAction, type HandleResult } from '../engine/guarded.js';
import { CrmSyncError, ErrorCode, plainMessage, redact } from '../errors.js';
import type { LedgerClock } from '../ledger/clock.js';
import type { LedgerBackend } from '../ledger/types.js';
import type { Outcome } from '../outcome.js';
import type { Sync } from '../engine/create-sync.js';
import type { Coalescer } from './coalesce.js';
import type { EventJobData } from './jobs.js';
import { evidenceOf, type CrmEvidence } from './outage.js';

/** A source's handler module's default export: the event's payload in, CRM actions out. */
export type EventHandler = (payload: unknown, ctx: HandleContext) => Promise<readonly HandlerAction[] | void> | readonly HandlerAction[] | void;

/** What an event job returns (its BullMQ return value). */
export interface EventJobResult {
  key: string;
  status: 'completed' | 'replayed';
  /** Per action: `recreated` when an upsert wrote again a record this ledger had written and the CRM no longer had. */
  outcomes: { key: string; status: string; recordId?: string; recreated?: { previousId: string } }[];
  apiCalls: number;
}

export interface EventRunContext {
  ledger: LedgerBackend;
  clock: LedgerClock;
  coalescer: Coalescer;
  handlers: Readonly<Record<string, EventHandler>>;
  /** The Sync's `read`, for handlers' `ctx.read`. */
  read: Sync['read'];
  /** The Sync's `prepare`: an event's actions sharing a key but not their content are refused before they join the coalesced call. */
  prepare: Sync['prepare'];
  leaseMs: number;
  retentionMs: number | null;
  inFlightDelayMs: number;
  /** How long a job waits, no attempt spent, for parent records that do not exist yet, ms from when it was added. */
  parentWaitMs: number;
  sleep(ms: number): Promise<void>;
  /** Pause the queue's job fetching for `ms` (BullMQ's rate limit). */
  rateLimit(ms: number): Promise<void>;
  rateLimitWaitMs: number;
}

const reasonOf = (o: Outcome) => plainMessage(o.error?.message ?? o.status);

/** The failure reason kept in BullMQ's failed set: how many actions did not complete, and why (first three). */
export function failureReason(result: HandleResult): string {
  const bad = result.outcomes.filter((o) => o.status === 'failed' || o.status === 'rejected' || o.status === 'in_flight');
  const why = [...new Set(bad.map(reasonOf))].slice(0, 3).join('; ');
  return `${bad.length} of ${result.outcomes.length} actions did not complete: ${why}`;
}

const SETTLED = new Set(['created', 'updated', 'unchanged', 'superseded', 'replayed', 'suppressed']);
const refKey = (object: string, externalId: string) => `${object}\u0000${externalId}`;

/**
 * Every failure is a 429, or an activity attached to a record of this event that got one (its
 * parent was never written, so it could not be either): waiting out the limit is all it needs.
 */
function onlyRateLimited(result: HandleResult, actions: readonly HandlerAction[]): boolean {
  return onlyFailedBy(result, actions, (o) => o.status === 'failed' && o.error?.status === 429);
}

/** Some outcome is `cause`, and every other unsettled one is `cause` or an activity on a record that was. */
function onlyFailedBy(result: HandleResult, actions: readonly HandlerAction[], cause: (o: Outcome) => boolean): boolean {
  const caused = new Set<string>();
  result.outcomes.forEach((o, i) => {
    const a = actions[i];
    if (cause(o) && a?.op === 'upsert' && a.externalId) caused.add(refKey(a.object, a.externalId));
  });
  const bad = result.outcomes.map((o, i) => ({ o, a: actions[i] })).filter(({ o }) => !SETTLED.has(o.status));
  return bad.some(({ o }) => cause(o)) && bad.every(({ o, a }) => cause(o) || (o.status === 'failed' && a?.target !== undefined && caused.has(refKey(a.target.object, a.target.externalId))));
}

/** The codes of a write refused because another record it needs (its parent, a linked record) is not there (or not known) yet. */
const PARENT_ABSENT = new Set([PARENT_NOT_FOUND, PARENT_DEFERRED, LINK_NOT_FOUND]);

/**
 * Every failure is an activity whose parent record does not exist yet, or a write whose linked
 * record does not, and no record of this event failed otherwise: what it needs is another event (webhooks arrive in any order), not another attempt. An
 * activity whose parent another worker is writing (`in_flight`) waits for the same thing.
 */
function onlyParentsAbsent(result: HandleResult, actions: readonly HandlerAction[]): boolean {
  return onlyFailedBy(result, actions, (o) => (o.status === 'failed' && PARENT_ABSENT.has(o.error?.vendorCode ?? '')) || o.status === 'in_flight');
}

/**
 * What an event run that did not complete waits for, no attempt spent: `held`, another worker
 * (the event itself, or every action that did not complete: its key, or its parent's upsert);
 * `parent`, the events that write absent parent records; undefined: nothing, it failed.
 */
export function waitsFor(result: HandleResult, actions: readonly HandlerAction[]): 'held' | 'parent' | undefined {
  if (result.status === 'in_flight') return 'held';
  if (result.status !== 'failed') return undefined;
  if (result.outcomes.every((o) => SETTLED.has(o.status) || o.status === 'in_flight')) return 'held';
  return onlyParentsAbsent(result, actions) ? 'parent' : undefined;
}

const MAX_PARENT_DELAY_MS = 30_000;
export const DEFAULT_PARENT_WAIT_MS = 600_000;

/** Half the time the job has waited so far, within [inFlightDelayMs, 30 s]; undefined once `parentWaitMs` is spent. */
export function parentDelay(addedAt: number, now: number, o: { inFlightDelayMs: number; parentWaitMs: number }): number | undefined {
  const waited = Math.max(0, now - addedAt);
  if (waited >= o.parentWaitMs) return undefined;
  return Math.min(MAX_PARENT_DELAY_MS, Math.max(o.inFlightDelayMs, Math.round(waited / 2)));
}

/** A run whose every failure was the CRM not answering; `message` is the failed reason BullMQ keeps. */
export class CrmUnanswered extends Error {
  override name = 'CrmUnanswered';
}

/** A run that failed for reasons of its own; `evidence` says whether the CRM answered any of its requests. */
export class EventFailed extends Error {
  constructor(message: string, readonly evidence: CrmEvidence) {
    super(message);
  }
}

/**
 * Every failure is retryable (a 5xx, a timeout, a reset or refusal, a 429), or an activity whose
 * parent record of this event failed so: nothing the event itself holds is wrong.
 */
function onlyUnanswered(result: HandleResult, actions: readonly HandlerAction[]): boolean {
  return onlyFailedBy(result, actions, (o) => o.status === 'failed' && o.error?.retryable === true);
}

function eventOf(job: Job): EventJobData {
  const data = job.data as Partial<EventJobData> | undefined;
  if (data?.v !== 1 || typeof data.source !== 'string' || typeof data.eventId !== 'string' || !data.source || !data.eventId) {
    throw new UnrecoverableError('not an event job: data must be { v: 1, source, eventId, payload }');
  }
  return data as EventJobData;
}

export async function runEventJob(ctx: EventRunContext, job: Job, token: string | undefined): Promise<EventJobResult> {
  const data = eventOf(job);
  const handler = Object.hasOwn(ctx.handlers, data.source) ? ctx.handlers[data.source] : undefined;
  if (!handler) throw new UnrecoverableError(`no handler for source "${data.source}" (webhooks.sources.${data.source}.handler in the config)`);
  let apiCalls = 0;
  const steps = guardedSteps({
    ledger: ctx.ledger, clock: ctx.clock, leaseMs: ctx.leaseMs, retentionMs: ctx.retentionMs, sleep: ctx.sleep, read: ctx.read, prepare: ctx.prepare,
    applyMany: async (actions) => {
      const r = await ctx.coalescer.run(actions);
      apiCalls += r.apiCalls;
      return r.outcomes;
    },
  });
  let result: HandleResult;
  let actions: readonly HandlerAction[] = [];
  try {
    result = await steps.handle({ source: data.source, eventId: data.eventId, ...(data.occurredAt ? { occurredAt: data.occurredAt } : {}) }, async (hctx) => (actions = (await handler(data.payload, hctx)) ?? []));
  } catch (err) {
    // Retrying cannot fix an event id bound to another identity or an event without an id.
    if (err instanceof CrmSyncError && (err.code === ErrorCode.keyConflict || err.code === ErrorCode.validation)) throw new UnrecoverableError(redact(err.message));
    // Only the redacted message travels on (BullMQ keeps it as the failed reason): a cause could carry a secret.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(redact(err instanceof Error ? err.message : String(err)));
  }
  const waiting = waitsFor(result, actions);
  if (waiting === 'held' || result.status === 'in_flight') {
    await job.moveToDelayed(Date.now() + ctx.inFlightDelayMs, token);
    throw new DelayedError();
  }
  if (result.status === 'failed') {
    const wait = waiting === 'parent' ? parentDelay(job.timestamp, Date.now(), ctx) : undefined;
    if (wait !== undefined) {
      await job.moveToDelayed(Date.now() + wait, token);
      throw new DelayedError();
    }
    if (onlyRateLimited(result, actions)) {
      await ctx.rateLimit(ctx.rateLimitWaitMs);
      throw new RateLimitError();
    }
    if (onlyUnanswered(result, actions)) throw new CrmUnanswered(failureReason(result));
    throw new EventFailed(failureReason(result), evidenceOf(result.outcomes));
  }
  return {
    key: result.key,
    status: result.status,
    outcomes: result.outcomes.map((o) => ({ key: o.key, status: o.status, ...(o.recordId ? { recordId: o.recordId } : {}), ...(o.recreated ? { recreated: o.recreated } : {}) })),
    apiCalls,
  };
}
