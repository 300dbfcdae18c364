/**
 * crm-upsert-sync/webhooks as a user imports it (the built package, by name): its names, and
 * standardwebhooks loaded only by its verifier, with one message naming the package when missing.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, ensureBuilt, ROOT, tempDir } from '../cli/helpers.js';

describe('crm-upsert-sync/webhooks', () => {
  let preload: string;
  beforeAll(() => {
    ensureBuilt();
    preload = join(tempDir('crm-upsert-hooks-'), 'no-standardwebhooks.cjs');
    writeFileSync(preload, `
      const Module = require('node:module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (request === 'standardwebhooks') throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
        return resolve.call(this, request, ...rest);
      };
    `);
  });

  it('exports the verifiers, the app and the queue sink; the hubspot verifier works without standardwebhooks', () => {
    const script = `
      const m = await import('crm-upsert-sync/webhooks');
      const v = m.hubspotV3Verifier({ secret: 's' });
      let message;
      try { m.standardWebhooksVerifier({ secret: 'whsec_AAAA' }); } catch (e) { message = e.message; }
      console.log(JSON.stringify({ names: Object.keys(m), refused: v({ method: 'POST', url: 'http://x/', headers: {}, body: new Uint8Array() }).status, message }));
    `;
    const r = spawnSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: cliEnv() });
    const out = JSON.parse(r.stdout) as { names: string[]; refused: number; message: string };
    expect(out.names).toEqual(expect.arrayContaining([
      'hubspotV3Verifier', 'standardWebhooksVerifier', 'hmacSha256Verifier', 'noVerification', 'webhookApp', 'eventQueue', 'sourcesFromConfig', 'eventJobId', 'EVENT_JOB',
    ]));
    expect(out.refused).toBe(401);
    expect(out.message).toBe('[crm-upsert] the standard-webhooks verifier needs standardwebhooks (1.1.1): npm install standardwebhooks@1.1.1');
  });
});
