/**
 * The `queue` config section: the BullMQ queue that `serve` and `sync --queue` add jobs to and
 * `worker` processes consume. One queue per CRM account.
 */
import { z } from 'zod';

export const queueConfigSchema = z.strictObject({
  url: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** Queue name; default `crm-upsert-<crm>`. */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be letters, digits, _ or -').optional(),
  /** BullMQ key prefix in Redis. Default `bull`. */
  prefix: z.string().min(1).optional(),
  /** Attempts per job before it stays in the failed set. */
  attempts: z.number().int().positive().default(5),
  backoff: z
    .strictObject({ type: z.enum(['exponential', 'fixed']), delayMs: z.number().int().nonnegative() })
    .default({ type: 'exponential', delayMs: 1_000 }),
  /** Jobs one worker process runs at the same time. */
  concurrency: z.number().int().positive().default(10),
  /** How long a worker waits to gather the actions of concurrent jobs into one applyMany. */
  lingerMs: z.number().int().nonnegative().default(20),
});

export type QueueConfig = z.infer<typeof queueConfigSchema>;
