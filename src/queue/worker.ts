/**
 * startWorker(): consume a CRM account's queue. Event jobs run through `handle` with their
 * source's handler, chunk jobs through `applyMany`; the actions of every job running at the same
 * time in this process share one coalesced applyMany (group commit, see coalesce.ts). BullMQ
 * retries a job that throws with the backoff it was added with; `close()` drains: no new job
 * starts, the running ones finish; `stop(ms)` drains for at most `ms`, then drops the connections.
 * A job BullMQ hands out twice (a stalled worker's job) meets the ledger the second time: its work
 * replays with 0 CRM calls.
 */
import { DelayedError, Queue, RateLimitError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Sync } from '../engine/index.js';
import type { Outcome } from '../outcome.js';
import { ledgerClock } from '../ledger/clock.js';
import { coalescer, type Coalescer } from './coalesce.js';
import { CHUNK_JOB, EVENT_JOB } from './jobs.js';
import { evidenceOf, outageRule, type OutageOptions, type OutagePause, type OutageRule } from './outage.js';
import { DEFAULT_RATE_LIMIT_WAIT_MS, type RateLimitSource } from './rate-limits.js';
import { runChunkJob } from './run-chunk.js';
import { CrmUnanswered, DEFAULT_PARENT_WAIT_MS, EventFailed, runEventJob, type EventHandler } from './run-event.js';
import { bullOptions, settlesWithin, type QueueTarget } from './target.js';

export interface StartWorkerOptions {
  /** The engine the jobs run on (its ledger is shared by every worker of the account). */
  sync: Sync;
  queue: QueueTarget;
  /** Source name -> its handler (a handler module's default export). Default none: event jobs fail, chunk jobs run. */
  handlers?: Readonly<Record<string, EventHandler>>;
  /** Jobs this process runs at the same time. Default 10. */
  concurrency?: number;
  /** Longest wait to gather concurrent jobs' actions into one applyMany, ms. Default 20. */
  lingerMs?: number;
  /** Most actions in one coalesced applyMany. Default 1,000. */
  maxBatchActions?: number;
  /** Lease of the event claims `handle` takes, ms: use the same as the sync's. Default 5 min. */
  leaseMs?: number;
  /** Keep completed event entries this long, ms: use the same as the sync's. Default: keep. */
  retentionMs?: number | null;
  /** Delay before a job runs again when another worker holds its event or lines, ms. Default 1,000. */
  inFlightDelayMs?: number;
  /**
   * How long an event job whose only failures are activities whose parent record does not exist
   * yet waits for it (from when the job was added), ms: it runs again, no attempt spent, after half
   * the time waited so far (at least `inFlightDelayMs`, at most 30 s). Default 600,000 (10 min).
   */
  parentWaitMs?: number;
  /** BullMQ lockDuration, ms: a dead worker's job goes to another worker after about this long. Default 30,000. */
  lockDurationMs?: number;
  /** BullMQ stalledInterval, ms. Default 30,000. */
  stalledIntervalMs?: number;
  /** The adapter's 429s (`watchRateLimits`): each pauses job fetching for every worker of the queue. */
  rateLimits?: RateLimitSource;
  /** Pause after a job whose only failures were 429s, when the CRM named no wait, ms. Default 10,000. */
  rateLimitWaitMs?: number;
  /**
   * When the CRM counts as down and what a pause lasts (outage.ts): event jobs that failed only
   * because the CRM did not answer then go back to wait without spending an attempt, and the queue
   * pauses. False: every such failure spends an attempt. Default 3 jobs in a row, 1 s doubling to 60 s.
   */
  outage?: OutageOptions | false;
  /** Called as each outage pause begins (the CLI prints it). */
  onOutagePause?: (pause: OutagePause) => void;
  /**
   * Checked as each job's run ends: while it returns true the job goes back to the delayed set
   * (for `inFlightDelayMs`) instead of completing or failing, and spends no attempt. For a fault
   * every job would meet alike, such as the CRM refusing the token. Default: never.
   */
  holdWhen?: () => boolean;
  /** This worker's name in BullMQ (shown on the jobs it ran). */
  name?: string;
}

export interface WorkerStats {
  completed: number;
  /** Attempts that threw (each retried by BullMQ, or kept in the failed set after the last). */
  failed: number;
  /** Runs put back because another worker held their event or lines, because `holdWhen` said so, or to wait for a parent record. */
  delayed: number;
  /** Runs put back because of the CRM's rate limit. */
  rateLimited: number;
  /** Runs put back, no attempt spent, while the CRM did not answer (an outage). */
  unanswered: number;
}

export interface QueueWorker {
  /** The BullMQ worker (events: completed, failed, stalled, ...). */
  readonly worker: Worker;
  /** Resolves once connected and consuming. */
  ready(): Promise<void>;
  stats(): WorkerStats;
  /** Drain: stop taking jobs, let the running ones finish, close the connections (not the sync). */
  close(): Promise<void>;
  /**
   * Drain as `close()` does for at most `drainMs`; when that has not finished by then (a job runs
   * longer, or the queue's Redis is gone and nothing can be recorded), drop the connections without
   * waiting. A job still running then keeps its lock until it expires (`lockDurationMs`): BullMQ
   * hands it to another worker as stalled, and the ledger replays what it did. Resolves true when
   * it drained. Calls after the first return the first one's result.
   */
  stop(drainMs: number): Promise<boolean>;
}

/** Longest wait for the connections to drop once a stop gives up draining, ms. */
const DISCONNECT_MS = 1_000;
const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Thrown for a job put back during an outage: BullMQ returns it to wait without spending an attempt. */
class OutagePutBack extends RateLimitError {}
/** BullMQ applies a manual rate limit only to workers with a limiter; this one never limits by itself. */
const NO_LIMIT = { max: 1_000_000_000, duration: 1_000 };

/**
 * A job that returned: the CRM answered only if some outcome says so; a gate or a replay made no
 * request and says nothing. A chunk whose failed lines all went unanswered is one more unanswered
 * job: true when it is to go back to wait (the CRM is down), to run again, its written lines
 * replayed and the rest taken over under their keys; before that it completes with them failed.
 */
async function judge(outage: OutageRule, result: Awaited<ReturnType<typeof runEventJob | typeof runChunkJob>>): Promise<boolean> {
  const outcomes: Pick<Outcome, 'status' | 'error'>[] = 'outcomes' in result ? result.outcomes.map((o) => ('outcome' in o ? o.outcome : { status: o.status as Outcome['status'] })) : [];
  const evidence = evidenceOf(outcomes);
  if (evidence === 'answered') outage.answered();
  if (evidence !== 'unanswered') return false;
  const failed = outcomes.find((o) => o.status === 'failed' && o.error?.retryable);
  return await outage.unanswered(`lines unanswered: ${failed?.error?.message ?? 'the CRM did not answer'}`);
}

function processor(o: StartWorkerOptions, queue: Queue, batch: Coalescer, active: { n: number }, stats: WorkerStats) {
  const { sync } = o;
  const inFlightDelayMs = o.inFlightDelayMs ?? 1_000;
  const eventCtx = {
    ledger: sync.ledger, clock: ledgerClock(sync.ledger, { now: Date.now }), coalescer: batch, handlers: o.handlers ?? {}, read: sync.read, prepare: sync.prepare,
    leaseMs: o.leaseMs ?? 5 * 60_000, retentionMs: o.retentionMs ?? null, inFlightDelayMs, parentWaitMs: o.parentWaitMs ?? DEFAULT_PARENT_WAIT_MS, sleep: realSleep,
    rateLimit: (ms: number) => queue.rateLimit(ms), rateLimitWaitMs: o.rateLimitWaitMs ?? DEFAULT_RATE_LIMIT_WAIT_MS,
  };
  const chunkCtx = { coalescer: batch, queue, inFlightDelayMs };
  const outage = outageRule(o.outage, (ms) => queue.rateLimit(ms), o.onOutagePause);
  const run = async (job: Job, token?: string) => {
    if (job.name === EVENT_JOB) return await runEventJob(eventCtx, job, token);
    if (job.name === CHUNK_JOB) return await runChunkJob(chunkCtx, job, token);
    throw new UnrecoverableError(`unknown job name "${job.name}" (expected "${EVENT_JOB}" or "${CHUNK_JOB}")`);
  };
  const holdBack = async (job: Job, token?: string): Promise<never> => {
    await job.moveToDelayed(Date.now() + inFlightDelayMs, token);
    throw new DelayedError();
  };
  return async (job: Job, token?: string) => {
    active.n += 1;
    try {
      let result: Awaited<ReturnType<typeof run>>;
      try {
        result = await run(job, token);
      } catch (err) {
        const putBack = (err as Error).name === 'DelayedError' || (err as Error).name === 'RateLimitError' || err instanceof UnrecoverableError;
        if (!putBack && o.holdWhen?.()) return await holdBack(job, token);
        if (err instanceof CrmUnanswered) {
          if (await outage.unanswered(err.message)) {
            stats.unanswered += 1;
            throw new OutagePutBack();
          }
          // The CRM is not (yet) taken to be down: an attempt like any other failure.
          throw err;
        }
        // A failure of its own ends an outage only when the CRM answered some request of it (not a handler's or the ledger's error).
        if (!putBack && err instanceof EventFailed && err.evidence === 'answered') outage.answered();
        throw err;
      }
      if (await judge(outage, result)) {
        stats.unanswered += 1;
        throw new OutagePutBack();
      }
      if (o.holdWhen?.()) return await holdBack(job, token);
      return result;
    } catch (err) {
      // DelayedError and RateLimitError put the job back without a 'failed' event: count them here.
      if ((err as Error).name === 'DelayedError') stats.delayed += 1;
      if ((err as Error).name === 'RateLimitError' && !(err instanceof OutagePutBack)) stats.rateLimited += 1;
      throw err;
    } finally {
      active.n -= 1;
    }
  };
}

export function startWorker(options: StartWorkerOptions): QueueWorker {
  const bull = bullOptions(options.queue);
  const queue = new Queue(options.queue.name, bull);
  const active = { n: 0 };
  const batch = coalescer({
    // One call carries many jobs: a file chunk's lines are deliveries, and each event's own actions were checked by its handle.
    applyMany: (actions) => options.sync.applyMany(actions, { sharedKeys: 'replay' }),
    lingerMs: options.lingerMs ?? 20,
    maxActions: options.maxBatchActions ?? 1_000,
    apiCalls: () => options.sync.adapter.apiCalls(),
    expected: () => active.n,
  });
  const stats: WorkerStats = { completed: 0, failed: 0, delayed: 0, rateLimited: 0, unanswered: 0 };
  const worker = new Worker(options.queue.name, processor(options, queue, batch, active, stats), {
    ...bull,
    concurrency: options.concurrency ?? 10,
    limiter: NO_LIMIT,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    ...(options.name ? { name: options.name } : {}),
  });
  worker.on('completed', () => (stats.completed += 1));
  worker.on('failed', () => (stats.failed += 1));
  // Connection errors are retried by ioredis; without a listener Node would crash on them.
  worker.on('error', () => undefined);
  queue.on('error', () => undefined);
  const unwatch = options.rateLimits?.onRateLimited((ms) => void queue.rateLimit(ms).catch(() => undefined));
  let closing: Promise<void> | undefined;
  let stopping: Promise<boolean> | undefined;
  const close = () =>
    (closing ??= (async () => {
      unwatch?.();
      await worker.close();
      await queue.close();
    })());
  return {
    worker,
    ready: async () => {
      await worker.waitUntilReady();
      await queue.waitUntilReady();
    },
    stats: () => ({ ...stats }),
    close,
    stop: (drainMs) =>
      (stopping ??= (async () => {
        if (await settlesWithin(close(), drainMs)) return true;
        // worker.close(true) cannot overtake the drain under way; its backend's forced close drops both
        // connections without waiting for Redis (disconnect() would wait for an end that never comes).
        await settlesWithin(Promise.allSettled([worker.getBackend().close(true), queue.getBackend().close(true)]), DISCONNECT_MS);
        return false;
      })()),
  };
}
