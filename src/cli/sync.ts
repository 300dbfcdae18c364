/**
 * `crm-upsert sync <file.jsonl|->`: the scheduled job. Streams actions through `applyEach` in
 * steps of --batch-size lines (constant memory), writes the report,
 * and exits 0 / 1 / 2 / 3 / 4 / 130 / 143 (see exit.ts).
 */
import { createReadStream } from 'node:fs';
import { createSync, type Sync } from '../engine/index.js';
import type { BulkJobProgress } from '../../adapters/kit/vendor-cli.js';
import type { CrmAdapter } from '../adapter.js';
import type { BulkMode } from '../engine/types.js';
import { plainMessage, type CrmError } from '../errors.js';
import { DEFAULT_RETRY } from '../retry.js';
import type { LedgerBackend } from '../ledger/types.js';
import { guardAdapter, type AdapterGuard, type TripReason } from './adapter-guard.js';
import { authFix } from './auth-hint.js';
import { buildAdapter, DEFAULT_CLI_LEASE_MS, engineSettings, ledgerUrl, loadConfig, openConfigLedger, type Config } from './config.js';
import { bulkProgressLine } from './bulk-progress.js';
import { dryRun } from './dry-run.js';
import { openInput, type SyncFlags } from './sync-input.js';
import { ExitCode, isInfrastructureFault } from './exit.js';
import { acquireJobLock, DEFAULT_JOB_LEASE_MS, describeHolder, type JobLock } from './job-lock.js';
import { DEFAULT_MAX_LINE_BYTES, readLines, type RawLine } from './jsonl.js';
import { checkLedgerTarget, checkReportPath, checkSharedRateBudget } from './preflight.js';
import { createProgress, type Progress } from './progress.js';
import { problemDigest, ReportBuilder, writeReport, type StopInfo } from './report.js';
import { observeWaits } from '../telemetry/waits.js';

export const DEFAULT_BATCH_SIZE = 500;
export { DEFAULT_CLI_LEASE_MS } from './config.js';

/** Why a run stopped early. */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'lock-lost' | 'auth' | 'infrastructure';

export interface StopState {
  reason?: StopReason;
  /** What to fix or what failed (auth and infrastructure stops). */
  message?: string;
  /** The chunk whose `applyMany` failed: its lines' outcomes are unknown to this run. */
  unsettled?: { first: number; last: number; count: number };
}

/** The exit code of a run that got as far as reading its input. */
export function exitCodeOf(stop: StopState, report: ReportBuilder): number {
  switch (stop.reason) {
    case 'SIGINT': return ExitCode.sigint;
    case 'SIGTERM': return ExitCode.sigterm;
    case 'auth': return ExitCode.usage;
    case 'infrastructure': return ExitCode.infra;
    case 'lock-lost': return ExitCode.problems;
    default: return report.exitCode();
  }
}

/** Record an infrastructure fault as the reason the run stopped (it wins over a signal: it says more). */
export function stopForFault(stop: StopState, err: unknown): void {
  stop.reason = 'infrastructure';
  stop.message ??= plainMessage(err);
}

/** The report's and summary's account of a stop. */
export function stopInfo(stop: StopState): StopInfo | undefined {
  if (!stop.reason) return undefined;
  return { reason: stop.reason, ...(stop.message ? { message: stop.message } : {}), ...(stop.unsettled ? { unsettledLines: stop.unsettled } : {}) };
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
  /** Whether upserts go through the adapter's bulk lane (`--bulk`). Default `auto`. */
  bulk?: BulkMode;
}

/** Thrown into the engine's walk to end it where it is: a stop sends nothing more. */
const STOPPED = Symbol('stopped');

/**
 * Parse lines and apply them with `applyEach` (every --batch-size lines looked up in the ledger,
 * calls of --batch-size actions that need a write), recording every line's outcome in the report.
 * A re-run over a file done before answers its completed lines from the ledger and sends what is
 * left between them (failed, held by a run that died) in full batches.
 */
export async function runActions(options: RunOptions): Promise<void> {
  const { sync, report, progress } = options;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const stop = options.stop ?? {};
  // The line of each action read and not yet settled, by its index in the walk.
  const open = new Map<number, number>();
  let read = 0;
  async function* actions(): AsyncGenerator<unknown> {
    try {
      for await (const raw of options.lines) {
        if (stop.reason) throw STOPPED;
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
        open.set(read++, raw.line);
        yield action;
      }
    } catch (err) {
      // A signal destroys the input to interrupt a blocked read; that ends the stream early.
      if (!stop.reason) throw err;
    }
    // Lines read but not yet sent are left for the next run when stopping.
    if (stop.reason) throw STOPPED;
  }
  try {
    for await (const settled of sync.applyEach(actions(), { batchSize, bulk: options.bulk ?? 'auto' })) {
      for (const { index, outcome } of settled) {
        report.outcome(open.get(index)!, outcome);
        open.delete(index);
      }
      progress?.update(report.actions, report.counts);
      if (stop.reason) break;
    }
  } catch (err) {
    if (err === STOPPED) return;
    if (!isInfrastructureFault(err)) throw err;
    // Nothing of the failed call is counted: what the CRM confirmed but the ledger did not record
    // stays in progress there, and the next run settles it (replay or upsert, never a duplicate).
    stopForFault(stop, err);
    let first = Infinity;
    let last = -Infinity;
    for (const line of open.values()) [first, last] = [Math.min(first, line), Math.max(last, line)];
    if (open.size > 0) stop.unsettled = { first, last, count: open.size };
  }
}

/** Turn SIGINT/SIGTERM into a graceful stop; a second signal exits at once. `say` prints the stop message on a line of its own. */
export function handleSignals(stop: StopState, onStop: () => void, say: (line: string) => void = (line) => void process.stderr.write(`${line}\n`)): () => void {
  const handler = (signal: NodeJS.Signals) => {
    if (stop.reason) process.exit(signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm);
    stop.reason = signal as StopReason;
    say(`crm-upsert: ${signal}: finishing the batch in flight, then stopping (send again to exit now)`);
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
  /** The guarded adapter the engine writes through. */
  adapter: CrmAdapter;
  ledger: LedgerBackend;
  guard: AdapterGuard;
}

export interface OpenSyncHooks {
  /** The CRM refused the token, or could not be reached for a whole retry budget: stop after the chunk in flight. */
  onTrip?: (reason: TripReason, error: CrmError) => void;
  /** Each move of a job of the adapter's bulk lane. */
  onBulkProgress?: (progress: BulkJobProgress) => void;
}

/** The engine the config describes; `--ledger` overrides the config's ledger. */
export async function openSync(config: Config, flags: { ledger?: string; concurrency?: number }, env: NodeJS.ProcessEnv = process.env, hooks: OpenSyncHooks = {}): Promise<OpenedSync> {
  // One batch's retry budget of connection failures in a row: the configured one when set.
  const unreachableAfter = (config.retry?.retries ?? DEFAULT_RETRY.retries) + 1;
  const adapter = await buildAdapter(config, env, hooks.onBulkProgress ? { onBulkProgress: hooks.onBulkProgress } : {});
  const guard = guardAdapter(adapter, { unreachableAfter, ...(hooks.onTrip ? { onTrip: hooks.onTrip } : {}) });
  const ledger = openConfigLedger(config, flags.ledger);
  const sync = createSync({ adapter: guard.adapter, ledger, ...engineSettings(config), ...(flags.concurrency ? { concurrency: flags.concurrency } : {}) });
  return { sync, adapter: guard.adapter, ledger, guard };
}

/** Everything that can be checked before the first write (exit 2 at once instead of half a run). */
export async function preflight(config: Config, flags: { ledger?: string; job?: string; report?: string }): Promise<void> {
  checkLedgerTarget(ledgerUrl(config, flags.ledger), { job: flags.job });
  await checkSharedRateBudget(config);
  // Last: it may create the (empty) report file.
  if (flags.report) checkReportPath(flags.report);
}

/** Wait for `p`, but not longer than `ms`: closing a connection to a store that is gone must not hang the exit. */
export async function settleWithin(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Stop the run when the adapter guard trips: the token was refused, or the CRM is unreachable. */
export function tripHandler(config: Config, stop: StopState): (reason: TripReason, error: CrmError) => void {
  return (reason, error) => {
    if (reason === 'auth') {
      stop.reason = 'auth';
      stop.message = authFix(config, error);
    } else {
      stopForFault(stop, new Error(`the CRM is unreachable (every request of a whole retry budget failed without an answer): ${plainMessage(error)}`));
    }
  };
}

export async function syncCommand(file: string, flags: SyncFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  if (flags.dryRun) return dryRun(file, config, flags);
  const input = await openInput(file);
  const stop: StopState = {};
  let progress: Progress | undefined;
  // One line per Bulk job on a terminal's stderr; the bar steps aside while it is drawn.
  const jobLine = bulkProgressLine(process.stderr, { pause: () => progress?.pause(), resume: () => progress?.resume() });
  let opened: OpenedSync;
  try {
    await preflight(config, flags);
    opened = await openSync(config, flags, process.env, { onTrip: tripHandler(config, stop), ...(jobLine ? { onBulkProgress: jobLine.update } : {}) });
  } catch (err) {
    input.destroy();
    throw err;
  }
  const { sync, adapter, ledger } = opened;
  const started = Date.now();
  // Above the bar on a TTY, never over it.
  const say = (line: string) => (progress ? progress.note(line) : void process.stderr.write(`${line}\n`));
  const disposeSignals = handleSignals(stop, () => input.destroy(), say);
  const report = new ReportBuilder();
  const tty = Boolean(process.stdout.isTTY);
  let lock: JobLock | undefined;
  try {
    try {
      if (flags.job) {
        const acquired = await acquireJobLock(ledger, flags.job, {
          // Never longer than the claims' lease: a killed run's lock is free when its lines are.
          leaseMs: Math.min(DEFAULT_JOB_LEASE_MS, config.leaseMs ?? DEFAULT_CLI_LEASE_MS),
          onLost: () => {
            stop.reason ??= 'lock-lost';
            say(`crm-upsert: lost the lock of job "${flags.job}" (lease not renewed in time); stopping after the batch in flight`);
          },
        });
        if (!acquired.ok) {
          process.stderr.write(`crm-upsert: ${describeHolder(flags.job, acquired)}\n`);
          input.destroy();
          return ExitCode.locked;
        }
        lock = acquired.lock;
      }
      progress = createProgress({ total: tty && file !== '-' ? await countLines(file) : undefined });
      const bar = progress;
      await observeWaits((wait) => bar.wait(wait), () => runActions({
        sync,
        lines: readLines(input, { maxLineBytes: flags.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES }),
        report,
        batchSize: flags.batchSize,
        // A call's jobs are over when it settles: a line left open by one not followed to its end is ended there.
        progress: {
          ...bar,
          update(done, counts) {
            jobLine?.end();
            bar.update(done, counts);
          },
        },
        stop,
        bulk: flags.bulk ?? 'auto',
      }));
    } catch (err) {
      if (!isInfrastructureFault(err)) throw err;
      stopForFault(stop, err);
      input.destroy();
    }
    jobLine?.end();
    const apiCalls = adapter.apiCalls();
    const stopped = stopInfo(stop);
    if (flags.report) await writeReport(flags.report, report.toJSON(apiCalls, stopped));
    const code = exitCodeOf(stop, report);
    if (stop.message) say(`crm-upsert: stopped: ${stop.message}`);
    (progress ?? createProgress()).finish({
      command: 'sync',
      input: file,
      ...(flags.job ? { job: flags.job } : {}),
      actions: report.actions,
      counts: report.counts, ...report.recreatedCount(),
      apiCalls,
      problems: report.failures,
      ...(stopped ? { stopped: stopped.reason } : {}),
      ...(stop.unsettled ? { unsettled: stop.unsettled.count } : {}),
      durationMs: Date.now() - started,
      exitCode: code,
      ...(flags.report ? { report: flags.report } : {}),
    });
    // Off a terminal the summary is one JSON line: a scheduler's log says what went wrong here.
    if (!tty && !flags.quiet) for (const line of problemDigest(report, flags.report)) process.stderr.write(`${line}\n`);
    return code;
  } finally {
    disposeSignals();
    if (lock) await settleWithin(lock.release(), 5_000);
    await settleWithin(sync.close(), 5_000);
  }
}
