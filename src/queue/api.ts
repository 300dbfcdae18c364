/**
 * What crm-upsert-sync/queue exports. Its modules import bullmq statically: index.ts imports this
 * file dynamically, so that a missing bullmq is one message naming it; the CLI imports the parts
 * it needs directly.
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
