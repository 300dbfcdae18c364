/**
 * The run report (`--report PATH`, DESIGN.md): counts per outcome status, how many of the created
 * records had been written before and deleted in the CRM since (re-created), CRM API calls, and one
 * problem per line that did not end completed/replayed/unchanged/superseded/suppressed, with its reason.
 */
import { writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Outcome } from '../engine/index.js';
import { plainMessage, redact } from '../errors.js';
import { ExitCode } from './exit.js';
import { ensureDir } from './preflight.js';

export interface Problem {
  /** 1-based line of the input file (0 when the action did not come from a line, e.g. retry-failed). */
  line: number;
  /** The action's idempotency key ('' when the line could not be parsed or keyed). */
  key: string;
  /** `rejected` (bad input, nothing written), `failed` (the CRM refused or kept failing), `in_flight` (another run holds the key). */
  status: 'rejected' | 'failed' | 'in_flight';
  reason: string;
}

export interface Report {
  counts: Record<string, number>;
  /** Of the `created`, records this ledger had written before under another CRM id (deleted in the CRM since); absent when none. */
  recreated?: number;
  apiCalls: number;
  problems: Problem[];
  /** Problems beyond the in-memory cap (counted, not listed). */
  problemsOmitted?: number;
  /** Set when the run stopped before the end of its input. */
  stopped?: StopInfo;
}

export interface StopInfo {
  /** `auth` (the CRM refused the token), `infrastructure` (ledger or CRM unreachable), a signal, or `lock-lost`. */
  reason: string;
  message?: string;
  /**
   * Lines of the chunk in flight whose outcome this run never learned. Their ledger entries stay
   * in progress (or untouched) and nothing of them was recorded as done: the next run settles them.
   */
  unsettledLines?: { first: number; last: number; count: number };
}

/** Problems kept in memory; a file with millions of bad lines still runs in bounded memory. */
export const MAX_PROBLEMS = 100_000;

const PROBLEM_STATUSES = ['rejected', 'failed', 'in_flight'];

const reasonOf = (message: string | undefined, fallback: string) => plainMessage(message ?? fallback);

export class ReportBuilder {
  readonly counts: Record<string, number> = {};
  readonly problems: Problem[] = [];
  private omitted = 0;
  actions = 0;
  /** `created` outcomes that re-created a record deleted in the CRM (`recreated` set). */
  recreated = 0;

  private count(status: string): void {
    this.counts[status] = (this.counts[status] ?? 0) + 1;
  }

  /** A line rejected before reaching the engine (unparsable JSON, oversized line). */
  reject(line: number, reason: string, key = ''): void {
    this.actions += 1;
    this.count('rejected');
    this.problem({ line, key, status: 'rejected', reason: redact(reason) });
  }

  outcome(line: number, outcome: Outcome): void {
    this.actions += 1;
    this.count(outcome.status);
    if (outcome.recreated) this.recreated += 1;
    if (!PROBLEM_STATUSES.includes(outcome.status)) return;
    const fallback = outcome.status === 'in_flight'
      ? 'another run holds this key (in progress); it is retried once that claim\'s lease expires'
      : outcome.status;
    this.problem({ line, key: outcome.key, status: outcome.status as Problem['status'], reason: reasonOf(outcome.error?.message, fallback) });
  }

  private problem(p: Problem): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(p);
    else this.omitted += 1;
  }

  get failures(): number {
    return (this.counts.rejected ?? 0) + (this.counts.failed ?? 0) + (this.counts.in_flight ?? 0);
  }

  exitCode(): number {
    return this.failures > 0 ? ExitCode.problems : ExitCode.ok;
  }

  /** The problems in line order. */
  sortedProblems(): Problem[] {
    // Lines rejected while reading are recorded before the engine's outcomes of earlier lines.
    return [...this.problems].sort((a, b) => a.line - b.line);
  }

  /** `{ recreated: n }` for a summary or report, nothing when no record was re-created. */
  recreatedCount(): { recreated?: number } {
    return this.recreated > 0 ? { recreated: this.recreated } : {};
  }

  toJSON(apiCalls: number, stopped?: StopInfo): Report {
    return { counts: { ...this.counts }, ...this.recreatedCount(), apiCalls, problems: this.sortedProblems(), ...(this.omitted > 0 ? { problemsOmitted: this.omitted } : {}), ...(stopped ? { stopped } : {}) };
  }
}

/** Longest reason a line for people shows; the report keeps it whole. */
const MAX_SHOWN_REASON = 500;

/** `line 12 rejected: fields.firstname: must be a string, number, boolean, null or (for a multi-select field) a list of strings`, on one line of printable text. */
export function problemLine(p: Problem): string {
  // Reasons quote the input (a field name): no newline or terminal escape from it reaches a log line.
  const reason = [...redact(p.reason)].map((ch) => (ch < ' ' || ch === '\u007f' ? '?' : ch)).join('');
  const shown = reason.length > MAX_SHOWN_REASON ? `${reason.slice(0, MAX_SHOWN_REASON)}… (${reason.length} characters)` : reason;
  return `line ${p.line} ${p.status}: ${shown}`;
}

/** How many problems a run off a terminal lists on stderr. */
export const LISTED_PROBLEMS = 10;

/**
 * What went wrong in a run, for stderr off a terminal (where stdout has only the summary line):
 * how many problems of each status, the first `limit` by line, and where the rest are (the report
 * when there is one, else how to get one). No lines when every line ended well.
 */
export function problemDigest(report: ReportBuilder, reportPath?: string, limit = LISTED_PROBLEMS): string[] {
  const total = report.failures;
  if (total === 0) return [];
  const byStatus = PROBLEM_STATUSES.filter((s) => (report.counts[s] ?? 0) > 0).map((s) => `${report.counts[s]} ${s}`).join(', ');
  const listed = report.sortedProblems().slice(0, limit);
  const lines = [`crm-upsert: ${total} ${total === 1 ? 'problem' : 'problems'} (${byStatus})${total > listed.length ? `; the first ${listed.length}` : ''}:`];
  lines.push(...listed.map((p) => `  ${problemLine(p)}`));
  const rest = total - listed.length;
  if (rest > 0) lines.push(reportPath ? `  and ${rest} more in ${reportPath}` : `  and ${rest} more: add --report FILE to list every problem`);
  return lines;
}

export async function writeReport(path: string, report: Report): Promise<void> {
  ensureDir(dirname(path), `--report ${path}`);
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
}
