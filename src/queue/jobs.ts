/**
 * The jobs on the queue: what the webhook receiver and `sync --queue` add and `worker` runs.
 * A job's id is derived from its idempotency key, so adding the same event or the same chunk
 * of the same file twice adds one job (BullMQ ignores an add whose id exists); the ledger
 * still guards the work itself when a job runs twice.
 */
import { eventKey } from '../key.js';
import type { Outcome } from '../outcome.js';

/** Job names. */
export const EVENT_JOB = 'event';
export const CHUNK_JOB = 'chunk';

/** A verified webhook event, as the receiver enqueues it. */
export interface EventJobData {
  v: 1;
  /** The configured source it came in on (`POST /hooks/:source`). */
  source: string;
  /** The id from the verified envelope (webhook-id, HubSpot's eventId, the configured pointer). */
  eventId: string;
  /** When the event happened, when the envelope says so (ISO 8601). */
  occurredAt?: string;
  /** When the receiver accepted it (ISO 8601). */
  receivedAt: string;
  /** The event's JSON, as verified. */
  payload: unknown;
}

/** BullMQ forbids `:` in custom ids; keys use it as a separator. */
const jobIdOf = (key: string) => key.replaceAll(':', '-');

/** The job id of an event: its idempotency key (`eventKey`), made a valid BullMQ id. */
export function eventJobId(event: { source: string; eventId: string }): string {
  return jobIdOf(eventKey(event));
}

/** The default queue name of a CRM account's queue. */
export function defaultQueueName(crm: string): string {
  return `crm-upsert-${crm}`;
}

/** Which part of a file a chunk job holds; `gate` releases the activity chunks once every record chunk completed. */
export const ChunkKind = { records: 'records', activities: 'activities', gate: 'gate' } as const;
export type ChunkKind = (typeof ChunkKind)[keyof typeof ChunkKind];

/** One line of a chunk: its 1-based line number in the file and the parsed action. */
export interface ChunkLine {
  line: number;
  action: unknown;
}

/** A chunk of lines of a file enqueued by `crm-upsert sync --queue`. */
export interface LinesChunkData {
  v: 1;
  kind: 'records' | 'activities';
  /** The file's id (`fileId`): content hash and chunk size. */
  file: string;
  index: number;
  lines: ChunkLine[];
  /** Outcomes an earlier run of this job settled (by line), kept while lines another worker held are run again. */
  settled?: Record<string, Outcome>;
  /** CRM calls those earlier runs made. */
  settledCalls?: number;
}

/** The job that holds a file's activity chunks back until all its record chunks completed (their BullMQ flow parent). */
export interface GateChunkData {
  v: 1;
  kind: 'gate';
  file: string;
  /** Job ids of the activity chunks it releases. */
  activities: string[];
}

export type ChunkJobData = LinesChunkData | GateChunkData;

/** What a lines chunk job returns: every line's outcome and the CRM calls made for it. */
export interface ChunkJobResult {
  outcomes: { line: number; outcome: Outcome }[];
  apiCalls: number;
}

/** The id of a file's chunk jobs: the same file, cut the same way, always gets the same ids. */
export function chunkJobId(file: string, kind: ChunkKind, index = 0): string {
  return kind === 'gate' ? `chunk-${file}-gate` : `chunk-${file}-${kind === 'records' ? 'r' : 'a'}${index}`;
}

/** How long a completed job (and its id, which dedupes a second add) is kept by default: a day. */
export const DEFAULT_KEEP_COMPLETED_SECONDS = 86_400;

/**
 * BullMQ job options from the `queue` config section: attempts and backoff (retries of a throwing
 * job), and how long a completed job is kept (`keepCompletedSeconds`, default a day; failed jobs
 * stay in the failed set).
 */
export function queueJobOptions(config: { attempts: number; backoff: { type: 'exponential' | 'fixed'; delayMs: number }; keepCompletedSeconds?: number }): {
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delay: number };
  removeOnComplete: { age: number };
  removeOnFail: false;
} {
  return {
    attempts: config.attempts,
    backoff: { type: config.backoff.type, delay: config.backoff.delayMs },
    removeOnComplete: { age: config.keepCompletedSeconds ?? DEFAULT_KEEP_COMPLETED_SECONDS },
    removeOnFail: false,
  };
}
