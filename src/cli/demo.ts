/**
 * `crm-upsert demo [--crm hubspot|salesforce]`: the main job on embedded defaults. Starts a fake
 * CRM on loopback, syncs examples/actions.jsonl through the same code path as `sync` (real
 * client, SQLite ledger in a fresh temp dir), runs the same file again, and shows that the
 * second pass made 0 API calls and the CRM holds no duplicates. Needs no environment variables.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from './config.js';
import { ExitCode } from './exit.js';
import { readLines } from './jsonl.js';
import { ReportBuilder } from './report.js';
import { openSync, runActions } from './sync.js';
import type { FakeCrmBase, FakeHubSpotRecord, FakeRecord } from '../../adapters/testing/index.js';

type Crm = 'hubspot' | 'salesforce';

interface FakeCrm {
  url: string;
  requests(): number;
  /** Records per CRM object, and how many of them duplicate another's external id / key. */
  inventory(): { records: Record<string, number>; duplicates: number };
  close(): Promise<void>;
}

/** The package root (holds package.json and examples/), from src/cli or dist/src/cli. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'crm-upsert-sync') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('crm-upsert demo: cannot find the package root (examples/)');
    dir = up;
  }
}

/** Extra copies beyond the first, per value of `keyOf`. */
function duplicatesBy<T>(items: T[], keyOf: (item: T) => unknown): number {
  const seen = new Map<string, number>();
  for (const item of items) {
    const k = keyOf(item);
    if (typeof k !== 'string' || k === '') continue;
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  let n = 0;
  for (const c of seen.values()) n += c - 1;
  return n;
}

/** Each configured CRM object type once: how to list its records and read the id that must be unique. */
interface Table {
  type: string;
  rows(): unknown[];
  idOf(row: unknown): unknown;
}

async function startFake(crm: Crm, config: Config): Promise<FakeCrm> {
  const testing = await import('../../adapters/testing/index.js');
  const tables = new Map<string, Table>();
  let fake: FakeCrmBase;
  if (crm === 'hubspot') {
    const hubspot = testing.fakeHubSpot();
    fake = hubspot;
    for (const spec of Object.values(config.hubspot!.objects)) {
      const prop = spec.kind === 'record' ? spec.idProperty : spec.keyProperty;
      if (!tables.has(spec.objectType)) tables.set(spec.objectType, { type: spec.objectType, rows: () => hubspot.records(spec.objectType), idOf: (r) => (r as FakeHubSpotRecord).properties[prop] });
    }
  } else {
    const salesforce = testing.fakeSalesforce();
    fake = salesforce;
    for (const spec of Object.values(config.salesforce!.objects)) {
      if (!tables.has(spec.sobject)) tables.set(spec.sobject, { type: spec.sobject, rows: () => salesforce.records(spec.sobject), idOf: (r) => (r as FakeRecord)[spec.externalIdField] });
    }
  }
  const server = await fake.open('loopback');
  return {
    url: server.url,
    requests: () => fake.count(),
    inventory() {
      const records: Record<string, number> = {};
      let duplicates = 0;
      for (const table of tables.values()) {
        const rows = table.rows();
        records[table.type] = rows.length;
        duplicates += duplicatesBy(rows, table.idOf);
      }
      return { records, duplicates };
    },
    close: () => server.close(),
  };
}

const COLUMNS = ['pass', 'actions', 'created', 'updated', 'unchanged', 'replayed', 'suppressed', 'rejected', 'failed', 'API calls', 'duplicates'] as const;

function table(rows: Record<(typeof COLUMNS)[number], string | number>[]): string {
  const widths = COLUMNS.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line([...COLUMNS]), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(COLUMNS.map((c) => String(r[c]))))].join('\n');
}

export async function demoCommand(options: { crm?: Crm } = {}): Promise<number> {
  const crm = options.crm ?? 'hubspot';
  const root = packageRoot();
  const configPath = join(root, 'examples', crm === 'hubspot' ? 'crm-upsert.config.json' : 'crm-upsert.salesforce.config.json');
  const actionsPath = join(root, 'examples', crm === 'hubspot' ? 'actions.jsonl' : 'actions.salesforce.jsonl');
  const base = await loadConfig(configPath);
  const dir = await mkdtemp(join(tmpdir(), 'crm-upsert-demo-'));
  const fake = await startFake(crm, base);
  const out = process.stdout;
  try {
    const ledger = `sqlite:${join(dir, 'ledger.db')}`;
    const config: Config = crm === 'hubspot'
      ? { ...base, ledger, hubspot: { ...base.hubspot!, basePath: fake.url } }
      : { ...base, ledger, salesforce: { ...base.salesforce!, instanceUrl: fake.url } };
    // The fake accepts any token; a throwaway one keeps the demo free of real credentials.
    const token = `demo-${randomUUID()}`;
    const env: NodeJS.ProcessEnv = { ...process.env, HUBSPOT_ACCESS_TOKEN: token, SF_ACCESS_TOKEN: token, SF_INSTANCE_URL: fake.url };

    out.write(`crm-upsert demo: fake ${crm === 'hubspot' ? 'HubSpot' : 'Salesforce'} at ${fake.url}, ledger ${ledger}\n`);
    out.write(`syncing ${actionsPath} twice (the second pass is a re-run of the same job)\n\n`);
    const rows: Record<(typeof COLUMNS)[number], string | number>[] = [];
    let secondPassCalls = -1;
    let duplicates = 0;
    for (const pass of [1, 2]) {
      // A fresh engine per pass, as a scheduler would start a fresh process.
      const { sync } = await openSync(config, {}, env);
      const before = fake.requests();
      const report = new ReportBuilder();
      try {
        await runActions({ sync, lines: readLines(createReadStream(actionsPath)), report });
      } finally {
        await sync.close();
      }
      const calls = fake.requests() - before;
      const inv = fake.inventory();
      duplicates = inv.duplicates;
      if (pass === 2) secondPassCalls = calls;
      const c = report.counts;
      rows.push({
        pass, actions: report.actions, created: c.created ?? 0, updated: c.updated ?? 0, unchanged: c.unchanged ?? 0, replayed: c.replayed ?? 0,
        suppressed: c.suppressed ?? 0, rejected: c.rejected ?? 0, failed: c.failed ?? 0, 'API calls': calls, duplicates: inv.duplicates,
      });
      if (pass === 1) {
        for (const p of report.problems) out.write(`  line ${p.line} ${p.status}: ${p.reason}\n`);
      }
    }
    out.write(`\n${table(rows)}\n\n`);
    const inv = fake.inventory();
    out.write(`records in the CRM: ${Object.entries(inv.records).map(([k, v]) => `${k} ${v}`).join(', ')}; duplicate records: ${inv.duplicates}\n`);
    const ok = secondPassCalls === 0 && duplicates === 0;
    out.write(ok
      ? 'the second pass made 0 API calls and the CRM holds 0 duplicates: running the job again changed nothing and cost nothing.\n'
      : `the second pass made ${secondPassCalls} API calls and the CRM holds ${duplicates} duplicates: something is wrong.\n`);
    return ok ? ExitCode.ok : ExitCode.problems;
  } finally {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  }
}
