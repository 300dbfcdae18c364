/**
 * serveMcpHttp in process: sessions a client never ends are closed after `sessionIdleMs` (the
 * client's next request gets 404 and it initializes again), and an initialize past `maxSessions`
 * gets 503 with Retry-After instead of another server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sync } from '../../src/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { createMcpServer, serveMcpHttp, type McpHttpServer } from '../../src/mcp/index.js';
import { memoryCrm } from '../helpers/memory-crm.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('serveMcpHttp sessions', () => {
  let served: McpHttpServer | undefined;
  let sync: Sync | undefined;
  const clients: Client[] = [];

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    await served?.close();
    await sync?.close();
  });

  async function start(options: { sessionIdleMs?: number; maxSessions?: number }, crm = memoryCrm()): Promise<McpHttpServer> {
    sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:') });
    const engine = sync;
    served = await serveMcpHttp({ createServer: () => createMcpServer({ sync: engine }), port: 0, ...options });
    return served;
  }

  async function connect(url: string): Promise<Client> {
    const client = new Client({ name: 'session-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    clients.push(client);
    return client;
  }

  it('closes a session left idle, and its client gets 404 until it initializes again', async () => {
    const http = await start({ sessionIdleMs: 400 });
    const client = await connect(http.url);
    await client.ping();
    expect(http.sessions()).toBe(1);
    await sleep(1_200);
    expect(http.sessions()).toBe(0);
    await expect(client.ping()).rejects.toThrow(/404|Session not found/);
    const again = await connect(http.url);
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    expect(http.sessions()).toBe(1);
  });

  it('keeps a session that is used', async () => {
    const http = await start({ sessionIdleMs: 300 });
    const client = await connect(http.url);
    for (let i = 0; i < 6; i++) {
      await client.ping();
      await sleep(100);
    }
    expect(http.sessions()).toBe(1);
  });

  it('keeps a session whose call outlasts the idle time, and counts idle time from the call\'s end', async () => {
    const crm = memoryCrm({ latencyMs: 900 });
    const http = await start({ sessionIdleMs: 300 }, crm);
    const client = await connect(http.url);
    const read = (await client.callTool({ name: 'get_contact', arguments: { externalId: 'c-1' } })) as { isError?: boolean; structuredContent?: unknown };
    expect(read.isError).toBeUndefined();
    expect(read.structuredContent).toEqual({ records: [{ id: 'c-1', found: false }] });
    expect(crm.calls.read).toBe(1);
    await client.ping();
    expect(http.sessions()).toBe(1);
  });

  it('answers 503 with Retry-After to an initialize past maxSessions', async () => {
    const http = await start({ maxSessions: 2 });
    await connect(http.url);
    await connect(http.url);
    const res = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'third', version: '1' } } }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(http.sessions()).toBe(2);
  });
});
