/**
 * The package as a user gets it: `npm pack` (prepack builds a clean dist) from a copy of this
 * repository, then the tarball installed into scratch projects from the registry.
 *
 * (a) With @hubspot/api-client: the root, /hubspot and /testing import, and a contact and a
 *     note sync against fakeHubSpot() on loopback with a memory ledger; a second pass replays.
 * (b) Without any optional peer: the root and /testing import; /hubspot, /queue, /webhooks, /mcp,
 *     /ledger/postgres and /ledger/redis each throw the one message naming their package; the
 *     installed CLI prints the SDK's and exits 2.
 *
 * Installs use --ignore-scripts (nothing here needs SQLite, so better-sqlite3 is not compiled)
 * and --prefer-offline. Without the registry the file is skipped, except under CI=true, where
 * that is a failure.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const PROXY_VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy'];

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** node in a scratch project, talking to loopback only. */
function node(cwd: string, args: string[], extra: Record<string, string> = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of [...PROXY_VARS, 'NODE_OPTIONS']) delete env[k];
  return run(process.execPath, args, cwd, env);
}

const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];
const NETWORK = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT)\b|network request to .* failed/i;

/** Copy what `npm pack` reads (everything but dependencies, build output, tests and git). */
function copyPackageSources(to: string): void {
  const skip = new Set(['node_modules', 'dist', '.git', 'coverage', 'test', 'bench', '.crm-upsert']);
  cpSync(ROOT, to, { recursive: true, filter: (src) => !skip.has(relative(ROOT, src).split(sep)[0]!) });
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'), 'dir');
}

function scratchProject(dir: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '0.0.0', private: true, type: 'module' }, null, 2));
}

const HUBSPOT_OBJECTS = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
};

const ACTIONS = [
  { source: 'pack-test', eventId: 'evt-contact-1', op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { email: 'ana@example.com', firstname: 'Ana' } },
  { source: 'pack-test', eventId: 'evt-note-1', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { hs_note_body: 'Call summary', hs_timestamp: '2026-11-28T10:00:00Z' } },
];

const SYNC_SCRIPT = `
import { createSync, openLedger } from 'crm-upsert-sync';
import { hubspotAdapter } from 'crm-upsert-sync/hubspot';
import { fakeHubSpot } from 'crm-upsert-sync/testing';

const fake = fakeHubSpot();
const { url, close } = await fake.open('loopback');
const sync = createSync({
  adapter: hubspotAdapter({ accessToken: 'pack-test-token', basePath: url, objects: ${JSON.stringify(HUBSPOT_OBJECTS)} }),
  ledger: openLedger('memory:'),
  dedupeWindowMs: 600000,
});
const actions = ${JSON.stringify(ACTIONS)};
try {
  const first = await sync.applyMany(actions);
  const callsFirst = fake.count();
  const second = await sync.applyMany(actions);
  console.log(JSON.stringify({
    first: first.map((o) => o.status),
    second: second.map((o) => o.status),
    callsFirst,
    callsSecond: fake.count() - callsFirst,
    contacts: fake.records('contacts').map((r) => r.properties.ai_external_id),
    notes: fake.records('notes').map((r) => r.properties.hs_note_body),
  }));
} finally {
  await sync.close();
  await close();
}
`;

const IMPORT_SCRIPT = `
const out = {};
for (const entry of ['crm-upsert-sync', 'crm-upsert-sync/testing', 'crm-upsert-sync/hubspot', 'crm-upsert-sync/queue', 'crm-upsert-sync/webhooks', 'crm-upsert-sync/mcp', 'crm-upsert-sync/ledger/postgres', 'crm-upsert-sync/ledger/redis']) {
  try {
    out[entry] = { ok: Object.keys(await import(entry)).length > 0 };
  } catch (e) {
    out[entry] = { name: e.name, message: e.message };
  }
}
console.log(JSON.stringify(out));
`;

const MISSING = 'crm-upsert-sync/hubspot needs @hubspot/api-client (>=13.5.0 <15): npm install @hubspot/api-client@^13.5';

describe('the packed tarball installed into scratch projects', () => {
  let work = '';
  let tarball = '';
  let packed: string[] = [];
  let withSdk = '';
  let withoutSdk = '';
  let unreachable: string | undefined;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'crm-upsert-pack-'));
    const source = join(work, 'source');
    copyPackageSources(source);
    const pack = await run('npm', ['pack', '--json', '--pack-destination', work, '--loglevel=error'], source);
    if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as [{ filename: string; files: Array<{ path: string }> }];
    tarball = join(work, info.filename);
    packed = info.files.map((f) => f.path);

    withSdk = join(work, 'with-sdk');
    withoutSdk = join(work, 'without-sdk');
    scratchProject(withSdk, 'scratch-with-sdk');
    scratchProject(withoutSdk, 'scratch-without-sdk');
    const installs = await Promise.all([
      run('npm', ['install', tarball, '@hubspot/api-client@13.5.0', ...INSTALL_FLAGS], withSdk),
      run('npm', ['install', tarball, ...INSTALL_FLAGS], withoutSdk),
    ]);
    const failed = installs.find((r) => r.code !== 0);
    if (!failed) return;
    if (NETWORK.test(failed.stderr) && process.env.CI !== 'true') {
      unreachable = failed.stderr.split('\n').find((l) => NETWORK.test(l)) ?? 'registry unreachable';
      return;
    }
    throw new Error(`npm install failed${NETWORK.test(failed.stderr) ? ' (registry unreachable, and CI=true)' : ''}:\n${failed.stderr}`);
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('packs a standalone package: built output, LICENSE, no source maps, no tests', () => {
    expect(packed).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/src/index.js', 'dist/adapters/hubspot/index.js', 'dist/adapters/testing/index.js', 'examples/actions.jsonl']));
    expect(packed.filter((p) => p.endsWith('.map'))).toEqual([]);
    expect(packed.filter((p) => /^(src|adapters|schemas|test|bench)\//.test(p) || p === 'docs/architecture.md')).toEqual([]);
  });

  it('installs without running (or asking to approve) a script of its own', (ctx) => {
    if (unreachable) ctx.skip(`npm registry unreachable: ${unreachable}`);
    const installed = JSON.parse(readFileSync(join(withoutSdk, 'node_modules', 'crm-upsert-sync', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(Object.keys(installed.scripts).filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).toEqual([]);
    expect(installed.scripts.prepack).toBeDefined();
  });

  it('syncs a contact and a note against fakeHubSpot() with only the tarball and @hubspot/api-client installed', async (ctx) => {
    if (unreachable) ctx.skip(`npm registry unreachable: ${unreachable}`);
    writeFileSync(join(withSdk, 'sync.mjs'), SYNC_SCRIPT);
    const r = await node(withSdk, ['sync.mjs']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      first: ['created', 'created'],
      second: ['replayed', 'replayed'],
      callsFirst: expect.any(Number),
      callsSecond: 0,
      contacts: ['zd-1'],
      notes: ['Call summary'],
    });
  }, 60_000);

  it('without the optional peers: the root and /testing load, each other entry throws the one message naming its package, the CLI exits 2 with it', async (ctx) => {
    if (unreachable) ctx.skip(`npm registry unreachable: ${unreachable}`);
    writeFileSync(join(withoutSdk, 'imports.mjs'), IMPORT_SCRIPT);
    const r = await node(withoutSdk, ['imports.mjs']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      'crm-upsert-sync': { ok: true },
      'crm-upsert-sync/testing': { ok: true },
      'crm-upsert-sync/hubspot': { name: 'ConfigError', message: `[crm-upsert] ${MISSING}` },
      'crm-upsert-sync/queue': { name: 'ConfigError', message: '[crm-upsert] crm-upsert-sync/queue needs bullmq (^6.3.0): npm install bullmq@^6.3' },
      'crm-upsert-sync/webhooks': { name: 'ConfigError', message: '[crm-upsert] crm-upsert-sync/webhooks needs hono (^4.13.0): npm install hono@^4.13' },
      'crm-upsert-sync/mcp': { name: 'ConfigError', message: '[crm-upsert] crm-upsert-sync/mcp needs @modelcontextprotocol/sdk (^1.32.2): npm install @modelcontextprotocol/sdk@^1.32.2' },
      'crm-upsert-sync/ledger/postgres': { name: 'ConfigError', message: '[crm-upsert] the postgres ledger needs the pg package: npm install pg@^8' },
      'crm-upsert-sync/ledger/redis': { name: 'ConfigError', message: '[crm-upsert] the redis ledger needs the ioredis package: npm install ioredis@^5' },
    });

    writeFileSync(join(withoutSdk, 'crm-upsert.config.json'), JSON.stringify({ crm: 'hubspot', ledger: 'memory:', dedupeWindowMs: 600000, hubspot: { basePath: 'http://127.0.0.1:9', objects: HUBSPOT_OBJECTS } }));
    writeFileSync(join(withoutSdk, 'actions.jsonl'), ACTIONS.map((a) => JSON.stringify(a)).join('\n') + '\n');
    const cli = await node(withoutSdk, [join(withoutSdk, 'node_modules', '.bin', 'crm-upsert'), 'sync', 'actions.jsonl'], { HUBSPOT_ACCESS_TOKEN: 'pack-test-token' });
    expect(cli.stderr.trim()).toBe(`crm-upsert: ${MISSING}`);
    expect(cli.code).toBe(2);

    // A server ledger whose driver is not installed says which package to install.
    const bin = join(withoutSdk, 'node_modules', '.bin', 'crm-upsert');
    for (const [url, install] of [['postgres://postgres@127.0.0.1:5432/test', 'pg@^8'], ['redis://127.0.0.1:6379', 'ioredis@^5']] as const) {
      const list = await node(withoutSdk, [bin, 'ledger', 'list', '--ledger', url]);
      expect(list.stderr.trim()).toBe(`crm-upsert: the ${url.split(':')[0]} ledger needs the ${install.split('@')[0]} package: npm install ${install}`);
      expect(list.code).toBe(2);
    }
  }, 60_000);
});
