/**
 * bullmq is an optional peer: the CLI runs without it, and only the commands that need the queue
 * say so (exit 2 with the install command) instead of crashing at startup.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, ensureBuilt, tempDir, writeHubSpotConfig } from '../cli/helpers.js';

const hook = pathToFileURL(join(import.meta.dirname, 'fixtures', 'block-bullmq.mjs')).href;
const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hook)})`;

describe('the CLI without bullmq', () => {
  let config: string;
  beforeAll(() => {
    ensureBuilt();
    config = writeHubSpotConfig(tempDir('crm-upsert-no-bullmq-'), 'http://127.0.0.1:9', { queue: { url: 'redis://127.0.0.1:1' } });
  }, 180_000);
  const run = (...args: string[]) => spawnSync(process.execPath, ['--import', register, BIN, ...args], { encoding: 'utf8', env: cliEnv({ HUBSPOT_ACCESS_TOKEN: 'pat-test-peer' }) });

  it('runs the commands that do not use the queue', () => {
    const r = run('schema');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('$schema');
  });

  it.each([
    [['worker'], 'crm-upsert worker'],
    [['queue', 'stats'], 'crm-upsert queue'],
  ])('refuses %j with the package to install, exit 2', (args, command) => {
    const r = run(...args, '--config', config);
    expect(r.stderr.trim()).toBe(`crm-upsert: ${command} needs bullmq (^6.3.0): npm install bullmq@^6.3`);
    expect(r.status).toBe(2);
  });
});
