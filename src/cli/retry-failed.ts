/**
 * `crm-upsert retry-failed`: re-apply every action whose last attempt failed. The engine stores
 * the action in the failed entry's error, and `retryStored` re-applies it under the entry's own
 * key (never a re-derived one), so the retry takes the failed entry over and goes through the
 * same path as the first attempt.
 */
import { storedAction } from '../engine/index.js';
import { loadConfig } from './config.js';
import { isInfrastructureFault } from './exit.js';
import { createProgress } from './progress.js';
import { ReportBuilder, writeReport } from './report.js';
import { exitCodeOf, openSync, preflight, settleWithin, stopForFault, stopInfo, tripHandler, type StopState } from './sync.js';

export interface RetryFailedFlags {
  config: string;
  ledger?: string;
  report?: string;
}

const PAGE = 500;

export async function retryFailedCommand(flags: RetryFailedFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  await preflight(config, flags);
  const stop: StopState = {};
  const { sync, adapter, ledger } = await openSync(config, flags, process.env, { onTrip: tripHandler(config, stop) });
  const report = new ReportBuilder();
  const started = Date.now();
  let skipped = 0;
  try {
    let after: string | undefined;
    for (;;) {
      // Page through a snapshot of keys: retried entries leave the `failed` set as we go.
      const page = await ledger.list({ status: 'failed', limit: PAGE, ...(after !== undefined ? { after } : {}) });
      if (page.length === 0) break;
      after = page[page.length - 1]!.key;
      // Retried under their stored keys: a keyless action re-derived now would land on a new key.
      const runnable = page.filter((entry) => {
        // Failed `handle` events and job-lock entries carry no action: they are retried by their own callers.
        if (storedAction(entry.error)) return true;
        skipped += 1;
        return false;
      });
      if (runnable.length > 0) {
        const outcomes = await sync.retryStored(runnable);
        outcomes.forEach((o) => report.outcome(0, o));
      }
      // A refused token or an unreachable CRM stops the run (stop.reason is set by the adapter guard).
      if (page.length < PAGE || stop.reason) break;
    }
  } catch (err) {
    // The page in flight is not counted: its entries stay failed or in progress for the next retry.
    if (!isInfrastructureFault(err)) throw err;
    stopForFault(stop, err);
  } finally {
    await settleWithin(sync.close(), 5_000);
  }
  const apiCalls = adapter.apiCalls();
  const stopped = stopInfo(stop);
  if (flags.report) await writeReport(flags.report, report.toJSON(apiCalls, stopped));
  const code = exitCodeOf(stop, report);
  if (stop.message) process.stderr.write(`crm-upsert: stopped: ${stop.message}\n`);
  createProgress().finish({
    command: 'retry-failed', actions: report.actions, counts: report.counts, ...report.recreatedCount(), skipped, apiCalls, problems: report.failures,
    ...(stopped ? { stopped: stopped.reason } : {}), durationMs: Date.now() - started, exitCode: code,
  });
  return code;
}
