/**
 * Helpers for the CLI tests: build dist once when it is stale, spawn the real bin, write
 * temp configs pointing at a fake on loopback.
 */
import { fakeHubSpot, fakeSalesforce, type FakeHubSpot } from '../../adapters/testing/index.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'dist', 'src', 'cli', 'bin.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** Build dist when bin.js is missing or older than the sources; one builder at a time across test files. */
export function ensureBuilt(): void {
  const stale = () => !existsSync(BIN) || statSync(BIN).mtimeMs < Math.max(...['src', 'adapters', 'schemas'].map((d) => newestSource(join(ROOT, d))));
  if (!stale()) return;
  const lock = join(tmpdir(), `crm-upsert-build-${Buffer.from(ROOT).toString('hex').slice(-24)}.lock`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (!stale()) return;
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
    } catch {
      // Type errors elsewhere in the tree still emit JavaScript; the bin must exist.
    }
    if (!existsSync(BIN)) throw new Error(`build did not produce ${BIN}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The environment for a spawned CLI: no proxies, no CRM credentials unless given. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'HUBSPOT_ACCESS_TOKEN', 'SF_ACCESS_TOKEN', 'SF_INSTANCE_URL', 'NODE_OPTIONS']) delete env[k];
  return { ...env, ...extra };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnedCli {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/** Spawn `node dist/src/cli/bin.js ...args` (async: the fake lives in this process's event loop). */
export function spawnCli(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): SpawnedCli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: cliEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  if (options.input !== undefined) child.stdin!.end(options.input);
  else child.stdin!.end();
  const done = new Promise<CliResult>((resolveDone, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolveDone({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return spawnCli(args, options).done;
}

export function tempDir(prefix = 'crm-upsert-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export const HUBSPOT_OBJECTS = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname', 'lifecyclestage'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
};

/** A HubSpot config in `dir` pointing at `basePath`, with a SQLite ledger in `dir`. Returns its path. */
export function writeHubSpotConfig(dir: string, basePath: string, extra: Record<string, unknown> = {}, hubspotExtra: Record<string, unknown> = {}): string {
  const path = join(dir, 'crm-upsert.config.json');
  const config = {
    crm: 'hubspot',
    ledger: `sqlite:${join(dir, 'ledger.db')}`,
    dedupeWindowMs: 600_000,
    hubspot: { basePath, objects: HUBSPOT_OBJECTS, rateLimit: { points: 1_000_000, durationMs: 1_000 }, ...hubspotExtra },
    ...extra,
  };
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

export const contactLine = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ source: 'test', eventId: `c-evt-${i}`, op: 'upsert', object: 'contact', externalId: `c-${i}`, fields: { email: `user${i}@example.com`, firstname: `User${i}` }, ...extra });

export const noteLine = (i: number, parent = `c-${i}`) =>
  JSON.stringify({ source: 'test', eventId: `n-evt-${i}`, op: 'create', object: 'note', target: { object: 'contact', externalId: parent }, fields: { hs_note_body: `Summary of call ${i}`, hs_timestamp: '2026-11-28T10:00:00Z' } });

/** Contact i then a note on it, for i in [0, pairs). */
export function pairsFile(path: string, pairs: number): void {
  const lines: string[] = [];
  for (let i = 0; i < pairs; i++) lines.push(contactLine(i), noteLine(i));
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** Extra copies beyond the first, per value. */
export function duplicates(values: (string | undefined)[]): number {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  let n = 0;
  for (const c of counts.values()) n += c - 1;
  return n;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitFor(predicate: () => boolean, timeoutMs = 30_000, stepMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('waitFor: timed out');
    await sleep(stepMs);
  }
}

/** A fake HubSpot on loopback for a CLI test file, with the bin built: `({ fake, server } = await startFakeHubSpot())` in beforeAll. */
export async function startFakeHubSpot(): Promise<{ fake: FakeHubSpot; server: { basePath: string; close(): Promise<void> } }> {
  ensureBuilt();
  const fake = fakeHubSpot();
  return { fake, server: await fake.listen() };
}

/**
 * Fakes on loopback for the check-setup tests, each closed by `stopAll` (call it after each test):
 * `hubspot()` a fake HubSpot taking `tokens.hubspot`, `salesforce(objects)` a fake Salesforce
 * taking `tokens.salesforce` and a config file pointing at it (`extra` merged into the config).
 */
export function setupFakes(tokens: { hubspot: string; salesforce: string }) {
  const stops: Array<() => Promise<void>> = [];
  return {
    async hubspot() {
      const fake = fakeHubSpot({ token: tokens.hubspot });
      const server = await fake.listen();
      stops.push(server.close);
      return { fake, basePath: server.basePath };
    },
    async salesforce(objects: Record<string, unknown>, extra: Record<string, unknown> = {}, dir = tempDir()) {
      const fake = fakeSalesforce({ accessToken: tokens.salesforce });
      const server = await fake.listen();
      stops.push(server.close);
      const path = join(dir, 'sf.config.json');
      writeFileSync(path, JSON.stringify({ crm: 'salesforce', ledger: `sqlite:${join(dir, 'ledger.db')}`, salesforce: { instanceUrl: server.instanceUrl, objects }, ...extra }));
      return { fake, path, dir };
    },
    async stopAll() {
      while (stops.length > 0) await stops.pop()!();
    },
  };
}
