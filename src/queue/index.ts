/**
 * crm-upsert-sync/queue: scale out on BullMQ. `startWorker` consumes a CRM account's queue (event
 * jobs through `handle` and the source's handler, chunk jobs of `sync --queue` through
 * `applyMany`), `enqueueChunks` puts a file on it as a flow (records before activities), and the
 * admin helpers read the failed set and the counts. Needs the optional peer `bullmq`; the package
 * root never loads it.
 */
export { startWorker, type StartWorkerOptions, type QueueWorker, type WorkerStats } from './worker.js';
export type { EventHandler, EventJobResult } from './run-event.js';
export { coalescer, type Coalescer, type CoalescerOptions, type CoalescedResult } from './coalesce.js';
export { DEFAULT_OUTAGE, type OutageOptions, type OutagePause } from './outage.js';
export { watchRateLimits, DEFAULT_RATE_LIMIT_WAIT_MS, type RateLimitSource, type RateLimitWatch } from './rate-limits.js';
export { enqueueChunks, planChunks, waitForChunks, ACTIVITY_HOLD_MS, type EnqueueChunksOptions, type EnqueuedFile, type PlannedChunks, type ChunkStates, type WaitOptions } from './chunks.js';
export { failedJobs, retryFailed, removeFailed, jobCounts, JOB_STATES, type FailedJob } from './admin.js';
export { bullOptions, type QueueTarget } from './target.js';
export {
  EVENT_JOB, CHUNK_JOB, ChunkKind, eventJobId, chunkJobId, defaultQueueName, queueJobOptions,
  type EventJobData, type ChunkJobData, type LinesChunkData, type GateChunkData, type ChunkLine, type ChunkJobResult,
} from './jobs.js';
