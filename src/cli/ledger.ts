/**
 * `crm-upsert ledger show KEY | list [--status S] [--limit N] | jobs | prune --older-than 30d | migrate`.
 * The ledger URL comes from --ledger, else the config file, else the default SQLite path.
 */
import { decodeActionFailure } from '../engine/index.js';
import { existsSync } from 'node:fs';
import type { EntryStatus, LedgerBackend, LedgerEntry } from '../ledger/types.js';
import { holderKey, type JobHolder } from './job-lock.js';
import { DEFAULT_CONFIG_PATH, ledgerUrl, loadConfig, openLedgerOrExit } from './config.js';
import { ExitCode, UsageError } from './exit.js';

export interface LedgerFlags {
  config?: string;
  ledger?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `15m`, `45s`, `2w`, `500ms` -> milliseconds; throws UsageError otherwise. */
export function parseDuration(text: string, flag = '--older-than'): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(text.trim());
  if (!m) throw new UsageError(`${flag} must be a duration like 30d, 12h, 15m or 45s, got "${text}"`);
  return Math.round(Number(m[1]) * UNITS[m[2]!]!);
}

/** The ledger for ledger subcommands: --ledger, or the config's (the config file is optional here). */
async function open(flags: LedgerFlags): Promise<LedgerBackend> {
  if (flags.ledger) return openLedgerOrExit(flags.ledger);
  const path = flags.config ?? DEFAULT_CONFIG_PATH;
  const config = existsSync(path) || flags.config !== DEFAULT_CONFIG_PATH ? await loadConfig(path) : undefined;
  return openLedgerOrExit(ledgerUrl(config, undefined));
}

async function withLedger(flags: LedgerFlags, fn: (ledger: LedgerBackend) => Promise<number>): Promise<number> {
  const ledger = await open(flags);
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function ledgerShowCommand(key: string, flags: LedgerFlags): Promise<number> {
  return withLedger(flags, async (ledger) => {
    const entry = await ledger.get(key);
    if (!entry) {
      process.stderr.write(`crm-upsert: no ledger entry for key ${key}\n`);
      return ExitCode.problems;
    }
    const view = { ...entry, leaseUntil: iso(entry.leaseUntil), createdAt: iso(entry.createdAt), updatedAt: iso(entry.updatedAt), expiresAt: iso(entry.expiresAt) };
    process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    return ExitCode.ok;
  });
}

/** Job locks (`sync --job`) and their holder records live under `job:`; `ledger jobs` lists them apart. */
const JOB_PREFIX = 'job:';
const isJobKey = (key: string) => key.startsWith(JOB_PREFIX);

/** Entries in key order after `after`, job locks left out, until `limit` are found or the ledger ends. */
async function listEntries(ledger: LedgerBackend, options: { status?: EntryStatus; limit: number; after?: string }): Promise<LedgerEntry[]> {
  const found: LedgerEntry[] = [];
  let after = options.after;
  for (;;) {
    const page = await ledger.list({ limit: options.limit, ...(options.status ? { status: options.status } : {}), ...(after !== undefined ? { after } : {}) });
    for (const e of page) if (!isJobKey(e.key) && found.length < options.limit) found.push(e);
    if (found.length >= options.limit || page.length < options.limit) return found;
    after = page[page.length - 1]!.key;
  }
}

export async function ledgerListCommand(flags: LedgerFlags & { status?: EntryStatus; limit?: number; after?: string }): Promise<number> {
  return withLedger(flags, async (ledger) => {
    const entries = await listEntries(ledger, { limit: flags.limit ?? 100, ...(flags.status ? { status: flags.status } : {}), ...(flags.after ? { after: flags.after } : {}) });
    for (const e of entries) {
      const error = decodeActionFailure(e.error)?.error.message;
      // Only a completed entry's result is one: an in-progress (or failed) entry's is its holder's note.
      const result = e.result === null ? {} : e.status === 'completed' ? { result: e.result } : { note: e.result };
      process.stdout.write(`${JSON.stringify({ key: e.key, status: e.status, attempts: e.attempts, updatedAt: iso(e.updatedAt), ...result, ...(error ? { error } : {}) })}\n`);
    }
    return ExitCode.ok;
  });
}

/** One line per `--job` name: `running` while a run holds its lock, else `free`, with the last holder. */
export async function ledgerJobsCommand(flags: LedgerFlags): Promise<number> {
  return withLedger(flags, async (ledger) => {
    const now = Date.now();
    const byKey = new Map<string, LedgerEntry>();
    for (let after = JOB_PREFIX.slice(0, -1); ;) {
      const page = await ledger.list({ limit: 500, after });
      const jobs = page.filter((e) => isJobKey(e.key));
      for (const e of jobs) byKey.set(e.key, e);
      if (page.length < 500 || jobs.length < page.length) break;
      after = page[page.length - 1]!.key;
    }
    for (const [key, lock] of byKey) {
      if (key.includes(':holder:')) continue;
      const job = key.slice(JOB_PREFIX.length);
      const running = lock.status === 'in_progress' && lock.leaseUntil !== null && lock.leaseUntil > now;
      const holder = byKey.get(holderKey(job, lock.token))?.result as JobHolder | undefined;
      process.stdout.write(`${JSON.stringify({
        job,
        state: running ? 'running' : 'free',
        ...(holder ? { [running ? 'holder' : 'lastHolder']: { host: holder.host, pid: holder.pid, startedAt: holder.startedAt } } : {}),
        ...(running ? { leaseUntil: iso(lock.leaseUntil) } : { releasedAt: iso(lock.updatedAt) }),
      })}\n`);
    }
    return ExitCode.ok;
  });
}

export async function ledgerPruneCommand(flags: LedgerFlags & { olderThan: string }): Promise<number> {
  const age = parseDuration(flags.olderThan);
  return withLedger(flags, async (ledger) => {
    const now = Date.now();
    const removed = await ledger.prune(now, now - age);
    process.stdout.write(`${JSON.stringify({ command: 'ledger prune', olderThan: flags.olderThan, removed })}\n`);
    return ExitCode.ok;
  });
}

/** Backends create or upgrade their tables when opened; the first read does it. */
export async function ledgerMigrateCommand(flags: LedgerFlags): Promise<number> {
  return withLedger(flags, async (ledger) => {
    await ledger.list({ limit: 1 });
    process.stdout.write(`${JSON.stringify({ command: 'ledger migrate', backend: ledger.name, status: 'up to date' })}\n`);
    return ExitCode.ok;
  });
}
