/**
 * The queue's failed set and counts (`crm-upsert queue failed|retry|remove|stats`). A job lands in the
 * failed set after its last attempt (or at once when retrying cannot help) and stays there with
 * BullMQ's reason until it is retried or removed.
 */
import { Queue, type Job } from 'bullmq';
import { bullOptions, closeWithin, connected, type QueueTarget } from './target.js';

/** The job states `jobCounts` reports. */
export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

export interface FailedJob {
  id: string;
  name: string;
  /** The event's source and id, for event jobs; the chunk's kind and index, for chunk jobs. */
  source?: string;
  eventId?: string;
  chunk?: string;
  attemptsMade: number;
  failedReason: string;
  /** When its last attempt failed (ISO 8601). */
  failedAt?: string;
}

async function withQueue<T>(target: QueueTarget, fn: (queue: Queue) => Promise<T>): Promise<T> {
  const queue = await connected(new Queue(target.name, { ...bullOptions(target), skipMetasUpdate: true }), target);
  try {
    return await fn(queue);
  } finally {
    await closeWithin(queue, 5_000);
  }
}

function describe(job: Job): FailedJob {
  const data = (job.data ?? {}) as { source?: unknown; eventId?: unknown; kind?: unknown; index?: unknown };
  return {
    id: job.id ?? '',
    name: job.name,
    ...(typeof data.source === 'string' ? { source: data.source } : {}),
    ...(typeof data.eventId === 'string' ? { eventId: data.eventId } : {}),
    ...(typeof data.kind === 'string' ? { chunk: `${data.kind}${typeof data.index === 'number' ? ` ${data.index}` : ''}` } : {}),
    attemptsMade: job.attemptsMade,
    failedReason: job.failedReason,
    ...(job.finishedOn ? { failedAt: new Date(job.finishedOn).toISOString() } : {}),
  };
}

/** Jobs in the failed set, newest first. */
export function failedJobs(target: QueueTarget, options: { limit?: number } = {}): Promise<FailedJob[]> {
  return withQueue(target, async (queue) => (await queue.getFailed(0, (options.limit ?? 100) - 1)).map(describe));
}

/** Apply `act` to the failed jobs among `ids` (every failed job without ids); the ids not in the failed set come back apart. */
async function onFailed(queue: Queue, ids: readonly string[] | undefined, act: (job: Job) => Promise<unknown>): Promise<{ done: string[]; notFailed: string[] }> {
  const jobs = ids ? await Promise.all(ids.map((id) => queue.getJob(id))) : await queue.getFailed(0, -1);
  const done: string[] = [];
  const notFailed: string[] = [];
  for (const [i, job] of jobs.entries()) {
    if (!job || !(await job.isFailed())) {
      notFailed.push(ids ? ids[i]! : (job?.id ?? ''));
      continue;
    }
    await act(job);
    done.push(job.id!);
  }
  return { done, notFailed };
}

/**
 * Move failed jobs back to wait with their attempts reset: every failed job, or the ones in `ids`.
 * Returns the ids retried and the ids that are not in the failed set.
 */
export function retryFailed(target: QueueTarget, ids?: readonly string[]): Promise<{ retried: string[]; notFailed: string[] }> {
  return withQueue(target, async (queue) => {
    const { done, notFailed } = await onFailed(queue, ids && ids.length > 0 ? ids : undefined, (job) => job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }));
    return { retried: done, notFailed };
  });
}

/**
 * Remove jobs from the failed set for good: the ones in `ids`, or (`all`) every failed job. Only
 * failed jobs are removed; a job in any other state is left alone and reported. Once removed, the
 * same event or chunk can be enqueued again, and the ledger still turns whatever it had done into
 * a replay. Returns the ids removed and the ids that are not in the failed set.
 */
export function removeFailed(target: QueueTarget, select: { ids: readonly string[] } | { all: true }): Promise<{ removed: string[]; notFailed: string[] }> {
  return withQueue(target, async (queue) => {
    const { done, notFailed } = await onFailed(queue, 'ids' in select ? select.ids : undefined, (job) => job.remove());
    return { removed: done, notFailed };
  });
}

/** Jobs per state. */
export function jobCounts(target: QueueTarget): Promise<Record<(typeof JOB_STATES)[number], number>> {
  return withQueue(target, async (queue) => {
    const counts = await queue.getJobCounts(...JOB_STATES);
    return Object.fromEntries(JOB_STATES.map((s) => [s, counts[s] ?? 0])) as Record<(typeof JOB_STATES)[number], number>;
  });
}
