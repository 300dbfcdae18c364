/**
 * `crm-upsert sync file.jsonl --queue redis://… [--wait]`: the scheduled job on the queue. The
 * lines are read and parsed here (unparsable ones are rejected here, as in a local run), cut into
 * record and activity chunks and added as one flow (src/queue/chunks.ts); `crm-upsert worker`s
 * run them. With --wait it waits for the workers and prints the usual summary and report, each
 * line under its own number. Adding the same file again adds nothing: its jobs have the same ids.
 * A signal stops the wait only: one last poll (at most `queue.drainSeconds`, also when the queue's
 * Redis is gone), then the summary and exit 143 / 130; the chunks stay on the queue.
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
async function readAll(file: string, flags: SyncQueueFlags, report: ReportBuilder): Promise<ReadFile> {
  const hash = createHash('sha256');
  const lines: ChunkLine[] = [];
  for await (const raw of readLines(await openInput(file), { maxLineBytes: flags.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES })) {
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

function stopWaiting(stop: StopState, drainSeconds: number): { stopped: Promise<void>; dispose(): void } {
  let resolveStop!: () => void;
  const stopped = new Promise<void>((r) => (resolveStop = r));
  const handler = (signal: NodeJS.Signals) => {
    if (stop.reason) process.exit(signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm);
    stop.reason = signal as StopState['reason'];
    stop.message = 'stopped waiting; the chunks stay on the queue and the workers finish them';
    process.stderr.write(`crm-upsert: ${signal}: one last look at the queue (at most ${drainSeconds} s), then stopping (send again to exit now)\n`);
    resolveStop();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return { stopped, dispose: () => (process.off('SIGINT', handler), process.off('SIGTERM', handler)) };
}

export async function syncQueueCommand(file: string, flags: SyncQueueFlags): Promise<number> {
  refuse(flags);
  const config = await loadConfig(flags.config);
  const settings = queueSettings(config, flags.queue, 'sync --queue');
  const target: QueueTarget = queueTarget(config, settings);
  if (flags.report) checkReportPath(flags.report);
  const started = Date.now();
  const report = new ReportBuilder();
  const read = await readAll(file, flags, report);
  const size = flags.batchSize ?? DEFAULT_BATCH_SIZE;
  const planned = planChunks(read.lines, size);
  const enqueued = await enqueueChunks({ queue: target, file: `${read.hash}-${size}`, chunks: planned, jobOptions: queueJobOptions(settings) });
  const chunks = { records: enqueued.records.length, activities: enqueued.activities.length };
  if (!flags.wait) {
    const code = report.exitCode();
    process.stdout.write(`${JSON.stringify({ command: 'sync', input: file, queue: target.name, chunks, lines: read.lines.length, added: enqueued.added, rejected: report.counts.rejected ?? 0, durationMs: Date.now() - started, exitCode: code })}\n`);
    return code;
  }
  const stop: StopState = {};
  const signals = stopWaiting(stop, settings.drainSeconds);
  let states: ChunkStates;
  try {
    states = await waitForChunks({ queue: target, enqueued, stop: signals.stopped, stopGraceMs: settings.drainSeconds * 1_000 });
  } finally {
    signals.dispose();
  }
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
