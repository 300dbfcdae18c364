import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { fakeHubSpot, fakeSalesforce, type FakeHubSpot } from '../../adapters/testing/index.js';
import { contactLine, ensureBuilt, pairsFile, runCli, sleep, tempDir, writeHubSpotConfig, startFakeHubSpot } from './helpers.js';

interface Report {
  counts: Record<string, number>;
  apiCalls: number;
  problems: { line: number; status: string; reason: string }[];
  stopped?: { reason: string; message?: string; unsettledLines?: { first: number; last: number; count: number } };
}

const readReport = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;
const summaryOf = (stdout: string) => {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
};

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** A throwaway Redis nobody else uses: no persistence, gone when killed. */
async function startRedis(): Promise<{ port: number; process: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  for (let i = 0; ; i++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (err) {
      if (i > 100) throw err;
      await sleep(50);
    }
  }
  probe.disconnect();
  return {
    port,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('crm-upsert sync when the infrastructure fails', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };

  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(async () => server?.close());

  it('exits 4 with its summary and report when the Redis ledger goes away mid-run, and marks done only what was recorded', async () => {
    const redis = await startRedis();
    const proxy = await tcpProxy({ port: redis.port });
    try {
      const dir = tempDir();
      const config = writeHubSpotConfig(dir, server.basePath, { ledger: `redis://127.0.0.1:${proxy.port}` });
      const file = join(dir, 'contacts.jsonl');
      writeFileSync(file, `${Array.from({ length: 1000 }, (_, i) => contactLine(i, { externalId: `cut-${i}`, eventId: `cut-evt-${i}` })).join('\n')}\n`);
      const report = join(dir, 'report.json');
      // Cut the ledger while the CRM commits the third batch: the CRM confirms it, the ledger cannot record it.
      const dispatch = fake.core.dispatch.bind(fake.core);
      let upserts = 0;
      fake.core.dispatch = (req) => {
        if (req.path.endsWith('/contacts/batch/upsert') && ++upserts === 3) void proxy.cut('refuse');
        return dispatch(req);
      };
      const before = fake.count();

      const result = await runCli(['sync', file, '--config', config, '--batch-size', '100', '--report', report], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-test-faults' } });
      fake.core.dispatch = dispatch;

      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(/crm-upsert: stopped: .*redis/i);
      expect(summaryOf(result.stdout)).toMatchObject({ command: 'sync', actions: 200, counts: { created: 200 }, stopped: 'infrastructure', unsettled: 100, exitCode: 4, report });
      const r = readReport(report);
      expect(r.counts).toEqual({ created: 200 });
      expect(r.stopped).toMatchObject({ reason: 'infrastructure', message: expect.stringMatching(/redis/i), unsettledLines: { first: 201, last: 300, count: 100 } });
      // No batch after the fault: the third was the last request.
      expect(fake.count() - before).toBe(3);
      expect(r.apiCalls).toBe(3);
      const contacts = fake.records('contacts').filter((c) => c.properties.ai_external_id?.startsWith('cut-'));
      expect(contacts).toHaveLength(300);
      // The ledger itself (behind the proxy, still up): completed only what the report counts, each a record the CRM holds.
      const ledger = openLedger(`redis://127.0.0.1:${redis.port}`);
      try {
        const entries = await ledger.list({ limit: 5000 });
        const completed = entries.filter((e) => e.status === 'completed');
        expect(completed).toHaveLength(200);
        expect(entries.filter((e) => e.status === 'in_progress')).toHaveLength(100);
        const ids = new Set(contacts.map((c) => c.id));
        for (const e of completed) expect(ids.has((e.result as { recordId: string }).recordId)).toBe(true);
      } finally {
        await ledger.close();
      }
    } finally {
      await proxy.close();
      await redis.stop();
    }
  }, 60_000);
});

describe.each([
  ['hubspot', 'HUBSPOT_ACCESS_TOKEN'],
  ['salesforce', 'SF_ACCESS_TOKEN'],
] as const)('crm-upsert sync when %s refuses the token', (crm, tokenEnv) => {
  it(`exits 2 after at most a couple of requests, naming ${tokenEnv}, and still prints its summary`, async () => {
    const dir = tempDir();
    const file = join(dir, 'actions.jsonl');
    const report = join(dir, 'report.json');
    let config: string;
    let requests: () => number;
    let close: () => Promise<void>;
    if (crm === 'hubspot') {
      const hs = fakeHubSpot({ token: 'the-only-accepted-token' });
      const s = await hs.listen();
      config = writeHubSpotConfig(dir, s.basePath);
      pairsFile(file, 1000);
      requests = () => hs.count();
      close = () => s.close();
    } else {
      const sf = fakeSalesforce({ accessToken: 'the-only-accepted-token' });
      const s = await sf.listen();
      config = join(dir, 'sf.config.json');
      writeFileSync(config, JSON.stringify({
        crm: 'salesforce',
        ledger: `sqlite:${join(dir, 'ledger.db')}`,
        salesforce: {
          instanceUrl: s.instanceUrl,
          objects: { contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'] } },
        },
      }));
      const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ source: 'test', eventId: `sf-evt-${i}`, op: 'upsert', object: 'contact', externalId: `sf-${i}`, fields: { Email: `u${i}@example.com`, LastName: `U${i}` } }));
      writeFileSync(file, `${lines.join('\n')}\n`);
      requests = () => sf.count();
      close = () => s.close();
    }
    try {
      const result = await runCli(['sync', file, '--config', config, '--report', report], { env: { [tokenEnv]: 'a-wrong-token' } });

      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`the token in ${tokenEnv} was refused`);
      expect(requests()).toBeGreaterThan(0);
      expect(requests()).toBeLessThanOrEqual(2);
      const summary = summaryOf(result.stdout);
      expect(summary).toMatchObject({ command: 'sync', stopped: 'auth', exitCode: 2 });
      // Only the first call reached the engine. On HubSpot that is the first 500 lines, the other
      // 1,500 never read into a batch; Salesforce's calls are sized for its bulk lane (up to 50,000
      // actions), so the whole file was one call, refused at its job's first request.
      expect(summary.actions).toBe(crm === 'hubspot' ? 500 : 2000);
      const r = readReport(report);
      expect(r.stopped).toMatchObject({ reason: 'auth', message: expect.stringContaining(tokenEnv) });
      expect(r.apiCalls).toBe(requests());
      expect(result.stderr).not.toContain('a-wrong-token');
    } finally {
      await close();
    }
  }, 60_000);
});

describe('crm-upsert retry-failed when the CRM refuses the token', () => {
  beforeAll(() => ensureBuilt());

  it('exits 2 naming HUBSPOT_ACCESS_TOKEN, with its summary line and report', async () => {
    const open = fakeHubSpot();
    const openServer = await open.listen();
    const strict = fakeHubSpot({ token: 'the-only-accepted-token' });
    const strictServer = await strict.listen();
    try {
      const dir = tempDir();
      const file = join(dir, 'notes.jsonl');
      // Notes on parents that do not exist: they end failed, waiting for retry-failed.
      writeFileSync(file, `${Array.from({ length: 3 }, (_, i) => JSON.stringify({ source: 'test', eventId: `orphan-${i}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `nobody-${i}` }, fields: { hs_note_body: 'x' } })).join('\n')}\n`);
      const first = await runCli(['sync', file, '--config', writeHubSpotConfig(dir, openServer.basePath)], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-any' } });
      expect(first.code).toBe(1);
      const report = join(dir, 'retry.json');

      const result = await runCli(['retry-failed', '--config', writeHubSpotConfig(dir, strictServer.basePath), '--report', report], { env: { HUBSPOT_ACCESS_TOKEN: 'a-wrong-token' } });

      expect(result.code).toBe(2);
      expect(result.stderr).toContain('the token in HUBSPOT_ACCESS_TOKEN was refused');
      expect(summaryOf(result.stdout)).toMatchObject({ command: 'retry-failed', stopped: 'auth', exitCode: 2 });
      expect(strict.count()).toBeGreaterThan(0);
      expect(strict.count()).toBeLessThanOrEqual(2);
      expect(readReport(report).stopped).toMatchObject({ reason: 'auth' });
    } finally {
      await openServer.close();
      await strictServer.close();
    }
  }, 60_000);
});

describe('crm-upsert sync with the config\'s retry settings', () => {
  beforeAll(() => ensureBuilt());

  it('retries a batch the CRM does not answer exactly as often as `retry.retries` says', async () => {
    const hs = fakeHubSpot();
    hs.setFaults({ serverError: 1 });
    const s = await hs.listen();
    try {
      const dir = tempDir();
      const file = join(dir, 'actions.jsonl');
      writeFileSync(file, `${[1, 2, 3].map((i) => contactLine(i)).join('\n')}\n`);
      const config = writeHubSpotConfig(dir, s.basePath, { retry: { retries: 2, minTimeoutMs: 10, maxTimeoutMs: 20 } });
      const started = Date.now();
      const result = await runCli(['sync', file, '--config', config], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-any' } });

      expect(result.code).toBe(1);
      // One batch of 3 upserts: the first attempt and its 2 retries, 10-20 ms apart (the default is 6 retries over 16 s).
      expect(hs.count()).toBe(3);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(summaryOf(result.stdout)).toMatchObject({ command: 'sync', actions: 3, counts: { failed: 3 }, apiCalls: 3, exitCode: 1 });
      expect(hs.records('contacts')).toHaveLength(0);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('refuses retry settings that contradict each other, naming the field, before any request', async () => {
    const hs = fakeHubSpot();
    const s = await hs.listen();
    try {
      const dir = tempDir();
      const file = join(dir, 'actions.jsonl');
      writeFileSync(file, `${contactLine(1)}\n`);
      const config = writeHubSpotConfig(dir, s.basePath, { retry: { minTimeoutMs: 5_000, maxTimeoutMs: 100 } });
      const result = await runCli(['sync', file, '--config', config], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-any' } });

      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/retry\.minTimeoutMs.*must not be larger than maxTimeoutMs/);
      expect(hs.count()).toBe(0);
    } finally {
      await s.close();
    }
  }, 60_000);
});
