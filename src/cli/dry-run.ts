/**
 * `sync --dry-run`: validate and key every line, read (never claim) the ledger, and print what
 * each action would do with the request body the adapter would send. Zero CRM requests, zero
 * writes anywhere: the ledger is opened with `createSchema: false` (no table or file is created)
 * and the shared rate budget is not opened.
 */
import { ClaimAction, decideClaim } from '../ledger/decide-claim.js';
import { existsSync } from 'node:fs';
import { createSync } from '../engine/index.js';
import { memoryLedger } from '../ledger/memory.js';
import { plainMessage } from '../errors.js';
import type { LedgerBackend, LedgerEntry } from '../ledger/types.js';
import type { Action } from '../../schemas/action.js';
import type { RequestPreview } from '../../adapters/kit/vendor-cli.js';
import { buildAdapter, ledgerUrl, openLedgerOrExit, sectionOf, type Config } from './config.js';
import { DEFAULT_MAX_LINE_BYTES, readLines } from './jsonl.js';
import { checkReportPath, sqlitePath } from './preflight.js';
import { createProgress } from './progress.js';
import { ReportBuilder, writeReport } from './report.js';
import { openInput, type SyncFlags } from './sync-input.js';
import { bulkJobText, bulkPlan } from './dry-run-bulk.js';
import { vendorOf } from './vendors.js';

/** What the action would do: the CRM write it would make, or why it would make none. */
export type Verdict = 'upsert' | 'create' | 'retry' | 'replay' | 'suppress' | 'in_flight' | 'reject';

/** The request the adapter would send for this action (parent ids are resolved at write time). */
export function previewRequest(config: Config, action: Action, key: string): RequestPreview {
  return vendorOf(config.crm).previewRequest(sectionOf(config), action, key);
}

/** What a claim would decide (the ledger's one state machine), read without claiming. */
function verdictOf(entry: LedgerEntry | null, keyless: boolean, action: Action, fingerprint: string, now: number): Verdict {
  const decision = decideClaim(entry, { key: entry?.key ?? '', fingerprint, leaseMs: 0, retryFailed: true }, now, 0);
  if (decision.action !== ClaimAction.answer) return decision.action === ClaimAction.retryFailed ? 'retry' : action.op;
  switch (decision.outcome) {
    case 'completed':
      return keyless ? 'suppress' : 'replay';
    case 'in_progress':
      return 'in_flight';
    case 'conflict':
      return 'reject';
    default:
      return 'retry';
  }
}

/**
 * The ledger to read, opened without creating its schema, or undefined when it does not exist
 * yet (a SQLite file not created: opening it would create the file and its directory).
 */
function readableLedger(url: string, config: Config): LedgerBackend | undefined {
  const file = sqlitePath(url);
  if (file !== undefined && !existsSync(file)) return undefined;
  return openLedgerOrExit(url, { ...config.ledgerOptions, createSchema: false });
}

export async function dryRun(file: string, config: Config, flags: SyncFlags): Promise<number> {
  const input = await openInput(file);
  if (flags.report) checkReportPath(flags.report);
  // A dry run sends no request, so it needs no credentials: the adapter gets a token it never uses.
  const env = { ...process.env };
  for (const [name, value] of Object.entries(vendorOf(config.crm).dryRunEnv)) env[name] ||= value;
  // Nor a shared rate budget: opening one creates its table (Postgres) or keys (Redis).
  const adapter = await buildAdapter(config, env, { sharedBudget: false });
  // The engine is used only for prepare() (validation and keys); it never sees the real ledger.
  const engine = createSync({ adapter, ledger: memoryLedger(), dedupeWindowMs: config.dedupeWindowMs, ...(config.normalize !== undefined ? { normalize: config.normalize } : {}) });
  const ledger = readableLedger(ledgerUrl(config, flags.ledger), config);
  const report = new ReportBuilder();
  const seen = new Set<string>();
  const verdicts: Record<string, number> = {};
  const out = process.stdout;
  const now = Date.now();
  const vendor = vendorOf(config.crm);
  const plan = bulkPlan(vendor.bulkJob === undefined ? undefined : adapter.bulkLane, flags.bulk ?? 'auto', flags.batchSize ?? 1, { nativeActivityUpsert: adapter.capabilities.nativeActivityUpsert });
  try {
    for await (const raw of readLines(input, { maxLineBytes: flags.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES })) {
      let line: Record<string, unknown>;
      if ('tooLong' in raw) {
        const reason = `line is ${raw.bytes} bytes, over the limit of ${raw.limit} bytes (--max-line-bytes); not parsed`;
        report.reject(raw.line, reason);
        line = { line: raw.line, would: 'reject', reason };
      } else if ('invalidUtf8' in raw) {
        report.reject(raw.line, raw.reason);
        line = { line: raw.line, would: 'reject', reason: raw.reason };
      } else if (raw.text.trim() === '') {
        continue;
      } else {
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw.text);
        } catch (err) {
          parsed = undefined;
          const reason = `invalid JSON: ${(err as Error).message}`;
          report.reject(raw.line, reason);
          out.write(`${JSON.stringify({ line: raw.line, would: 'reject', reason })}\n`);
          verdicts.reject = (verdicts.reject ?? 0) + 1;
          continue;
        }
        const p = engine.prepare(parsed);
        if (!p.ok) {
          const reason = plainMessage(p.error.message);
          report.reject(raw.line, reason, p.key);
          line = { line: raw.line, key: p.key, would: 'reject', reason };
        } else {
          const keyless = p.action.eventId === undefined;
          // A repeat of a key earlier in this file is a replay (or suppression) in a real run too.
          const verdict = seen.has(p.key) ? (keyless ? 'suppress' : 'replay') : verdictOf(ledger ? await ledger.get(p.key) : null, keyless, p.action, p.fingerprint, now);
          seen.add(p.key);
          const writes = verdict === 'upsert' || verdict === 'create' || verdict === 'retry';
          if (writes) plan.write(p.action, p.key);
          line = { line: raw.line, key: p.key, would: verdict, ...(writes ? previewRequest(config, p.action, p.key) : {}) };
        }
      }
      verdicts[line.would as string] = (verdicts[line.would as string] ?? 0) + 1;
      out.write(`${JSON.stringify(line)}\n`);
    }
  } finally {
    await ledger?.close();
    await engine.close();
  }
  if (flags.report) await writeReport(flags.report, report.toJSON(0));
  const code = report.exitCode();
  const bulk = plan.finish();
  // The lines above preview each write as its batch request would carry it; these go in jobs instead.
  for (const [object, entry] of Object.entries(bulk)) process.stderr.write(`${object}: ${bulkJobText(entry, vendor.bulkJob!, flags.bulk === 'always' ? undefined : adapter.bulkLane!.minRecords)}\n`);
  createProgress({ tty: false }).finish({ command: 'sync', dryRun: true, input: file, would: verdicts, ...(Object.keys(bulk).length > 0 ? { bulkJobs: bulk } : {}), apiCalls: 0, ledgerWrites: 0, problems: report.failures, exitCode: code });
  return code;
}
