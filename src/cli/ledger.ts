/**
 * `crm-upsert ledger show KEY | list [--status S] [--limit N] | prune --older-than 30d | migrate`.
 * The ledger URL comes from --ledger, else the config file, else the default SQLite path.
 */
import { decodeActionFailure } from '../engine/index.js';
import { existsSync } from 'node:fs';
import type { EntryStatus, LedgerBackend } from '../ledger/types.js';
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

export async function ledgerListCommand(flags: LedgerFlags & { status?: EntryStatus; limit?: number; after?: string }): Promise<number> {
  return withLedger(flags, async (ledger) => {
    const entries = await ledger.list({ limit: flags.limit ?? 100, ...(flags.status ? { status: flags.status } : {}), ...(flags.after ? { after: flags.after } : {}) });
    for (const e of entries) {
      const error = decodeActionFailure(e.error)?.error.message;
      process.stdout.write(`${JSON.stringify({ key: e.key, status: e.status, attempts: e.attempts, updatedAt: iso(e.updatedAt), ...(e.result ? { result: e.result } : {}), ...(error ? { error } : {}) })}\n`);
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
