/**
 * The vendor SDKs, the queue, webhook and MCP libraries, the database drivers and nock are
 * optional peers: a user installs only what they use. An entry whose peer is missing fails on
 * import with one message naming the package, its range and the install command; the CLI prints
 * it and exits 2; the root and /testing need none of them. The nock front refuses a nock that
 * cannot work on this Node.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { HUBSPOT_SDK, isMissingPackage, loadVendorSdk, missingSdkMessage, SALESFORCE_SDK } from '../../adapters/kit/vendor-sdk.js';
import { installedNockVersion, nockSupport } from '../../adapters/testing/nock-support.js';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import { ConfigError } from '../../src/errors.js';
import { importWithPeers, PEERS } from '../../src/optional-package.js';
import * as mcpApi from '../../src/mcp/api.js';
import * as mcpEntry from '../../src/mcp/index.js';
import * as queueApi from '../../src/queue/api.js';
import * as queueEntry from '../../src/queue/index.js';
import * as webhooksApi from '../../src/webhooks/api.js';
import * as webhooksEntry from '../../src/webhooks/index.js';
import { BIN, cliEnv, ensureBuilt, ROOT, tempDir, writeHubSpotConfig } from '../cli/helpers.js';

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;

/** What Node's ESM loader throws for a package it cannot find. */
const esmNotFound = (name: string, from = '/app/dist/src/queue/admin.js') =>
  Object.assign(new Error(`Cannot find package '${name}' imported from ${from}`), { code: 'ERR_MODULE_NOT_FOUND' });

/** True when X and Y are the same type, not only assignable to each other. */
type Same<X, Y> = (<T>() => T extends X ? 1 : 2) extends (<T>() => T extends Y ? 1 : 2) ? true : false;
/** The names two modules export with different types, or that only one of them exports. */
type Differing<A, B> = { [K in keyof A | keyof B]: K extends keyof A ? (K extends keyof B ? (Same<A[K], B[K]> extends true ? never : K) : K) : K }[keyof A | keyof B];

const notFound = (request: string) => Object.assign(new Error(`Cannot find module '${request}'\nRequire stack:\n- /app/x.js`), { code: 'MODULE_NOT_FOUND' });

describe('the vendor SDKs as optional peers', () => {
  it.each([HUBSPOT_SDK, SALESFORCE_SDK])('declares $name an optional peer with the range its message names, not a dependency', (sdk) => {
    expect(pkg.dependencies[sdk.name]).toBeUndefined();
    expect(pkg.peerDependencies[sdk.name]).toBe(sdk.range);
    expect(pkg.peerDependenciesMeta[sdk.name]).toEqual({ optional: true });
  });

  it('keeps the exact development pins, so this repository installs what it always did', () => {
    expect(pkg.devDependencies['@hubspot/api-client']).toBe('^13.5.0');
    expect(pkg.devDependencies.jsforce).toBe('3.10.16');
  });

  it('names the package, its range and the install command when the SDK is missing', () => {
    const load = () => loadVendorSdk(HUBSPOT_SDK, () => { throw notFound('@hubspot/api-client'); });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('[crm-upsert] crm-upsert-sync/hubspot needs @hubspot/api-client (>=13.5.0 <15): npm install @hubspot/api-client@^13.5');
    expect(missingSdkMessage(SALESFORCE_SDK)).toBe('crm-upsert-sync/salesforce needs jsforce (>=3.10.16 <4): npm install jsforce@~3.10.16');
  });

  it('lets any other failure through as it is: a module the SDK requires, or an error the SDK throws', () => {
    const transitive = notFound('node-fetch');
    expect(() => loadVendorSdk(HUBSPOT_SDK, () => { throw transitive; })).toThrow(transitive);
    const crash = new TypeError("Cannot read properties of undefined (reading 'bind')");
    expect(() => loadVendorSdk(SALESFORCE_SDK, () => { throw crash; })).toThrow(crash);
    expect(isMissingPackage(notFound('jsforce/lib/request'), 'jsforce')).toBe(false);
    expect(isMissingPackage(Object.assign(new Error("Cannot find package 'jsforce' imported from /app/x.js"), { code: 'ERR_MODULE_NOT_FOUND' }), 'jsforce')).toBe(true);
  });

  it('returns the SDK module when it is installed', () => {
    expect(typeof loadVendorSdk<{ Client: unknown }>(HUBSPOT_SDK).Client).toBe('function');
    expect(typeof loadVendorSdk<{ Connection: unknown }>(SALESFORCE_SDK).Connection).toBe('function');
  });

  describe('built entries in a process where the SDKs cannot be found', () => {
    let preload: string;
    beforeAll(() => {
      ensureBuilt();
      // Makes both SDKs unresolvable, as in a project that installed neither.
      preload = join(tempDir('crm-upsert-peers-'), 'no-sdks.cjs');
      writeFileSync(preload, `
        const Module = require('node:module');
        const blocked = ['@hubspot/api-client', 'jsforce'];
        const resolve = Module._resolveFilename;
        Module._resolveFilename = function (request, ...rest) {
          if (blocked.some((b) => request === b || request.startsWith(b + '/'))) {
            throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
          }
          return resolve.call(this, request, ...rest);
        };
      `);
    });

    const importIn = (entry: string) => {
      const script = `
        try { const m = await import(${JSON.stringify(join(ROOT, 'dist', entry))}); console.log(JSON.stringify({ ok: Object.keys(m).length })); }
        catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); }
      `;
      const r = spawnSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], { encoding: 'utf8', env: cliEnv() });
      return JSON.parse(r.stdout) as { ok?: number; name?: string; message?: string };
    };

    it('imports the root and /testing without either SDK', () => {
      expect(importIn('src/index.js').ok).toBeGreaterThan(0);
      expect(importIn('adapters/testing/index.js').ok).toBeGreaterThan(0);
    });

    it.each([
      ['adapters/hubspot/index.js', missingSdkMessage(HUBSPOT_SDK)],
      ['adapters/salesforce/index.js', missingSdkMessage(SALESFORCE_SDK)],
    ])('fails importing %s with the one message', (entry, message) => {
      expect(importIn(entry)).toEqual({ name: 'ConfigError', message: `[crm-upsert] ${message}` });
    });

    it('has the CLI print the message and exit 2 when the config names that CRM, before any request', () => {
      const dir = tempDir('crm-upsert-peers-');
      // Nothing listens there: had the adapter been built, the run would fail on the connection instead.
      const config = writeHubSpotConfig(dir, 'http://127.0.0.1:9');
      const actions = join(dir, 'actions.jsonl');
      writeFileSync(actions, '{"source":"t","eventId":"e1","op":"upsert","object":"contact","externalId":"c-1","fields":{"email":"a@example.com"}}\n');
      const r = spawnSync(process.execPath, ['--require', preload, BIN, 'sync', actions, '--config', config, '--ledger', 'memory:'], {
        cwd: dir, encoding: 'utf8', env: cliEnv({ HUBSPOT_ACCESS_TOKEN: 'test-token' }),
      });
      expect(r.stderr.trim()).toBe(`crm-upsert: ${missingSdkMessage(HUBSPOT_SDK)}`);
      expect(r.status).toBe(2);
    });
  });
});

describe('the subpath entries whose packages are optional peers', () => {
  it.each(Object.values(PEERS))('declares $name an optional peer with the range its message names', (peer) => {
    expect(pkg.dependencies[peer.name]).toBeUndefined();
    expect(pkg.peerDependencies[peer.name]).toBe(peer.range);
    expect(pkg.peerDependenciesMeta[peer.name]).toEqual({ optional: true });
  });

  it('turns the missing peer into one message naming it and the install command', async () => {
    const error = await importWithPeers('crm-upsert-sync/queue', [PEERS.bullmq], () => Promise.reject(esmNotFound('bullmq'))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe('[crm-upsert] crm-upsert-sync/queue needs bullmq (^6.3.0): npm install bullmq@^6.3');
  });

  it('lets any other failure through as it is: a package the peer imports, a file of the peer, an error the peer throws', async () => {
    const inside = esmNotFound('zod', '/app/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
    const crash = new TypeError("Cannot read properties of undefined (reading 'bind')");
    for (const thrown of [inside, notFound('pg/lib/native'), crash]) {
      const error = await importWithPeers('crm-upsert-sync/mcp', [PEERS.mcpSdk, PEERS.pg], () => Promise.reject(thrown)).catch((e: unknown) => e);
      expect(error).toBe(thrown);
    }
  });

  it('resolves to the implementation when its peers load', async () => {
    await expect(importWithPeers('crm-upsert-sync/queue', [PEERS.bullmq], () => import('../../src/queue/api.js'))).resolves.toBe(queueApi);
  });

  it.each([
    ['crm-upsert-sync/queue', queueEntry, queueApi],
    ['crm-upsert-sync/webhooks', webhooksEntry, webhooksApi],
    ['crm-upsert-sync/mcp', mcpEntry, mcpApi],
  ])('%s exports every value of its implementation, the same values', (_entry, entry, api) => {
    expect(Object.keys(entry).sort()).toEqual(Object.keys(api).sort());
    for (const name of Object.keys(api)) expect((entry as Record<string, unknown>)[name], name).toBe((api as Record<string, unknown>)[name]);
  });

  it('keeps the implementation’s types: literals, unique symbols and the type of a constant object', () => {
    expectTypeOf<Differing<typeof queueEntry, typeof queueApi>>().toBeNever();
    expectTypeOf<Differing<typeof webhooksEntry, typeof webhooksApi>>().toBeNever();
    expectTypeOf<Differing<typeof mcpEntry, typeof mcpApi>>().toBeNever();
    expectTypeOf(queueEntry.EVENT_JOB).toEqualTypeOf<'event'>();
    expectTypeOf<queueEntry.ChunkKind>().toEqualTypeOf<'records' | 'activities' | 'gate'>();
    expectTypeOf<webhooksEntry.RefusalStatus>().toEqualTypeOf<400 | 401>();
    expectTypeOf<Awaited<ReturnType<typeof webhooksEntry.readBody>>>().toEqualTypeOf<Uint8Array | typeof webhooksEntry.BodyTooLarge>();
  });

  describe('built entries in a process where their peers cannot be found', () => {
    let preload: string;
    beforeAll(() => {
      ensureBuilt();
      // Makes the packages named in BLOCKED unresolvable to imports and require() alike, as in a project that did not install them.
      const dir = tempDir('crm-upsert-peers-');
      const hook = join(dir, 'block-hook.mjs');
      writeFileSync(hook, `
        const blocked = (process.env.BLOCKED ?? '').split(',').filter(Boolean);
        export async function resolve(specifier, context, next) {
          const name = blocked.find((b) => specifier === b || specifier.startsWith(b + '/'));
          if (name) throw Object.assign(new Error("Cannot find package '" + name + "' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' });
          return next(specifier, context);
        }
      `);
      preload = join(dir, 'block.cjs');
      writeFileSync(preload, `
        const Module = require('node:module');
        const blocked = (process.env.BLOCKED ?? '').split(',').filter(Boolean);
        const resolve = Module._resolveFilename;
        Module._resolveFilename = function (request, ...rest) {
          if (blocked.some((b) => request === b || request.startsWith(b + '/'))) {
            throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
          }
          return resolve.call(this, request, ...rest);
        };
        Module.register(${JSON.stringify(pathToFileURL(hook).href)});
      `);
    });

    const importBlocking = (entry: string, blocked: string[]) => {
      const script = `
        try { const m = await import(${JSON.stringify(entry)}); console.log(JSON.stringify({ ok: Object.keys(m).length })); }
        catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); }
      `;
      const r = spawnSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: cliEnv({ BLOCKED: blocked.join(',') }) });
      return JSON.parse(r.stdout) as { ok?: number; name?: string; message?: string };
    };

    const ENTRIES = [
      ['crm-upsert-sync/queue', 'bullmq', 'crm-upsert-sync/queue needs bullmq (^6.3.0): npm install bullmq@^6.3'],
      ['crm-upsert-sync/webhooks', 'hono', 'crm-upsert-sync/webhooks needs hono (^4.13.0): npm install hono@^4.13'],
      ['crm-upsert-sync/mcp', '@modelcontextprotocol/sdk', 'crm-upsert-sync/mcp needs @modelcontextprotocol/sdk (^1.32.2): npm install @modelcontextprotocol/sdk@^1.32.2'],
      // As openLedger('postgres://…') and openLedger('redis://…') say it.
      ['crm-upsert-sync/ledger/postgres', 'pg', 'the postgres ledger needs the pg package: npm install pg@^8'],
      ['crm-upsert-sync/ledger/redis', 'ioredis', 'the redis ledger needs the ioredis package: npm install ioredis@^5'],
    ] as const;

    it.each(ENTRIES)('fails importing %s without %s with the one message', (entry, peer, message) => {
      expect(importBlocking(entry, [peer])).toEqual({ name: 'ConfigError', message: `[crm-upsert] ${message}` });
    });

    it.each([
      ['crm-upsert-sync/queue', ['hono', '@modelcontextprotocol/sdk', 'pg', 'ioredis']],
      ['crm-upsert-sync/webhooks', ['bullmq', '@modelcontextprotocol/sdk', 'pg', 'ioredis']],
      // The MCP SDK depends on hono itself.
      ['crm-upsert-sync/mcp', ['bullmq', 'pg', 'ioredis']],
      ['crm-upsert-sync/ledger/postgres', ['bullmq', 'hono', '@modelcontextprotocol/sdk', 'ioredis']],
      ['crm-upsert-sync/ledger/redis', ['bullmq', 'hono', '@modelcontextprotocol/sdk', 'pg']],
    ])('imports %s without the peers of the other entries (%j)', (entry, blocked) => {
      expect(importBlocking(entry, blocked).ok).toBeGreaterThan(0);
    });

    it('keeps the ledger entries loadable with require(), as a CommonJS project does', () => {
      const script = `
        const out = {};
        for (const entry of ['crm-upsert-sync/ledger/postgres', 'crm-upsert-sync/ledger/redis']) {
          try { out[entry] = Object.keys(require(entry)).sort(); } catch (e) { out[entry] = e.code + ': ' + e.message; }
        }
        console.log(JSON.stringify(out));
      `;
      const r = spawnSync(process.execPath, ['--no-warnings', '-e', script], { cwd: ROOT, encoding: 'utf8', env: cliEnv() });
      expect(JSON.parse(r.stdout)).toEqual({ 'crm-upsert-sync/ledger/postgres': ['migrate', 'postgresLedger'], 'crm-upsert-sync/ledger/redis': ['redisLedger'] });
    });

    it('says which package the webhook sink needs when bullmq is missing, at its first use', () => {
      const script = `
        const { eventQueue } = await import('crm-upsert-sync/webhooks');
        const sink = eventQueue({ url: 'redis://127.0.0.1:1', name: 'q' });
        try { await sink.ready(); console.log('ready'); } catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); }
      `;
      const r = spawnSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: cliEnv({ BLOCKED: 'bullmq' }) });
      expect(JSON.parse(r.stdout)).toEqual({ name: 'ConfigError', message: '[crm-upsert] eventQueue needs bullmq (^6.3.0): npm install bullmq@^6.3' });
    });
  });
});

describe('the nock front', () => {
  it.each([
    ['14.0.17', '20.20.2'],
    ['14.0.0', '20.19.0'],
    ['15.0.0', '20.20.2'],
    ['14.0.17', '22.23.5'],
    ['15.0.6', '22.23.5'],
  ])('accepts nock %s on Node %s', (nock, node) => {
    expect(nockSupport(nock, node)).toEqual({ ok: true });
  });

  it.each([
    ['15.0.1', '20.20.2'],
    ['15.0.2', '20.19.0'],
    ['15.1.0', '20.20.2'],
    ['16.0.0', '21.7.3'],
  ])('refuses nock %s on Node %s, saying what to install', (nock, node) => {
    const major = node.split('.')[0];
    expect(nockSupport(nock, node)).toEqual({
      ok: false,
      message: `nock ${nock} is not supported on Node ${major}; install nock@14 or nock@15.0.0 (nock 15.0.1 and later need Node 22)`,
    });
  });

  it('reads the installed version from nock’s package.json', () => {
    const require = createRequire(import.meta.url);
    expect(installedNockVersion()).toBe((require('nock/package.json') as { version: string }).version);
  });

  it('says what to install when nock is missing', () => {
    expect(nockSupport(undefined, '20.20.2')).toEqual({ ok: false, message: "the fakes' nock front needs nock (^14.0.0, or exactly 15.0.0 on Node 20): npm install -D nock@14" });
  });

  it('declares nock an optional peer admitting 14.x and 15.x', () => {
    expect(pkg.peerDependencies.nock).toBe('^14.0.0 || ^15.0.0');
    expect(pkg.peerDependenciesMeta.nock).toEqual({ optional: true });
    expect(pkg.devDependencies.nock).toMatch(/^14\./);
  });

  it('opens with the nock this repository pins', async () => {
    const front = await fakeHubSpot().open('nock');
    await front.close();
  });
});
