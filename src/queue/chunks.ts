/**
 * A file on the queue (`crm-upsert sync --queue`): its lines cut into record chunks and activity
 * chunks, added as one BullMQ flow so that records are written before the activities that attach
 * to them, across chunks and workers:
 *
 *   gate (flow parent: runs once every child completed) ── record chunk 0 … record chunk n
 *   activity chunk 0 … activity chunk m   (held in the delayed set; the gate releases them)
 *
 * A BullMQ job has one parent, so activity chunks cannot each be the parent of every record chunk
 * they need; the gate is the one parent of all record chunks instead. Job ids come from the
 * file's content hash, the chunk size and the chunk index: adding the same file again adds
 * nothing while its jobs are kept, and the ledger replays whatever runs again.
 */
import { FlowProducer, Queue } from 'bullmq';
import { chunkJobId, CHUNK_JOB, type ChunkJobResult, type ChunkLine, type GateChunkData, type LinesChunkData } from './jobs.js';
import { bullOptions, closeWithin, connected, settlesWithin, type QueueTarget } from './target.js';

/** How long activity chunks wait for their gate at most (it releases them long before), ms: a year. */
export const ACTIVITY_HOLD_MS = 365 * 24 * 3_600_000;

export interface PlannedChunks {
  records: ChunkLine[][];
  activities: ChunkLine[][];
}

const identityOf = (action: unknown): string | undefined => {
  const a = action as { op?: unknown; object?: unknown; externalId?: unknown } | null;
  return a && typeof a === 'object' && typeof a.object === 'string' && typeof a.externalId === 'string' ? `${a.object}\u0000${a.externalId}` : undefined;
};

/**
 * Cut lines into chunks of about `size`: creates (activities) apart from everything else (record
 * upserts, and lines the engine will reject). Every upsert of one record goes into the chunk of
 * its first upsert, so two writes of a record never race in two chunks and the file's last one wins.
 */
export function planChunks(lines: readonly ChunkLine[], size: number): PlannedChunks {
  const records: ChunkLine[][] = [];
  const activities: ChunkLine[][] = [];
  const recordChunkOf = new Map<string, number>();
  let open: ChunkLine[] | undefined;
  let openActivities: ChunkLine[] | undefined;
  for (const l of lines) {
    if ((l.action as { op?: unknown } | null)?.op === 'create') {
      if (!openActivities || openActivities.length >= size) activities.push((openActivities = []));
      openActivities.push(l);
      continue;
    }
    const id = identityOf(l.action);
    const earlier = id === undefined ? undefined : recordChunkOf.get(id);
    if (earlier !== undefined) {
      records[earlier]!.push(l);
      continue;
    }
    if (!open || open.length >= size) records.push((open = []));
    open.push(l);
    if (id !== undefined) recordChunkOf.set(id, records.length - 1);
  }
  return { records, activities };
}

export interface EnqueueChunksOptions {
  queue: QueueTarget;
  /** The file's id: its content hash and chunk size (`crm-upsert sync --queue` derives it). */
  file: string;
  chunks: PlannedChunks;
  /** BullMQ options of every job (attempts, backoff: `queueJobOptions(config.queue)`). */
  jobOptions?: { attempts?: number; backoff?: { type: 'exponential' | 'fixed'; delay: number } };
}

export interface EnqueuedFile {
  gate: string;
  records: string[];
  activities: string[];
  /** False when the file's jobs were on the queue already: nothing was added. */
  added: boolean;
}

/** Add the file's flow (see the top of this file); adds nothing when its gate exists. */
export async function enqueueChunks(options: EnqueueChunksOptions): Promise<EnqueuedFile> {
  const { file, chunks } = options;
  const name = options.queue.name;
  const jobOpts = options.jobOptions ?? {};
  const gate = chunkJobId(file, 'gate');
  const records = chunks.records.map((_, i) => chunkJobId(file, 'records', i));
  const activities = chunks.activities.map((_, i) => chunkJobId(file, 'activities', i));
  const bull = bullOptions(options.queue);
  const queue = await connected(new Queue(name, bull), options.queue);
  const flows = new FlowProducer(bull);
  flows.on('error', () => undefined);
  try {
    const existing = await queue.getJob(gate);
    if (existing) {
      // A gate that ran before an activity chunk existed (removed, re-added) would never release it.
      if ((await existing.getState()) === 'completed') {
        for (const id of activities) await (await queue.getJob(id))?.promote().catch(() => undefined);
      }
      return { gate, records, activities, added: false };
    }
    const lines = (kind: 'records' | 'activities', index: number, part: ChunkLine[]): LinesChunkData => ({ v: 1, kind, file, index, lines: part });
    // Activities first: once the gate exists, every chunk it releases is there.
    await queue.addBulk(chunks.activities.map((part, i) => ({ name: CHUNK_JOB, data: lines('activities', i, part), opts: { ...jobOpts, jobId: activities[i]!, delay: ACTIVITY_HOLD_MS } })));
    const gateData: GateChunkData = { v: 1, kind: 'gate', file, activities };
    await flows.add({
      name: CHUNK_JOB, queueName: name, data: gateData, opts: { ...jobOpts, jobId: gate },
      children: chunks.records.map((part, i) => ({ name: CHUNK_JOB, queueName: name, data: lines('records', i, part), opts: { ...jobOpts, jobId: records[i]! } })),
    });
    return { gate, records, activities, added: true };
  } finally {
    await closeWithin(flows, 5_000);
    await closeWithin(queue, 5_000);
  }
}

export interface ChunkStates {
  /** Lines chunks that completed, with their outcomes. */
  results: Map<string, ChunkJobResult>;
  /** Jobs in the failed set (after their last attempt), with BullMQ's reason. */
  failed: Map<string, string>;
  /** Jobs that cannot run until a failed record chunk is retried: the gate and the activity chunks. */
  blocked: string[];
}

export interface WaitOptions {
  queue: QueueTarget;
  enqueued: EnqueuedFile;
  /** Poll interval, ms. Default 200. */
  pollMs?: number;
  /** Stop waiting when this resolves (a signal): one last poll, then what finished by then is returned. */
  stop?: Promise<void>;
  /**
   * Longest wait for that last poll once `stop` resolved, ms: past it (the queue's Redis does not
   * answer) the connection is dropped and the jobs not seen finished are returned as blocked. Default 10,000.
   */
  stopGraceMs?: number;
  /** Called after each poll with the jobs finished so far. */
  onProgress?: (finished: number, total: number) => void;
}

/** Aborts `graceMs` after `stop` resolves; never without a stop. `clear()` drops its timer. */
function graceAfter(stop: Promise<void> | undefined, graceMs: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  void stop?.then(() => {
    if (!cleared) timer = setTimeout(() => controller.abort(), graceMs);
  });
  return { signal: controller.signal, clear: () => ((cleared = true), clearTimeout(timer)) };
}

const aborted = Symbol('aborted');

/** `p`'s value, or `aborted` when `signal` aborts first (a rejection of `p` is thrown). */
async function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | typeof aborted> {
  let onAbort: (() => void) | undefined;
  const abortion = new Promise<typeof aborted>((r) => {
    if (signal.aborted) r(aborted);
    signal.addEventListener('abort', (onAbort = () => r(aborted)), { once: true });
  });
  try {
    return await Promise.race([p, abortion]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/** Wait until every job of the file finished, or until the rest waits on a failed record chunk, or a stop. */
export async function waitForChunks(options: WaitOptions): Promise<ChunkStates> {
  const { enqueued } = options;
  const queue = new Queue(options.queue.name, bullOptions(options.queue));
  const all = [...enqueued.records, enqueued.gate, ...enqueued.activities];
  const lines = new Set([...enqueued.records, ...enqueued.activities]);
  const out: ChunkStates = { results: new Map(), failed: new Map(), blocked: [] };
  const finished = new Set<string>();
  const unfinished = () => all.filter((id) => !finished.has(id));
  let stopped = false;
  let wake: (() => void) | undefined;
  void options.stop?.then(() => ((stopped = true), wake?.()));
  const grace = graceAfter(options.stop, options.stopGraceMs ?? 10_000);
  // A poll abandoned at the grace's end may still answer later: it must not change what was returned.
  const poll = async () => {
    for (const id of all) {
      if (finished.has(id)) continue;
      // The state first: a job read before it finished would carry no return value.
      const state = await queue.getJobState(id);
      if (state !== 'completed' && state !== 'failed') continue;
      const job = await queue.getJob(id);
      if (!job || grace.signal.aborted) continue;
      finished.add(id);
      if (state === 'failed') out.failed.set(id, job.failedReason);
      else if (lines.has(id)) out.results.set(id, job.returnvalue as ChunkJobResult);
    }
  };
  let answered = false;
  try {
    try {
      await connected(queue, options.queue, undefined, grace.signal);
      answered = true;
    } catch (err) {
      if (grace.signal.aborted) return { ...out, blocked: unfinished() };
      throw err;
    }
    for (;;) {
      if ((await unlessAborted(poll(), grace.signal)) === aborted) return { ...out, blocked: unfinished() };
      options.onProgress?.(finished.size, all.length);
      if (finished.size === all.length) return out;
      const recordsDone = enqueued.records.every((id) => finished.has(id));
      if (stopped || (recordsDone && enqueued.records.some((id) => out.failed.has(id)))) return { ...out, blocked: unfinished() };
      // A stop ends the pause at once: the poll after it is the last.
      await new Promise<void>((r) => {
        const timer = setTimeout(r, options.pollMs ?? 200);
        wake = () => (clearTimeout(timer), r());
        if (stopped) wake();
      });
      wake = undefined;
    }
  } finally {
    grace.clear();
    // After a stop, or without an answer, nothing is pending: drop the connection (forced: no wait
    // for a Redis that may be gone).
    if (stopped || !answered) await settlesWithin(queue.getBackend().close(true), 1_000);
    else await closeWithin(queue, 5_000);
  }
}
