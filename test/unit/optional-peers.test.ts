/**
 * The vendor SDKs and nock are optional peers: a user installs only what they use. An entry
 * whose SDK is missing fails on import with one message naming the package, its range and the
 * install command; the CLI prints it and exits 2; the root and /testing need neither SDK. The
 * nock front refuses a nock that cannot work on this Node.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HUBSPOT_SDK, isMissingPackage, loadVendorSdk, missingSdkMessage, SALESFORCE_SDK } from '../../adapters/kit/vendor-sdk.js';
import { installedNockVersion, nockSupport } from '../../adapters/testing/nock-support.js';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import { ConfigError } from '../../src/errors.js';
import { BIN, cliEnv, ensureBuilt, ROOT, tempDir, writeHubSpotConfig } from '../cli/helpers.js';

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;

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
