/**
 * `crm-upsert queue failed | retry [ids...] | stats`: the queue's failed set (with BullMQ's
 * reasons), moving failed jobs back to wait, and the jobs per state. The queue is the config's
 * `queue` section (`--queue URL` overrides its url).
 */
import { isMissingPackage } from '../optional-package.js';
import { formatZodIssues } from '../../schemas/parse.js';
import { queueConfigSchema, type QueueConfig } from '../../schemas/queue.js';
import { redact } from '../errors.js';
import { defaultQueueName } from '../queue/jobs.js';
import type { QueueTarget } from '../queue/target.js';
import { loadConfig, type Config } from './config.js';
import { ExitCode, UsageError } from './exit.js';

export interface QueueFlags {
  config: string;
  /** Redis URL of the queue; overrides the config's `queue.url`. */
  queue?: string;
}

/** The queue settings in effect: the config's section, its url replaced by `--queue`. */
export function queueSettings(config: Config, urlFlag: string | undefined, command: string): QueueConfig {
  if (!config.queue && !urlFlag) throw new UsageError(`${command} needs a queue: add "queue": { "url": "redis://…" } to the config or pass --queue redis://…`);
  const input = { ...(config.queue ?? {}), ...(urlFlag ? { url: urlFlag } : {}) };
  const parsed = queueConfigSchema.safeParse(input);
  if (!parsed.success) throw new UsageError(`--queue: ${formatZodIssues(parsed.error, { input })[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

export function queueTarget(config: Config, settings: QueueConfig): QueueTarget {
  return { url: settings.url, name: settings.name ?? defaultQueueName(config.crm), ...(settings.prefix ? { prefix: settings.prefix } : {}) };
}

async function targetOf(flags: QueueFlags, command: string): Promise<QueueTarget> {
  const config = await loadConfig(flags.config);
  return queueTarget(config, queueSettings(config, flags.queue, command));
}

/**
 * Load a part of the CLI that needs BullMQ, an optional peer: only the commands that use the
 * queue load it, and without it they exit 2 saying what to install.
 */
export async function queuePart<T>(command: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (isMissingPackage(err, 'bullmq')) throw new UsageError(`${command} needs bullmq (^6.3.0): npm install bullmq@^6.3`);
    throw err;
  }
}

const admin = () => queuePart('crm-upsert queue', () => import('../queue/admin.js'));

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

/** One JSON line per failed job, newest first. */
export async function queueFailedCommand(flags: QueueFlags & { limit?: number }): Promise<number> {
  const target = await targetOf(flags, 'queue failed');
  for (const job of await (await admin()).failedJobs(target, { limit: flags.limit ?? 100 })) print({ ...job, failedReason: redact(job.failedReason) });
  return ExitCode.ok;
}

/** Retry every failed job, or the ones named; exit 1 when a named job is not in the failed set. */
export async function queueRetryCommand(ids: string[], flags: QueueFlags): Promise<number> {
  const target = await targetOf(flags, 'queue retry');
  const { retried, notFailed } = await (await admin()).retryFailed(target, ids);
  print({ command: 'queue retry', queue: target.name, retried: retried.length, ...(notFailed.length > 0 ? { notFailed } : {}) });
  return notFailed.length > 0 ? ExitCode.problems : ExitCode.ok;
}

/** Remove the failed jobs named, or every failed job with --all; exit 1 when a named job is not in the failed set. */
export async function queueRemoveCommand(ids: string[], flags: QueueFlags & { all?: boolean }): Promise<number> {
  if (ids.length > 0 && flags.all) throw new UsageError('queue remove: give job ids or --all, not both');
  if (ids.length === 0 && !flags.all) throw new UsageError('queue remove: give the ids of the failed jobs to remove, or --all for every failed job');
  const target = await targetOf(flags, 'queue remove');
  const { removed, notFailed } = await (await admin()).removeFailed(target, ids.length > 0 ? { ids } : { all: true });
  print({ command: 'queue remove', queue: target.name, removed: removed.length, ...(notFailed.length > 0 ? { notFailed } : {}) });
  return notFailed.length > 0 ? ExitCode.problems : ExitCode.ok;
}

export async function queueStatsCommand(flags: QueueFlags): Promise<number> {
  const target = await targetOf(flags, 'queue stats');
  print({ command: 'queue stats', queue: target.name, counts: await (await admin()).jobCounts(target) });
  return ExitCode.ok;
}
