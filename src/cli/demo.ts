/**
 * `crm-upsert demo [--crm C]`: the main job on embedded defaults. Starts the CRM's fake on loopback, syncs examples/actions.jsonl through the same code path as `sync` (real
 * client, SQLite ledger in a fresh temp dir), runs the same file again, and shows that the
 * second pass made 0 API calls and the CRM holds no duplicates. Needs no environment variables.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, sectionOf, type Config } from './config.js';
import { ExitCode } from './exit.js';
import { readLines } from './jsonl.js';
import { problemLine, ReportBuilder } from './report.js';
import { openSync, runActions } from './sync.js';
import { VENDOR_NAMES, vendorOf } from './vendors.js';

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

const COLUMNS = ['pass', 'actions', 'created', 'updated', 'unchanged', 'replayed', 'suppressed', 'rejected', 'failed', 'API calls', 'duplicates'] as const;

function table(rows: Record<(typeof COLUMNS)[number], string | number>[]): string {
  const widths = COLUMNS.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line([...COLUMNS]), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(COLUMNS.map((c) => String(r[c]))))].join('\n');
}

export async function demoCommand(options: { crm?: string } = {}): Promise<number> {
  const crm = options.crm ?? VENDOR_NAMES[0];
  const vendor = vendorOf(crm);
  const root = packageRoot();
  const configPath = join(root, 'examples', vendor.demo.config);
  const actionsPath = join(root, 'examples', vendor.demo.actions);
  const base = await loadConfig(configPath);
  const dir = await mkdtemp(join(tmpdir(), 'crm-upsert-demo-'));
  const fake = await vendor.demo.start(sectionOf(base));
  const out = process.stdout;
  try {
    const ledger = `sqlite:${join(dir, 'ledger.db')}`;
    const config: Config = { ...base, ledger, [base.crm]: vendor.demo.at(sectionOf(base), fake.url) };
    // The fake accepts any token; a throwaway one keeps the demo free of real credentials.
    const token = `demo-${randomUUID()}`;
    const env: NodeJS.ProcessEnv = { ...process.env, ...vendor.demo.env(fake.url, token) };

    out.write(`crm-upsert demo: fake ${vendor.label} at ${fake.url}, ledger ${ledger}\n`);
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
        for (const p of report.sortedProblems()) out.write(`  ${problemLine(p)}\n`);
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
