/**
 * The `queue` config section: the BullMQ queue that `serve` and `sync --queue` add jobs to and
 * `worker` processes consume. One queue per CRM account.
 */
import { z } from 'zod';

export const queueConfigSchema = z.strictObject({
  /** The Redis holding the queue (BullMQ). */
  url: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** Queue name; default `crm-upsert-<crm>`. */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be letters, digits, _ or -').optional(),
  /** BullMQ key prefix in Redis. Default `bull`. */
  prefix: z.string().min(1).optional(),
  /** Attempts per job before it stays in the failed set. Default 5. */
  attempts: z.number().int().positive().default(5),
  /** Wait between attempts: `exponential` doubles `delayMs` each time. Default exponential from 1 s. */
  backoff: z
    .strictObject({ type: z.enum(['exponential', 'fixed']), delayMs: z.number().int().nonnegative() })
    .default({ type: 'exponential', delayMs: 1_000 }),
  /**
   * How long a completed job (and its id) is kept, seconds. While it is kept, adding the same event
   * or the same chunk of the same file again adds nothing; afterwards the ledger still makes the
   * work a replay. Failed jobs are kept until retried or removed. Default 86,400 (a day).
   */
  keepCompletedSeconds: z.number().int().positive().default(86_400),
  /** Jobs one worker process runs at the same time. Default 10. */
  concurrency: z.number().int().positive().default(10),
  /** How long a worker waits to gather the actions of concurrent jobs into one applyMany, ms. Default 20. */
  lingerMs: z.number().int().nonnegative().default(20),
  /** Most actions one coalesced applyMany carries; jobs beyond it wait for the next one. Default 1,000. */
  maxBatchActions: z.number().int().positive().default(1_000),
  /**
   * How long a worker's hold on a running job lasts without renewal (BullMQ lockDuration), ms. A job
   * whose worker died is handed to another worker after about this long. Default 30,000.
   */
  lockDurationMs: z.number().int().min(1_000).default(30_000),
  /**
   * How long a stop (SIGTERM, SIGINT) waits, seconds: a worker for its running jobs to finish, `sync
   * --queue --wait` for its last look at the queue. Then the connections are closed anyway, also when
   * the queue's Redis is gone; a job not finished stays on the queue and another worker takes it once
   * its lock expires. 0 to 3,600. Default 10.
   */
  drainSeconds: z
    .number({ error: 'must be a number of seconds from 0 to 3600' })
    .min(0, 'must be 0 or more seconds')
    .max(3_600, 'must be at most 3600 seconds (an hour); a longer drain outlives any scheduler\'s stop timeout')
    .default(10),
  /** How often workers look for jobs whose worker died (BullMQ stalledInterval), ms. Default 30,000. */
  stalledIntervalMs: z.number().int().min(500).default(30_000),
  /** How long a job waits before running again when another worker holds its event or lines, ms. Default 1,000. */
  inFlightDelayMs: z.number().int().positive().default(1_000),
  /**
   * How long an event job whose only failures are activities on a parent record that does not exist
   * yet (its own event has not been processed) keeps waiting for it, ms from when the job was added:
   * it runs again later, no attempt spent, each wait half the time waited so far (at least
   * `inFlightDelayMs`, at most 30 s). After that it fails like any other job. 0: no wait. Default 600,000.
   */
  parentWaitMs: z.number().int().min(0).default(600_000),
  /**
   * When a worker takes the CRM to be down: after `afterJobs` event jobs in a row failed only
   * because the CRM did not answer (5xx, timeouts, resets, 429s). Then such jobs go back to wait
   * without spending an attempt and the queue pauses, `firstPauseMs` doubling to `maxPauseMs`,
   * until a job gets an answer. `false`: every failure spends an attempt. Default 3, 1,000, 60,000.
   */
  outage: z
    .union([
      z.literal(false),
      z.strictObject({
        afterJobs: z.number().int().positive().default(3),
        firstPauseMs: z.number().int().min(100).default(1_000),
        maxPauseMs: z.number().int().min(100).default(60_000),
      }),
    ])
    .default({ afterJobs: 3, firstPauseMs: 1_000, maxPauseMs: 60_000 }),
});

export type QueueConfig = z.infer<typeof queueConfigSchema>;
