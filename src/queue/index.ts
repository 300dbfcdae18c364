/**
 * crm-upsert-sync/queue: scale out on BullMQ. `startWorker` consumes a CRM account's queue (event
 * jobs through `handle` and the source's handler, chunk jobs of `sync --queue` through
 * `applyMany`), `enqueueChunks` puts a file on it as a flow (records before activities), and the
 * admin helpers read the failed set and the counts. Needs the optional peer `bullmq`; importing
 * this entry without it throws a ConfigError naming the package and the install command. The
 * package root never loads it.
 */
import { importWithPeers, PEERS } from '../optional-package.js';
import type * as Api from './api.js';

const api = await importWithPeers('crm-upsert-sync/queue', [PEERS.bullmq], () => import('./api.js'));

// Each typed as the module's own: a copy's inferred type would widen literals and unique symbols.
export const startWorker: typeof Api.startWorker = api.startWorker;
export const coalescer: typeof Api.coalescer = api.coalescer;
export const DEFAULT_OUTAGE: typeof Api.DEFAULT_OUTAGE = api.DEFAULT_OUTAGE;
export const watchRateLimits: typeof Api.watchRateLimits = api.watchRateLimits;
export const DEFAULT_RATE_LIMIT_WAIT_MS: typeof Api.DEFAULT_RATE_LIMIT_WAIT_MS = api.DEFAULT_RATE_LIMIT_WAIT_MS;
export const enqueueChunks: typeof Api.enqueueChunks = api.enqueueChunks;
export const planChunks: typeof Api.planChunks = api.planChunks;
export const waitForChunks: typeof Api.waitForChunks = api.waitForChunks;
export const ACTIVITY_HOLD_MS: typeof Api.ACTIVITY_HOLD_MS = api.ACTIVITY_HOLD_MS;
export const failedJobs: typeof Api.failedJobs = api.failedJobs;
export const retryFailed: typeof Api.retryFailed = api.retryFailed;
export const removeFailed: typeof Api.removeFailed = api.removeFailed;
export const jobCounts: typeof Api.jobCounts = api.jobCounts;
export const JOB_STATES: typeof Api.JOB_STATES = api.JOB_STATES;
export const bullOptions: typeof Api.bullOptions = api.bullOptions;
export const EVENT_JOB: typeof Api.EVENT_JOB = api.EVENT_JOB;
export const CHUNK_JOB: typeof Api.CHUNK_JOB = api.CHUNK_JOB;
export const ChunkKind: typeof Api.ChunkKind = api.ChunkKind;
export const eventJobId: typeof Api.eventJobId = api.eventJobId;
export const chunkJobId: typeof Api.chunkJobId = api.chunkJobId;
export const defaultQueueName: typeof Api.defaultQueueName = api.defaultQueueName;
export const queueJobOptions: typeof Api.queueJobOptions = api.queueJobOptions;
export type ChunkKind = Api.ChunkKind;
export type {
  StartWorkerOptions, QueueWorker, WorkerStats, EventHandler, EventJobResult, Coalescer, CoalescerOptions, CoalescedResult,
  OutageOptions, OutagePause, RateLimitSource, RateLimitWatch, EnqueueChunksOptions, EnqueuedFile, PlannedChunks, ChunkStates,
  WaitOptions, FailedJob, QueueTarget, EventJobData, ChunkJobData, LinesChunkData, GateChunkData, ChunkLine, ChunkJobResult,
} from './api.js';
