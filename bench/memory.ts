/**
 * bench:memory — `crm-upsert sync` of a large JSONL file (generated into a tmp dir) against
 * fakeHubSpot on loopback, from the built CLI (`node dist/src/cli/bin.js`). Polls the CLI's
 * /proc/PID/status every 100 ms and reports its peak RSS (VmHWM) when 100k, 300k and all lines
 * have been written (lines written = contact upsert calls x 100), to show memory is flat.
 *
 * The lines are contact upserts with distinct event ids over `distinct` contacts in rotation
 * (500 by default, so every 500-line chunk has distinct ids and nothing is coalesced), which keeps
 * the fake in this process small; only the CLI's RSS is measured.
 *
 *   npm run bench:memory                 1,000,000 lines (builds dist first)
 *   npm run bench:memory -- --lines=200000
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeHubSpot } from '../adapters/testing/index.js';
import { hubspotObjects, isMain, main, numberArg, round, seconds, tempDir, TOKEN } from './lib.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const BIN = join(ROOT, 'dist', 'src', 'cli', 'bin.js');

export interface MemoryOptions {
  lines: number;
  distinct: number;
  checkpoints: number[];
  concurrency: number;
}

async function writeLines(path: string, lines: number, distinct: number): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  for (let i = 0; i < lines; i++) {
    const line = `${JSON.stringify({ source: 'bench', eventId: `mem-${i}`, op: 'upsert', object: 'contact', externalId: `c-${i % distinct}`, fields: { email: `c${i % distinct}@bench.example`, firstname: `First ${i}` } })}\n`;
    bytes += line.length;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

function status(pid: number): { hwmKb: number; rssKb: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { hwmKb: kb('VmHWM'), rssKb: kb('VmRSS') };
  } catch {
    return undefined;
  }
}

export async function runMemoryBench(o: MemoryOptions): Promise<Record<string, unknown>> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  const dir = tempDir('memory');
  const fake = fakeHubSpot({ token: TOKEN });
  const server = await fake.listen();
  try {
    const file = join(dir.path, 'actions.jsonl');
    const t0 = performance.now();
    const bytes = await writeLines(file, o.lines, o.distinct);
    const generateSeconds = seconds(performance.now() - t0);
    const config = join(dir.path, 'crm-upsert.config.json');
    writeFileSync(config, JSON.stringify({
      crm: 'hubspot',
      ledger: `sqlite:${join(dir.path, 'ledger.db')}`,
      hubspot: { basePath: server.basePath, objects: hubspotObjects, rateLimit: { points: 1_000_000, durationMs: 1_000 } },
    }));
    const report = join(dir.path, 'report.json');
    const env: NodeJS.ProcessEnv = { ...process.env, HUBSPOT_ACCESS_TOKEN: TOKEN };
    delete env.NODE_OPTIONS;
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, 'sync', file, '--config', config, '--report', report, '--concurrency', String(o.concurrency)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString('utf8')).slice(-8_000)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-8_000)));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

    const samples: { lines: number; peakRssMb: number; rssMb: number; seconds: number }[] = [];
    const pending = [...o.checkpoints].filter((c) => c < o.lines).sort((a, b) => a - b);
    let last: { hwmKb: number; rssKb: number } | undefined;
    let done = false;
    void exited.then(() => (done = true));
    while (!done) {
      const s = status(child.pid!);
      if (s && Number.isFinite(s.hwmKb)) last = s; // a zombie (exited, not yet reaped) has no Vm lines
      const written = fake.count('contacts/batch/upsert') * 100;
      while (pending.length > 0 && written >= pending[0]! && last) {
        samples.push({ lines: pending.shift()!, peakRssMb: round(last.hwmKb / 1024, 1), rssMb: round(last.rssKb / 1024, 1), seconds: seconds(performance.now() - started) });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const [code, signal] = await exited;
    const wall = performance.now() - started;
    if (last) samples.push({ lines: o.lines, peakRssMb: round(last.hwmKb / 1024, 1), rssMb: round(last.rssKb / 1024, 1), seconds: seconds(wall) });
    if (code !== 0) throw new Error(`crm-upsert sync exited ${code ?? signal}: ${stderr || stdout}`);
    const summary = JSON.parse(readFileSync(report, 'utf8')) as { counts: Record<string, number>; apiCalls: number };
    return {
      bench: 'memory',
      lines: o.lines,
      fileMb: round(bytes / 1024 / 1024, 1),
      distinctContacts: o.distinct,
      generateSeconds,
      wallSeconds: seconds(wall),
      linesPerSecond: Math.round(o.lines / (wall / 1000)),
      exitCode: code,
      counts: summary.counts,
      apiCalls: summary.apiCalls,
      peakRssMbAt: samples,
      peakRssMb: samples.length > 0 ? samples[samples.length - 1]!.peakRssMb : null,
    };
  } finally {
    await server.close();
    dir.remove();
  }
}

if (isMain(import.meta.url)) {
  const lines = numberArg('lines', 1_000_000);
  await main(() => runMemoryBench({ lines, distinct: numberArg('distinct', 500), checkpoints: [100_000, 300_000], concurrency: numberArg('concurrency', 2) }));
}
