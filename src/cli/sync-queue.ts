/**
 * `crm-upsert sync file.jsonl --queue redis://… [--wait]`: the scheduled job on the queue. The
 * lines are read and parsed here (unparsable ones are rejected here, as in a local run), cut into
 * record and activity chunks and added as one flow (src/queue/chunks.ts); `crm-upsert worker`s
 * run them. With --wait it waits for the workers and prints the usual summary and report, each
 * line under its own number. Adding the same file again adds nothing: its jobs have the same ids.
 * A signal while the file is read stops reading: nothing is added. While the chunks are added, the
 * add gets at most `queue.drainSeconds` to finish (a file added in part is completed by adding it
 * again: its jobs have the same ids). While waiting: one last poll (at most `queue.drainSeconds`,
 * also when the queue's Redis is gone). Each time the summary follows, with exit 143 / 130; a
 * second signal exits at once.
 */
import { createHash } from 'node:crypto';
import { redact } from '../errors.js';
import { enqueueChunks, planChunks, waitForChunks, type ChunkStates, type EnqueuedFile, type PlannedChunks } from '../queue/chunks.js';
import { queueJobOptions, type ChunkLine } from '../queue/jobs.js';
import type { QueueTarget } from '../queue/target.js';
import { loadConfig } from './config.js';
import { ExitCode, UsageError } from './exit.js';
import { DEFAULT_MAX_LINE_BYTES, readLines } from './jsonl.js';
import { checkReportPath } from './preflight.js';
import { createProgress } from './progress.js';
import { queueSettings, queueTarget } from './queue.js';
import { ReportBuilder, writeReport } from './report.js';
import { openInput, type SyncFlags } from './sync-input.js';
import { DEFAULT_BATCH_SIZE, exitCodeOf, stopInfo, type StopState } from './sync.js';

export interface SyncQueueFlags extends SyncFlags {
  /** Redis URL of the queue (overrides the config's queue.url). */
  queue: string;
  wait?: boolean;
}

interface ReadFile {
  hash: string;
  lines: ChunkLine[];
}

/** Parse every line (rejections go to the report, as in a local run) and hash what was read. */
async function readAll(file: string, flags: SyncQueueFlags, report: ReportBuilder, stopped: () => boolean): Promise<ReadFile> {
  const hash = createHash('sha256');
  const lines: ChunkLine[] = [];
  for await (const raw of readLines(await openInput(file), { maxLineBytes: flags.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES })) {
    if (stopped()) break;
    if ('tooLong' in raw) {
      hash.update(`${raw.line}\u0000long\u0000${raw.bytes}\n`);
      report.reject(raw.line, `line is ${raw.bytes} bytes, over the limit of ${raw.limit} bytes (--max-line-bytes); not parsed`);
      continue;
    }
    if ('invalidUtf8' in raw) {
      hash.update(`${raw.line}\u0000utf8\u0000${raw.reason}\n`);
      report.reject(raw.line, raw.reason);
      continue;
    }
    hash.update(`${raw.line}\u0000${raw.text}\n`);
    if (raw.text.trim() === '') continue;
    try {
      lines.push({ line: raw.line, action: JSON.parse(raw.text) });
    } catch (err) {
      report.reject(raw.line, `invalid JSON: ${(err as Error).message}`);
    }
  }
  return { hash: hash.digest('hex').slice(0, 24), lines };
}

function refuse(flags: SyncQueueFlags): void {
  if (flags.dryRun) throw new UsageError('--dry-run cannot be combined with --queue (run the dry run without --queue)');
  if (flags.job) throw new UsageError('--job cannot be combined with --queue: the queue already runs each chunk once (its job ids come from the file)');
  if (flags.report && !flags.wait) throw new UsageError('--report needs --wait with --queue (the outcomes are known once the workers ran the chunks)');
  // The workers write the chunks, each in its own call: the lane is theirs to choose (the section's bulk.minRecords).
  if (flags.bulk !== undefined && flags.bulk !== 'auto') throw new UsageError(`--bulk ${flags.bulk} cannot be combined with --queue: the workers write each chunk in its own call, under --bulk auto (the config section's bulk.minRecords)`);
}

/** Record what the workers returned; failed and blocked chunks leave their lines unsettled (the stop says why). */
function collect(report: ReportBuilder, stop: StopState, planned: PlannedChunks, enqueued: EnqueuedFile, states: ChunkStates): number {
  const linesOf = new Map<string, ChunkLine[]>([
    ...enqueued.records.map((id, i) => [id, planned.records[i]!] as const),
    ...enqueued.activities.map((id, i) => [id, planned.activities[i]!] as const),
  ]);
  let apiCalls = 0;
  const unsettled: number[] = [];
  for (const [id, lines] of linesOf) {
    const result = states.results.get(id);
    if (result) {
      apiCalls += result.apiCalls;
      for (const { line, outcome } of result.outcomes) report.outcome(line, outcome);
    } else unsettled.push(...lines.map((l) => l.line));
  }
  if (states.failed.size > 0) {
    const [id, reason] = [...states.failed][0]!;
    stop.reason ??= 'infrastructure';
    stop.message ??= redact(`job ${id} is in the queue's failed set (${reason}); ${states.blocked.length} more jobs wait for it: fix the cause, then crm-upsert queue retry`);
  }
  if (unsettled.length > 0 && !stop.reason) {
    stop.reason = 'infrastructure';
    stop.message = `${unsettled.length} lines have no outcome from the workers (their chunks did not finish)`;
  }
  if (unsettled.length > 0) stop.unsettled = { first: Math.min(...unsettled), last: Math.max(...unsettled), count: unsettled.length };
  return apiCalls;
}

/** What a stop signal interrupts: reading the file, adding its chunks, or waiting for the workers. */
type Phase = 'read' | 'add' | 'wait';

/**
 * The first SIGINT / SIGTERM records the stop (and says what happens next, which depends on the
 * phase it interrupts); a second one exits at once.
 */
function onStopSignal(stop: StopState, drainSeconds: number, phase: () => Phase): { stopped: Promise<void>; dispose(): void } {
  let resolveStop!: () => void;
  const stopped = new Promise<void>((r) => (resolveStop = r));
  const next: Record<Phase, string> = {
    read: 'stopping before anything is added',
    add: `letting the add finish (at most ${drainSeconds} s), then stopping`,
    wait: `one last look at the queue (at most ${drainSeconds} s), then stopping`,
  };
  const handler = (signal: NodeJS.Signals) => {
    if (stop.reason) process.exit(signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm);
    stop.reason = signal as StopState['reason'];
    process.stderr.write(`crm-upsert: ${signal}: ${next[phase()]} (send again to exit now)\n`);
    resolveStop();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return { stopped, dispose: () => (process.off('SIGINT', handler), process.off('SIGTERM', handler)) };
}

/** The add, or `undefined` when a stop came and the add did not finish within `graceMs` of it. */
async function addWithin(add: Promise<EnqueuedFile>, stopped: Promise<void>, graceMs: number): Promise<EnqueuedFile | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = stopped.then(() => new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), graceMs))));
  try {
    return await Promise.race([add, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The summary of a run that does not wait for the workers: the file added, or a stop before or
 * during the add (the message says whether part of it may be on the queue, and what to do).
 */
async function stoppedOrAdded(file: string, flags: SyncQueueFlags, target: QueueTarget, report: ReportBuilder, stop: StopState, read: ReadFile, enqueued: EnqueuedFile | undefined, phase: Phase, started: number): Promise<number> {
  if (stop.reason) {
    stop.message = enqueued
      ? 'stopped after the file was added: the workers run its chunks'
      : phase === 'read'
        ? 'stopped while reading the file: nothing was added; sync it again'
        : 'stopped while the file was being added (the queue did not answer in time): part of it may be on the queue; sync it again: its chunks have the same ids, so a part already there is not added twice';
    process.stderr.write(`crm-upsert: stopped: ${stop.message}\n`);
    if (flags.report) await writeReport(flags.report, report.toJSON(0, stopInfo(stop)));
  }
  const code = exitCodeOf(stop, report);
  const chunks = enqueued ? { chunks: { records: enqueued.records.length, activities: enqueued.activities.length } } : {};
  process.stdout.write(`${JSON.stringify({
    command: 'sync', input: file, queue: target.name, ...chunks, lines: read.lines.length, added: enqueued?.added ?? false,
    rejected: report.counts.rejected ?? 0, ...(stop.reason ? { stopped: stop.reason } : {}), durationMs: Date.now() - started, exitCode: code,
  })}\n`);
  return code;
}

export async function syncQueueCommand(file: string, flags: SyncQueueFlags): Promise<number> {
  refuse(flags);
  const config = await loadConfig(flags.config);
  const settings = queueSettings(config, flags.queue, 'sync --queue');
  const target: QueueTarget = queueTarget(config, settings);
  if (flags.report) checkReportPath(flags.report);
  const started = Date.now();
  const report = new ReportBuilder();
  const stop: StopState = {};
  let phase: Phase = 'read';
  const signals = onStopSignal(stop, settings.drainSeconds, () => phase);
  let states: ChunkStates;
  let planned: PlannedChunks;
  let enqueued: EnqueuedFile | undefined;
  let read: ReadFile;
  try {
    read = await readAll(file, flags, report, () => stop.reason !== undefined);
    const size = flags.batchSize ?? DEFAULT_BATCH_SIZE;
    planned = planChunks(read.lines, size);
    if (!stop.reason) {
      phase = 'add';
      const adding = enqueueChunks({ queue: target, file: `${read.hash}-${size}`, chunks: planned, jobOptions: queueJobOptions(settings) });
      enqueued = await addWithin(adding, signals.stopped, settings.drainSeconds * 1_000);
      if (!enqueued) adding.catch(() => undefined);
    }
    if (stop.reason || !flags.wait) return await stoppedOrAdded(file, flags, target, report, stop, read, enqueued, phase, started);
    phase = 'wait';
    states = await waitForChunks({ queue: target, enqueued: enqueued!, stop: signals.stopped, stopGraceMs: settings.drainSeconds * 1_000 });
    if (stop.reason) stop.message = 'stopped waiting; the chunks stay on the queue and the workers finish them';
  } finally {
    signals.dispose();
  }
  enqueued = enqueued!;
  const chunks = { records: enqueued.records.length, activities: enqueued.activities.length };
  const apiCalls = collect(report, stop, planned, enqueued, states);
  const stopped = stopInfo(stop);
  if (flags.report) await writeReport(flags.report, report.toJSON(apiCalls, stopped));
  const code = exitCodeOf(stop, report);
  if (stop.message) process.stderr.write(`crm-upsert: stopped: ${stop.message}\n`);
  createProgress().finish({
    command: 'sync', input: file, queue: target.name, chunks, added: enqueued.added,
    actions: report.actions, counts: report.counts, apiCalls, problems: report.failures,
    ...(stopped ? { stopped: stopped.reason } : {}), ...(stop.unsettled ? { unsettled: stop.unsettled.count } : {}),
    durationMs: Date.now() - started, exitCode: code, ...(flags.report ? { report: flags.report } : {}),
  });
  return code;
}
