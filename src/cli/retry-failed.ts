/**
 * `crm-upsert retry-failed`: re-apply every action whose last attempt failed. The engine stores
 * the action in the failed entry's error, and `retryStored` re-applies it under the entry's own
 * key (never a re-derived one), so the retry takes the failed entry over and goes through the
 * same path as the first attempt.
 */
import type { Action } from '../../schemas/action.js';
import { loadConfig } from './config.js';
import { createProgress } from './progress.js';
import { ReportBuilder, writeReport } from './report.js';
import { openSync } from './sync.js';

export interface RetryFailedFlags {
  config: string;
  ledger?: string;
  report?: string;
}

const PAGE = 500;

export async function retryFailedCommand(flags: RetryFailedFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  const { sync, adapter, ledger } = await openSync(config, flags);
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
        const action = (entry.error as { action?: Action } | null)?.action;
        // Failed `handle` events and job-lock entries carry no action: they are retried by their own callers.
        if (action && typeof action === 'object') return true;
        skipped += 1;
        return false;
      });
      if (runnable.length > 0) {
        const outcomes = await sync.retryStored(runnable);
        outcomes.forEach((o) => report.outcome(0, o));
      }
      if (page.length < PAGE) break;
    }
    const apiCalls = adapter.apiCalls();
    if (flags.report) await writeReport(flags.report, report.toJSON(apiCalls));
    const code = report.exitCode();
    createProgress().finish({ command: 'retry-failed', actions: report.actions, counts: report.counts, skipped, apiCalls, problems: report.failures, durationMs: Date.now() - started, exitCode: code });
    return code;
  } finally {
    await sync.close();
  }
}
