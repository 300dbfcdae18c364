/**
 * bench:queue — the scheduled sync on the queue against one process. One JSONL file (contact
 * upserts, then a note on each) is synced by `crm-upsert sync` alone (SQLite ledger) into one fake
 * HubSpot, and by `crm-upsert sync --queue --wait` with W `crm-upsert worker` processes (Redis
 * ledger and queue) into another. Prints both wall times, the CRM calls, whether the reports and
 * the CRMs' records are the same, whether every record was written before the first note, and
 * the CRM calls of a second enqueue of the same file (expected 0). Needs `npm run build` and Redis.
 *
 *   npm run bench:queue                       20,000 lines, 4 workers
 *   npm run bench:queue -- --lines=4000 --workers=2
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { fakeHubSpot, type FakeHubSpot } from '../adapters/testing/index.js';
import { dropQueue } from '../test/queue/helpers.js';
import { activityAction, contactAction, hubspotObjects, isMain, main, numberArg, seconds, tempDir, TOKEN } from './lib.js';

const BIN = resolve(import.meta.dirname, '..', 'dist', 'src', 'cli', 'bin.js');
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Report { counts: Record<string, number>; apiCalls: number; problems: unknown[] }

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

function worker(config: string, env: Record<string, string>): Promise<ChildProcess> {
  return new Promise((ready, fail) => {
    const child = spawn(process.execPath, [BIN, 'worker', '--config', config], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d: Buffer) => d.toString().includes('"status":"ready"') && ready(child));
    child.on('error', fail);
  });
}

function config(dir: string, basePath: string, extra: Record<string, unknown>): string {
  const path = join(dir, `config-${Object.keys(extra).join('-') || 'local'}.json`);
  writeFileSync(path, JSON.stringify({ crm: 'hubspot', ledger: `sqlite:${join(dir, 'ledger.db')}`, hubspot: { basePath, objects: hubspotObjects, rateLimit: { points: 1_000_000, durationMs: 1_000 } }, ...extra }));
  return path;
}

const records = (fake: FakeHubSpot) => ({
  contacts: new Map(fake.records('contacts').map((c) => [c.properties.ai_external_id, c.properties.email])),
  notes: fake.records('notes').map((n) => `${n.properties.crm_upsert_key} ${n.properties.hs_note_body}`).sort(),
});

const drop = (name: string, prefix: string, ledgerPrefix: string): Promise<void> =>
  dropQueue(REDIS, new Queue(name, { connection: { url: REDIS }, prefix }), [`${ledgerPrefix}*`, `${prefix}:*`]);

export async function runQueueBench(lines: number, workers: number): Promise<Record<string, unknown>> {
  const dir = tempDir('crm-upsert-bench-queue-');
  const id = `bench${Date.now().toString(36)}`;
  const [local, queued] = [fakeHubSpot(), fakeHubSpot()];
  const [localServer, queuedServer] = await Promise.all([local.listen(), queued.listen()]);
  const pool: ChildProcess[] = [];
  const env = { HUBSPOT_ACCESS_TOKEN: TOKEN };
  try {
    const file = join(dir.path, 'actions.jsonl');
    const pairs = Math.floor(lines / 2);
    writeFileSync(file, [...Array.from({ length: pairs }, (_, i) => contactAction('hubspot', i)), ...Array.from({ length: pairs }, (_, i) => activityAction('hubspot', i))].map((a) => JSON.stringify(a)).join('\n') + '\n');

    const localReport = join(dir.path, 'local.json');
    let t = Date.now();
    await cli(['sync', file, '--config', config(dir.path, localServer.basePath, {}), '--report', localReport], env);
    const localMs = Date.now() - t;

    const ledger = new URL(REDIS);
    ledger.searchParams.set('keyPrefix', `${id}:`);
    const queueConfig = config(dir.path, queuedServer.basePath, { ledger: ledger.toString(), queue: { url: REDIS, name: id, prefix: `b${id}`, concurrency: 2 } });
    t = Date.now();
    pool.push(...(await Promise.all(Array.from({ length: workers }, () => worker(queueConfig, env)))));
    const startMs = Date.now() - t;
    const queuedReport = join(dir.path, 'queued.json');
    t = Date.now();
    const run = await cli(['sync', file, '--config', queueConfig, '--queue', REDIS, '--wait', '--report', queuedReport], env);
    const queuedMs = Date.now() - t;
    if (run.code !== 0) throw new Error(`sync --queue exited ${run.code}: ${run.stderr}`);

    const log = queued.core.log;
    const calls = queued.count();
    t = Date.now();
    const again = await cli(['sync', file, '--config', queueConfig, '--queue', REDIS, '--wait', '--report', join(dir.path, 'again.json')], env);
    const a = JSON.parse(readFileSync(localReport, 'utf8')) as Report;
    const b = JSON.parse(readFileSync(queuedReport, 'utf8')) as Report;
    const [ra, rb] = [records(local), records(queued)];
    return {
      bench: 'queue', lines: 2 * pairs, workers,
      local: { wallS: seconds(localMs), apiCalls: a.apiCalls, counts: a.counts },
      queued: { wallS: seconds(queuedMs), workersStartS: seconds(startMs), apiCalls: b.apiCalls, fakeRequests: calls, counts: b.counts },
      sameReport: JSON.stringify(a.counts) === JSON.stringify(b.counts) && JSON.stringify(a.problems) === JSON.stringify(b.problems),
      sameRecords: JSON.stringify([...ra.contacts].sort()) === JSON.stringify([...rb.contacts].sort()) && JSON.stringify(ra.notes) === JSON.stringify(rb.notes),
      recordsBeforeActivities: log.findIndex((e) => e.endpoint.includes('/notes/batch/create')) > log.findLastIndex((e) => e.endpoint.includes('/contacts/batch/upsert')),
      secondEnqueue: { wallS: seconds(Date.now() - t), exitCode: again.code, crmCalls: queued.count() - calls },
    };
  } finally {
    for (const w of pool) w.kill('SIGTERM');
    await Promise.all(pool.map((w) => new Promise((r) => (w.exitCode !== null ? r(undefined) : w.on('close', r)))));
    await drop(id, `b${id}`, `${id}:`);
    await Promise.all([localServer.close(), queuedServer.close()]);
    dir.remove();
  }
}

if (isMain(import.meta.url)) await main(() => runQueueBench(numberArg('lines', 20_000), numberArg('workers', 4)));
