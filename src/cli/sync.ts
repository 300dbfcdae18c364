/**
 * `crm-upsert sync <file.jsonl|->`: the scheduled job. Streams actions in chunks of
 * --batch-size lines (constant memory), applies each chunk with `applyMany`, writes the report,
 * and exits 0 / 1 / 2 / 3 / 130 / 143 (see exit.ts).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createSync, type Sync } from '../engine/index.js';
import type { CrmAdapter } from '../adapter.js';
import type { LedgerBackend } from '../ledger/types.js';
import { buildAdapter, ledgerUrl, loadConfig, openLedgerOrExit, type Config } from './config.js';
import { dryRun } from './dry-run.js';
import { ExitCode, UsageError } from './exit.js';
import { acquireJobLock, DEFAULT_JOB_LEASE_MS, describeHolder, type JobLock } from './job-lock.js';
import { DEFAULT_MAX_LINE_BYTES, readLines, type RawLine } from './jsonl.js';
import { createProgress, type Progress } from './progress.js';
import { ReportBuilder, writeReport } from './report.js';

export interface SyncFlags {
  config: string;
  ledger?: string;
  job?: string;
  concurrency?: number;
  batchSize?: number;
  dryRun?: boolean;
  report?: string;
  maxLineBytes?: number;
}

export const DEFAULT_BATCH_SIZE = 500;
/** The CLI's claim lease: short, so lines in progress in a killed run are retried a minute later. */
export const DEFAULT_CLI_LEASE_MS = 60_000;

/** Why a run stopped early. */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'lock-lost';

export interface StopState {
  reason?: StopReason;
}

/** Open an input: a file path, or `-` for stdin. A missing file is a usage error. */
export async function openInput(file: string): Promise<Readable> {
  if (file === '-') return process.stdin;
  try {
    const s = await stat(file);
    if (!s.isFile()) throw new UsageError(`input ${file} is not a file`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`input file ${file} not found`);
  }
  return createReadStream(file, { highWaterMark: 256 * 1024 });
}

/** Newlines in a file (for the progress bar's total); streamed, constant memory. */
export async function countLines(file: string): Promise<number> {
  let n = 0;
  let last = 10;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n += 1;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 10 ? n : n + 1;
}

export interface RunOptions {
  sync: Sync;
  lines: AsyncIterable<RawLine>;
  report: ReportBuilder;
  batchSize?: number;
  progress?: Progress;
  stop?: StopState;
}

/** Parse lines into chunks and apply them; records every line's outcome in the report. */
export async function runActions(options: RunOptions): Promise<void> {
  const { sync, report, progress } = options;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const stop = options.stop ?? {};
  let chunk: { line: number; action: unknown }[] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    const current = chunk;
    chunk = [];
    const outcomes = await sync.applyMany(current.map((c) => c.action));
    outcomes.forEach((o, i) => report.outcome(current[i]!.line, o));
    progress?.update(report.actions, report.failures);
  };
  try {
    for await (const raw of options.lines) {
      if (stop.reason) break;
      if ('tooLong' in raw) {
        report.reject(raw.line, `line is ${raw.bytes} bytes, over the limit of ${raw.limit} bytes (--max-line-bytes); not parsed`);
        continue;
      }
      if ('invalidUtf8' in raw) {
        report.reject(raw.line, raw.reason);
        continue;
      }
      if (raw.text.trim() === '') continue;
      let action: unknown;
      try {
        action = JSON.parse(raw.text);
      } catch (err) {
        report.reject(raw.line, `invalid JSON: ${(err as Error).message}`);
        continue;
      }
      chunk.push({ line: raw.line, action });
      if (chunk.length >= batchSize) {
        await flush();
        if (stop.reason) break;
      }
    }
  } catch (err) {
    // A signal destroys the input to interrupt a blocked read; that ends the stream early.
    if (!stop.reason) throw err;
  }
  // Lines read but not yet sent are left for the next run when stopping.
  if (!stop.reason) await flush();
}

/** Turn SIGINT/SIGTERM into a graceful stop; a second signal exits at once. */
export function handleSignals(stop: StopState, onStop: () => void): () => void {
  const handler = (signal: NodeJS.Signals) => {
    if (stop.reason) process.exit(signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm);
    stop.reason = signal as StopReason;
    process.stderr.write(`crm-upsert: ${signal}: finishing the batch in flight, then stopping (send again to exit now)\n`);
    onStop();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

export interface OpenedSync {
  sync: Sync;
  adapter: CrmAdapter;
  ledger: LedgerBackend;
}

/** The engine the config describes; `--ledger` overrides the config's ledger. */
export async function openSync(config: Config, flags: { ledger?: string; concurrency?: number }, env: NodeJS.ProcessEnv = process.env): Promise<OpenedSync> {
  const adapter = await buildAdapter(config, env);
  const ledger = openLedgerOrExit(ledgerUrl(config, flags.ledger));
  const sync = createSync({
    adapter,
    ledger,
    dedupeWindowMs: config.dedupeWindowMs,
    leaseMs: config.leaseMs ?? DEFAULT_CLI_LEASE_MS,
    ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
  });
  return { sync, adapter, ledger };
}

export async function syncCommand(file: string, flags: SyncFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  if (flags.dryRun) return dryRun(file, config, flags);
  const input = await openInput(file);
  const { sync, adapter, ledger } = await openSync(config, flags);
  const started = Date.now();
  const stop: StopState = {};
  const disposeSignals = handleSignals(stop, () => input.destroy());
  let lock: JobLock | undefined;
  try {
    if (flags.job) {
      const acquired = await acquireJobLock(ledger, flags.job, {
        // Never longer than the claims' lease: a killed run's lock is free when its lines are.
        leaseMs: Math.min(DEFAULT_JOB_LEASE_MS, config.leaseMs ?? DEFAULT_CLI_LEASE_MS),
        onLost: () => {
          stop.reason ??= 'lock-lost';
          process.stderr.write(`crm-upsert: lost the lock of job "${flags.job}" (lease not renewed in time); stopping after the batch in flight\n`);
        },
      });
      if (!acquired.ok) {
        process.stderr.write(`crm-upsert: ${describeHolder(flags.job, acquired)}\n`);
        input.destroy();
        return ExitCode.locked;
      }
      lock = acquired.lock;
    }
    const report = new ReportBuilder();
    const tty = Boolean(process.stdout.isTTY);
    const progress = createProgress({ total: tty && file !== '-' ? await countLines(file) : undefined });
    await runActions({
      sync,
      lines: readLines(input, { maxLineBytes: flags.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES }),
      report,
      batchSize: flags.batchSize,
      progress,
      stop,
    });
    const apiCalls = adapter.apiCalls();
    if (flags.report) await writeReport(flags.report, report.toJSON(apiCalls));
    const code = stop.reason === 'SIGINT' ? ExitCode.sigint : stop.reason === 'SIGTERM' ? ExitCode.sigterm : stop.reason ? ExitCode.problems : report.exitCode();
    progress.finish({
      command: 'sync',
      input: file,
      ...(flags.job ? { job: flags.job } : {}),
      actions: report.actions,
      counts: report.counts,
      apiCalls,
      problems: report.failures,
      ...(stop.reason ? { stopped: stop.reason } : {}),
      durationMs: Date.now() - started,
      exitCode: code,
      ...(flags.report ? { report: flags.report } : {}),
    });
    return code;
  } finally {
    disposeSignals();
    await lock?.release().catch(() => undefined);
    await sync.close().catch(() => undefined);
  }
}
