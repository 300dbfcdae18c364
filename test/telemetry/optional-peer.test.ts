/**
 * @opentelemetry/api is an optional peer: the built root entry, with telemetry left unconfigured,
 * never loads it while no SDK registered providers, runs the same without it installed, and asks
 * for it by name when providers are passed but it is missing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, ensureBuilt, ROOT, tempDir } from '../cli/helpers.js';

// Counts every CommonJS load of the API; with BLOCK_OTEL set, makes it unresolvable both ways.
const PRELOAD = `
const Module = require('node:module');
const isApi = (r) => r === '@opentelemetry/api' || r.startsWith('@opentelemetry/api/');
globalThis.__otelLoads = 0;
const load = Module._load;
Module._load = function (request, ...rest) {
  if (isApi(request)) {
    globalThis.__otelLoads += 1;
    if (process.env.BLOCK_OTEL) throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
  }
  return load.call(this, request, ...rest);
};
if (process.env.BLOCK_OTEL) {
  Module.register('data:text/javascript,' + encodeURIComponent(
    'export async function resolve(s, c, next) { if (s === "@opentelemetry/api" || s.startsWith("@opentelemetry/api/")) throw Object.assign(new Error("Cannot find package " + s), { code: "ERR_MODULE_NOT_FOUND" }); return next(s, c); }'));
}
`;

const SCRIPT = (root: string) => `
const { createSync, memoryLedger } = await import(${JSON.stringify(join(root, 'dist/src/index.js'))});
let calls = 0;
const adapter = {
  name: 'mem', capabilities: { maxBatch: 10, nativeActivityUpsert: true }, objects: { contact: { kind: 'record', fields: ['email'] } },
  async upsertRecords(_o, writes) { calls += 1; return writes.map((_w, i) => ({ ok: true, recordId: 'r' + i, created: true })); },
  async createActivities() { return []; }, async findActivities() { return new Map(); },
  classifyError(e) { throw e; }, apiCalls: () => calls,
};
const sync = createSync({ adapter, ledger: memoryLedger() });
const action = { source: 't', eventId: 'e1', op: 'upsert', object: 'contact', externalId: 'x-1', fields: { email: 'a@example.com' } };
const first = await sync.applyMany([action]);
const again = await sync.apply(action);
await sync.close();
const loads = globalThis.__otelLoads;
let providers;
try { createSync({ adapter, ledger: memoryLedger(), telemetry: { tracerProvider: { getTracer() { return {}; } } } }); providers = 'accepted'; }
catch (e) { providers = e.name + ': ' + e.message; }
console.log(JSON.stringify({ statuses: [...first, again].map((o) => o.status), calls, loads, providers }));
`;

describe('@opentelemetry/api as an optional peer', () => {
  let preload: string;
  let script: string;
  beforeAll(() => {
    ensureBuilt();
    const dir = tempDir('crm-upsert-otel-');
    preload = join(dir, 'count-otel.cjs');
    script = join(dir, 'run.mjs');
    writeFileSync(preload, PRELOAD);
    writeFileSync(script, SCRIPT(ROOT));
  });

  const run = (env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, ['--require', preload, script], { encoding: 'utf8', env: cliEnv(env) });
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { statuses: string[]; calls: number; loads: number; providers: string };
  };

  it('declares it an optional peer in the range the code asks for, and exports the telemetry names apart', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, unknown>; exports: Record<string, unknown> };
    expect(pkg.peerDependencies['@opentelemetry/api']).toBe('>=1.3.0 <1.11.0');
    expect(pkg.peerDependenciesMeta['@opentelemetry/api']).toEqual({ optional: true });
    expect(pkg.exports['./telemetry']).toEqual({ types: './dist/src/telemetry/index.d.ts', default: './dist/src/telemetry/index.js' });
  });

  it('does not load it from the root with telemetry unconfigured and no SDK registered', () => {
    const r = run();
    expect(r).toMatchObject({ statuses: ['created', 'replayed'], calls: 1, loads: 0 });
    // Passing providers is what loads it (and it is installed here).
    expect(r.providers).toBe('accepted');
  });

  it('runs the same without it installed, and names it when providers are passed', () => {
    const r = run({ BLOCK_OTEL: '1' });
    expect(r).toMatchObject({ statuses: ['created', 'replayed'], calls: 1 });
    expect(r.providers).toBe('ConfigError: [crm-upsert] telemetry providers need @opentelemetry/api (>=1.3.0 <1.11.0): npm install @opentelemetry/api');
  });
});
