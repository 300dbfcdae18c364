/**
 * The BullMQ sink of the webhook receiver: `enqueue` adds one EVENT_JOB per event, its job id
 * the event's idempotency key (`eventJobId`), in one `addBulk` round trip. BullMQ ignores an add
 * whose id exists, so a redelivered event is deduplicated at enqueue, for as long as its job is
 * kept; after that the ledger still stops the work from running twice.
 *
 * bullmq and ioredis are loaded on first use, so importing this module needs neither; without
 * them that use fails with a ConfigError naming the package to install.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { importWithPeers, PEERS } from '../optional-package.js';
import type { EventSink } from '../webhooks/app.js';
import { DEFAULT_KEEP_COMPLETED_SECONDS, EVENT_JOB, eventJobId, queueJobOptions, type EventJobData } from './jobs.js';

export interface EventQueueOptions {
  /** redis:// or rediss:// URL of the queue's Redis. */
  url: string;
  /** Queue name (one per CRM account; `defaultQueueName(crm)`). */
  name: string;
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string;
  /** Attempts per job before it stays in the failed set. Default 5. */
  attempts?: number;
  /** Delay between attempts. Default exponential from 1 s. */
  backoff?: { type: 'exponential' | 'fixed'; delayMs: number };
  /**
   * How long a completed job (and so its id) is kept, in seconds. BullMQ dedupes only ids that
   * still exist: a redelivery later than this is enqueued again and stopped by the ledger
   * instead. Default 86 400 (24 hours, HubSpot's longest retry schedule).
   */
  keepCompletedSeconds?: number;
}

export interface EventQueue extends EventSink {
  /** The queue's name. */
  readonly name: string;
  /** Resolves once Redis answers (`serve` waits for it before listening); rejects on failure. */
  ready(): Promise<void>;
  /** Close the connection (pending adds finish first). */
  close(): Promise<void>;
}

export { DEFAULT_KEEP_COMPLETED_SECONDS };

/** The job options every event is added with. */
export function eventJobOptions(options: Pick<EventQueueOptions, 'attempts' | 'backoff' | 'keepCompletedSeconds'>) {
  return {
    ...queueJobOptions({
      attempts: options.attempts ?? 5,
      backoff: options.backoff ?? { type: 'exponential', delayMs: 1_000 },
      keepCompletedSeconds: options.keepCompletedSeconds ?? DEFAULT_KEEP_COMPLETED_SECONDS,
    }),
  };
}

type JobSpec = { name: string; data: EventJobData; opts: ReturnType<typeof eventJobOptions> & { jobId: string } };

/**
 * Coalescing per turn of the event loop: the jobs of every request that reaches `enqueue` in the
 * same turn go in one write (one script call, or one MULTI for several), sent when the turn ends
 * (setImmediate). A write never waits for an earlier one to finish: commands pipeline on the one
 * connection, so a request's wait is its own round trip, not the one before it as well. Every
 * caller resolves when the write holding its jobs did, or rejects with it.
 */
export function perTurn<J>(write: (jobs: J[]) => Promise<void>): (jobs: J[]) => Promise<void> {
  let pending: { jobs: J[]; done: { resolve(): void; reject(err: unknown): void }[] } | undefined;
  const flush = () => {
    const batch = pending!;
    pending = undefined;
    write(batch.jobs).then(
      () => { for (const d of batch.done) d.resolve(); },
      (err: unknown) => { for (const d of batch.done) d.reject(err); },
    );
  };
  return (jobs: J[]) =>
    new Promise<void>((resolve, reject) => {
      if (!pending) {
        pending = { jobs: [], done: [] };
        setImmediate(flush);
      }
      pending.jobs.push(...jobs);
      pending.done.push({ resolve, reject });
    });
}

/** A BullMQ-backed sink. */
export function eventQueue(options: EventQueueOptions): EventQueue {
  const jobOptions = eventJobOptions(options);
  let opened: Promise<{ queue: Queue; redis: Redis }> | undefined;
  const open = () =>
    (opened ??= (async () => {
      const [{ Queue }, { Redis }] = await importWithPeers('eventQueue', [PEERS.bullmq, PEERS.ioredis], () => Promise.all([import('bullmq'), import('ioredis')]));
      // Fail fast while Redis is unreachable, instead of holding commands until it is back:
      // the receiver answers 503 and the sender retries.
      const redis = new Redis(options.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      redis.on('error', () => undefined);
      const queue = new Queue(options.name, { connection: redis, ...(options.prefix ? { prefix: options.prefix } : {}) });
      queue.on('error', () => undefined);
      return { queue, redis };
    })());
  const add = perTurn<JobSpec>(async (jobs) => {
    const { queue } = await open();
    // One job is one script call; several go in one MULTI (a pipeline per call costs more).
    if (jobs.length === 1) await queue.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
    else await queue.addBulk(jobs);
  });
  return {
    name: options.name,
    async ready() {
      const { queue } = await open();
      await queue.waitUntilReady();
    },
    enqueue(events: readonly EventJobData[]) {
      if (events.length === 0) return Promise.resolve();
      return add(events.map((data) => ({ name: EVENT_JOB, data, opts: { ...jobOptions, jobId: eventJobId(data) } })));
    },
    async close() {
      if (!opened) return;
      const { queue, redis } = await opened;
      await queue.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}
