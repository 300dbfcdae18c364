/**
 * `crm-upsert mcp --http` spawned, the SDK's StreamableHTTPClientTransport connected to it: the
 * same scenarios as over stdio, one session per client, and the access rules (loopback Host,
 * bearer token, no start on a non-loopback address without a token).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { badArguments, call, expectGeneratedTools, hubspotReads, keylessNoteThrice, noteThriceWithOneKey, upsertTwiceWithOneKey } from './helpers.js';
import { CRM_TOKEN, httpClient, httpServer, type HttpServer } from './spawn.js';

const MCP_TOKEN = 'mcp-test-token-7d1e0c5b9a2f4e68';

let fake: FakeHubSpot;
let server: { basePath: string; close(): Promise<void> };
let config: string;
let mcp: HttpServer;
let client: Client;

beforeAll(async () => {
  ({ fake, server } = await startFakeHubSpot());
  config = writeHubSpotConfig(tempDir('crm-upsert-mcp-http-'), server.basePath, { leaseMs: 5_000 });
  mcp = await httpServer(['--config', config, '--http', '0']);
  client = await httpClient(mcp.url, 'http-agent');
});

afterAll(async () => {
  await client.close();
  mcp.cli.child.kill('SIGTERM');
  await mcp.cli.done;
  await server.close();
});

describe('crm-upsert mcp --http', () => {
  it('listens on loopback and prints its URL as the first stdout line', () => {
    expect(mcp.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('serves the generated tools', async () => {
    await expectGeneratedTools(client, hubspotReads());
  });

  it('replays an upsert repeated with the same key', async () => {
    await upsertTwiceWithOneKey(client, fake, 'http-upsert');
  });

  it('creates one note for three calls with one key and different text', async () => {
    await noteThriceWithOneKey(client, fake, 'http-note');
  });

  it('suppresses identical keyless creates inside the window', async () => {
    await keylessNoteThrice(client, fake, 'http-keyless');
  });

  it('rejects bad arguments with their path and makes 0 CRM calls', async () => {
    await badArguments(client, fake, 'http-bad');
  });

  it('keeps each session\'s client name: the same key from another agent is another call', async () => {
    const other = await httpClient(mcp.url, 'http-other-agent');
    try {
      const mine = await call(client, 'get_outcome', { key: 'http-upsert-k1' });
      const theirs = await call(other, 'get_outcome', { key: 'http-upsert-k1' });
      expect(mine.structured.status).toBe('created');
      expect(theirs.structured.status).toBe('not_found');
    } finally {
      await other.close();
    }
  });

  it('refuses a request whose Host or Origin is not loopback (DNS rebinding)', async () => {
    const post = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(mcp.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('{}');
      });
    expect(await post({ host: 'evil.example' })).toBe(403);
    expect(await post({ origin: 'http://evil.example' })).toBe(403);
    expect(await post({})).toBe(400);
  });

  it('stops on SIGTERM with exit 143', async () => {
    const short = await httpServer(['--config', config, '--http', '0']);
    short.cli.child.kill('SIGTERM');
    const done = await short.cli.done;
    expect(done.code).toBe(143);
    expect(done.stderr).toContain('crm-upsert mcp: SIGTERM: stopped');
  });

  describe('the bearer token', () => {
    it('refuses to start on a non-loopback address without CRM_UPSERT_MCP_TOKEN (exit 2, nothing bound)', async () => {
      const r = await runCli(['mcp', '--config', config, '--http', '0', '--host', '0.0.0.0'], { env: { HUBSPOT_ACCESS_TOKEN: CRM_TOKEN } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('--host 0.0.0.0 is not a loopback address: set CRM_UPSERT_MCP_TOKEN');
    });

    it('refuses --host without --http (exit 2)', async () => {
      const r = await runCli(['mcp', '--config', config, '--host', '127.0.0.1'], { env: { HUBSPOT_ACCESS_TOKEN: CRM_TOKEN } });
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toBe('crm-upsert: --host is for --http PORT (stdio has no address)\n');
    });

    it('refuses a token shorter than 16 characters', async () => {
      const r = await runCli(['mcp', '--config', config, '--http', '0'], { env: { HUBSPOT_ACCESS_TOKEN: CRM_TOKEN, CRM_UPSERT_MCP_TOKEN: 'short' } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('CRM_UPSERT_MCP_TOKEN is too short');
    });

    it('is required on every request when set, and never printed', async () => {
      const guarded = await httpServer(['--config', config, '--http', '0'], { CRM_UPSERT_MCP_TOKEN: MCP_TOKEN });
      try {
        const none = await fetch(guarded.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
        expect(none.status).toBe(401);
        await expect(httpClient(guarded.url, 'no-token')).rejects.toThrow();
        await expect(httpClient(guarded.url, 'wrong-token', { authorization: 'Bearer mcp-test-token-wrong-000000' })).rejects.toThrow();
        const ok = await httpClient(guarded.url, 'token-agent', { authorization: `Bearer ${MCP_TOKEN}` });
        expect((await ok.listTools()).tools).toHaveLength(hubspotReads() ? 6 : 5);
        await ok.close();
      } finally {
        guarded.cli.child.kill('SIGTERM');
        const done = await guarded.cli.done;
        expect(`${done.stdout}${done.stderr}`).not.toContain(MCP_TOKEN);
        expect(done.stderr).toContain('bearer token required');
      }
    });
  });
});
