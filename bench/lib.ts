/**
 * Shared wiring for the benchmarks: object configs for both fakes, action generators, a small
 * pool, duplicate counting and the one-JSON-line output. Loopback only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HubSpotAdapterOptions } from '../adapters/hubspot/index.js';
import type { SalesforceAdapterOptions } from '../adapters/salesforce/salesforce-options.js';
import type { OpenLedgerOptions } from '../src/ledger/index.js';
import type { LedgerBackend } from '../src/ledger/types.js';

// jsforce reads proxy variables at import and ignores NO_PROXY: benches talk to loopback only.
for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) delete process.env[name];

export const TOKEN = 'pat-na1-bench-token';

export const hubspotObjects: HubSpotAdapterOptions['objects'] = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname', 'lifecyclestage'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
};

export const salesforceObjects: SalesforceAdapterOptions['objects'] = {
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'] },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description'], parents: { contact: 'WhoId' } },
};

export type Crm = 'hubspot' | 'salesforce';

/** Contact i: one upsert keyed by its event id. */
export function contactAction(crm: Crm, i: number, run = 'r1'): Record<string, unknown> {
  const fields = crm === 'hubspot'
    ? { email: `c${i}@bench.example`, firstname: `First${i}`, lastname: `Last${i}` }
    : { Email: `c${i}@bench.example`, FirstName: `First${i}`, LastName: `Last${i}` };
  return { source: 'bench', eventId: `${run}-contact-${i}`, op: 'upsert', object: 'contact', externalId: `c-${i}`, fields };
}

/** Activity i on contact i (a HubSpot note or a Salesforce task). */
export function activityAction(crm: Crm, i: number, run = 'r1', contact = i): Record<string, unknown> {
  return crm === 'hubspot'
    ? { source: 'bench', eventId: `${run}-note-${i}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `c-${contact}` }, fields: { hs_note_body: `note ${i} for contact ${contact}`, hs_timestamp: '2026-11-29T10:00:00Z' } }
    : { source: 'bench', eventId: `${run}-task-${i}`, op: 'create', object: 'task', target: { object: 'contact', externalId: `c-${contact}` }, fields: { Subject: `task ${i} for contact ${contact}`, Description: 'follow up' } };
}

/** Run `tasks` with at most `concurrency` in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
}

/** How many extra copies exist when records are grouped by `keyOf` (0 = no duplicates). */
export function duplicates<T>(records: readonly T[], keyOf: (r: T) => string | undefined): number {
  const seen = new Map<string, number>();
  for (const r of records) {
    const k = keyOf(r);
    if (k === undefined || k === '') continue;
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  let extra = 0;
  for (const n of seen.values()) extra += n - 1;
  return extra;
}

/** Ledger options that keep one run's data under `prefix`: Postgres table names, Redis keys (one Cluster slot). */
export function chaosLedgerOptions(prefix: string): OpenLedgerOptions {
  return { tablePrefix: prefix, keyPrefix: `{${prefix}}:` };
}

/**
 * Counts round trips per ledger method (each contract method is one round trip per call) and the
 * wall time spent waiting on them (`ms`, per method), or with `timeUntilReturn` the time until
 * each call returns (for a synchronous driver, the ledger's own cost, whatever else runs).
 */
export function countingLedger(inner: LedgerBackend, o: { timeUntilReturn?: boolean } = {}): { ledger: LedgerBackend; calls: Record<string, number>; ms: Record<string, number>; reset(): void } {
  const calls: Record<string, number> = {};
  const ms: Record<string, number> = {};
  const ledger = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const name = String(prop);
        calls[name] = (calls[name] ?? 0) + 1;
        const started = performance.now();
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        const stop = () => void (ms[name] = (ms[name] ?? 0) + performance.now() - started);
        // A synchronous driver (better-sqlite3) has done all its work when the call returns.
        if (out instanceof Promise && !o.timeUntilReturn) void out.then(stop, stop);
        else stop();
        return out;
      };
    },
  });
  return { ledger, calls, ms, reset: () => [calls, ms].forEach((o) => Object.keys(o).forEach((k) => delete o[k])) };
}

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `crm-upsert-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const round = (x: number, digits = 3): number => Number(x.toFixed(digits));
/** The middle of the passes (the upper of the two middle ones for an even count): a pass that ran. */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const seconds = (ms: number): number => round(ms / 1000, 2);

/** Numeric flag `--name=value` or env BENCH_NAME, else `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  const raw = flag?.slice(name.length + 3) ?? process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** True when `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;
}

/** Print the figures as one JSON line and exit (benches must stop by themselves). */
export function report(figures: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...figures, node: process.version, at: new Date().toISOString() })}\n`);
}

export async function main(run: () => Promise<Record<string, unknown>>): Promise<void> {
  try {
    report(await run());
    process.exit(0);
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}
