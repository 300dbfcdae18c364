/**
 * The spawned `crm-upsert serve`: starts from the config, enqueues a signed delivery to real
 * Redis, finishes a request in flight on SIGTERM (exit 143), and exits 2 on a `none` source off
 * loopback, a missing secret variable or a bad field.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventJobId } from '../../src/queue/jobs.js';
import { BIN, cliEnv, ensureBuilt, runCli, spawnCli, tempDir, waitFor, writeHubSpotConfig, type SpawnedCli } from '../cli/helpers.js';
import { redisUrl, runId } from '../helpers/services.js';
import { hubspotBody, hubspotHeaders } from './hubspot-deliveries.js';

const url = await redisUrl();
const SECRET = 'serve-cli-hubspot-secret';

function configWith(dir: string, webhooks: Record<string, unknown>, queue: Record<string, unknown>): string {
  return writeHubSpotConfig(dir, 'http://127.0.0.1:9', { webhooks, queue });
}

const hubspotSource = { verify: { kind: 'hubspot-v3', secretEnv: 'HS_WEBHOOK_SECRET' }, handler: './handlers/hubspot.js' };

describe('crm-upsert serve: refusals (exit 2)', () => {
  beforeAll(() => ensureBuilt());
  const queue = { url: 'redis://127.0.0.1:6379' };

  it('refuses a none source on 0.0.0.0, naming the field', async () => {
    const dir = tempDir();
    const config = configWith(dir, { sources: { local: { verify: { kind: 'none', eventIdPointer: '/id' }, handler: './h.js' } } }, queue);
    const r = await runCli(['serve', '--config', config, '--host', '0.0.0.0', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('webhooks.sources.local.verify.kind "none"');
    expect(r.stderr).toContain('0.0.0.0');
  });

  it('names a missing secret variable', async () => {
    const dir = tempDir();
    const r = await runCli(['serve', '--config', configWith(dir, { port: 0, sources: { hubspot: hubspotSource } }, queue)]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('crm-upsert: environment variable HS_WEBHOOK_SECRET is not set (named by webhooks.sources.hubspot.verify.secretEnv)');
  });

  it('names a bad config field, and a missing queue section', async () => {
    const dir = tempDir();
    const bad = await runCli(['serve', '--config', configWith(dir, { port: 'eighty', sources: { hubspot: hubspotSource } }, queue)], { env: { HS_WEBHOOK_SECRET: SECRET } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('webhooks.port');
    const path = join(dir, 'noqueue.json');
    writeFileSync(path, JSON.stringify({ crm: 'hubspot', hubspot: { basePath: 'http://127.0.0.1:9', objects: {} }, webhooks: { sources: { hubspot: hubspotSource } } }));
    const noQueue = await runCli(['serve', '--config', path], { env: { HS_WEBHOOK_SECRET: SECRET } });
    expect(noQueue.code).toBe(2);
    expect(noQueue.stderr).toContain('no queue section');
  });
});

describe('crm-upsert serve when the queue\'s Redis does not answer', () => {
  beforeAll(() => ensureBuilt());

  it('exits 4 naming the Redis URL with its password redacted and its host readable', async () => {
    const config = configWith(tempDir(), { port: 0, sources: { hubspot: hubspotSource } }, { url: 'redis://:serve-redis-pw-4821@127.0.0.1:1/0' });
    const r = await runCli(['serve', '--config', config], { env: { HS_WEBHOOK_SECRET: SECRET } });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^crm-upsert: cannot reach the queue's Redis at redis:\/\/:\[redacted\]@127\.0\.0\.1:1\/0: /);
    expect(r.stdout + r.stderr).not.toContain('serve-redis-pw-4821');
  }, 30_000);
});

describe('crm-upsert serve without its packages', () => {
  beforeAll(() => ensureBuilt());

  it('names what to install when bullmq is missing (exit 2), before it tries Redis', () => {
    const hook = pathToFileURL(join(import.meta.dirname, '..', 'queue', 'fixtures', 'block-bullmq.mjs')).href;
    const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hook)})`;
    const config = configWith(tempDir(), { port: 0, sources: { hubspot: hubspotSource } }, { url: 'redis://127.0.0.1:1' });
    const r = spawnSync(process.execPath, ['--import', register, BIN, 'serve', '--config', config], { encoding: 'utf8', env: cliEnv({ HS_WEBHOOK_SECRET: SECRET }) });
    expect(r.stderr.trim()).toBe('crm-upsert: crm-upsert serve needs hono, @hono/node-server, bullmq and ioredis: npm install hono @hono/node-server bullmq ioredis');
    expect(r.status).toBe(2);
  });
});

describe.skipIf(!url)('crm-upsert serve on real Redis', () => {
  const name = `serve-${runId()}`;
  const prefix = `bull-${runId()}`;
  let cli: SpawnedCli;
  let inspect: Queue;
  let hooks: string;

  beforeAll(async () => {
    ensureBuilt();
    const dir = tempDir();
    const config = configWith(dir, { port: 0, sources: { hubspot: hubspotSource } }, { url, name, prefix, attempts: 4, keepCompletedSeconds: 3_600 });
    cli = spawnCli(['serve', '--config', config], { env: { HS_WEBHOOK_SECRET: SECRET } });
    let out = '';
    cli.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => out.includes('\n'), 20_000);
    const started = JSON.parse(out.split('\n')[0]!) as { url: string; queue: string; sources: Record<string, string> };
    expect(started.queue).toBe(name);
    hooks = started.sources.hubspot!;
    expect(hooks).toBe(`${started.url}/hooks/hubspot`);
    inspect = new Queue(name, { connection: { url: url! }, prefix });
  });

  afterAll(async () => {
    if (cli && cli.child.exitCode === null) cli.child.kill('SIGKILL');
    await inspect?.obliterate({ force: true }).catch(() => undefined);
    await inspect?.close();
  });

  it('prints the URL per source and enqueues a signed delivery', async () => {
    const now = Date.now();
    const body = hubspotBody([424242], now);
    const res = await fetch(hooks, { method: 'POST', headers: hubspotHeaders(SECRET, hooks, body, now), body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, events: 1 });
    const job = await inspect.getJob(eventJobId({ source: 'hubspot', eventId: '424242' }));
    expect(job?.data).toMatchObject({ source: 'hubspot', eventId: '424242', payload: { eventId: 424242 } });
    expect(job?.opts.attempts).toBe(4);
    expect(job?.opts.removeOnComplete).toEqual({ age: 3_600 });
    expect(job?.opts.removeOnFail).toBe(false);
    const refused = await fetch(hooks, { method: 'POST', headers: hubspotHeaders('wrong', hooks, body, now), body });
    expect(refused.status).toBe(401);
  });

  it('finishes the request in flight on SIGTERM, then exits 143', async () => {
    const now = Date.now();
    const body = hubspotBody([515151], now);
    const { host, port } = new URL(hooks);
    const answered = new Promise<number>((resolveAnswer, reject) => {
      const req = request({ host: host.split(':')[0], port, path: '/hooks/hubspot', method: 'POST', headers: { ...hubspotHeaders(SECRET, hooks, body, now), 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolveAnswer(res.statusCode ?? 0));
      });
      req.on('error', reject);
      // Half the body now, SIGTERM, the rest later: the request is in flight when the signal lands.
      req.write(body.slice(0, 20));
      setTimeout(() => {
        cli.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(20)), 300);
      }, 400);
    });
    expect(await answered).toBe(200);
    const result = await cli.done;
    expect(result.code).toBe(143);
    expect(result.stderr).toContain('SIGTERM: finishing the requests in flight');
    expect(result.stderr).toMatch(/stopped: 2 deliveries accepted \(2 events\), refused 1 401/);
    expect(result.stderr).toContain('crm-upsert: 401 on hubspot: X-HubSpot-Signature-v3 does not match');
    expect(await inspect.getJob(eventJobId({ source: 'hubspot', eventId: '515151' }))).toBeDefined();
  });
});
