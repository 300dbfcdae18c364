/**
 * The read tools over the real fronts: a server spawned over stdio by the SDK's
 * StdioClientTransport (read-server.ts on the seeded memory CRM), and serveMcpHttp in process with
 * a bearer token, the SDK's StreamableHTTPClientTransport connected to it. The HTTP front keeps its
 * token and origin rules for reads: a read without the token, or from a foreign origin, is refused
 * before the CRM is asked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer, serveMcpHttp, type McpHttpServer } from '../../src/mcp/index.js';
import { ROOT } from '../cli/helpers.js';
import { call } from './helpers.js';
import { seededCrm, type Seeded } from './read-fixture.js';

const READ_SERVER = fileURLToPath(new URL('./read-server.ts', import.meta.url));
const MCP_TOKEN = 'mcp-read-token-3c9a71e0d24b5f86';

/** The read scenario every front must pass: list, describe, get by lookup, get with links, a refused read, a rejected write. */
async function readScenario(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  const get = tools.find((t) => t.name === 'get_contact');
  expect(get?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: true });
  expect(get?.outputSchema?.properties).toHaveProperty('records');
  expect(tools.find((t) => t.name === 'describe_contact')?.annotations?.readOnlyHint).toBe(true);

  const described = await call(client, 'describe_contact', {});
  const stage = (described.structured.fields as { name: string; allowed?: string[] }[]).find((f) => f.name === 'lifecyclestage');
  expect(stage?.allowed).toEqual(['lead', 'customer', 'subscriber']);

  const byEmail = await call(client, 'get_contact', { email: 'ana@example.com' });
  expect(byEmail.structured.records).toEqual([{
    id: 'ana@example.com', found: true, recordId: expect.any(String), externalId: 'c-1',
    fields: { email: 'ana@example.com', firstname: 'Ana', lastname: null, lifecyclestage: 'lead', hs_lead_status: 'OPEN' },
  }]);

  const deal = await call(client, 'get_deal', { externalIds: ['d-1'], links: true });
  expect(deal.structured.records).toEqual([expect.objectContaining({
    fields: { dealname: 'Acme renewal', amount: 12000, hubspot_owner_id: '777' },
    links: [{ object: 'company', recordId: expect.any(String), externalId: 'co-1' }],
  })]);
  expect(JSON.stringify(deal.result)).not.toContain('secret_margin');

  const twoLookups = await call(client, 'get_contact', { externalId: 'c-1', email: 'ana@example.com' });
  expect(twoLookups.result.isError).toBe(true);
  expect(twoLookups.structured.problems).toEqual([{ path: 'email', field: 'email', reason: expect.stringContaining('give exactly one of externalId, externalIds, email') }]);

  const rejected = await call(client, 'upsert_contact', { externalId: 'c-front', fields: { lifecyclestage: 'Prospect' }, idempotencyKey: 'front-k1' });
  expect(rejected.result.isError).toBe(true);
  expect(rejected.structured.problems).toEqual([{ path: 'fields.lifecyclestage', field: 'lifecyclestage', reason: expect.stringContaining('"Prospect" is not an allowed value'), allowed: ['lead', 'customer', 'subscriber'] }]);
}

describe('read tools over stdio (spawned)', () => {
  let client: Client;
  let stderr = '';

  beforeAll(async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', READ_SERVER], cwd: ROOT, stderr: 'pipe' });
    (transport.stderr as Readable).on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'stdio-reader', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client.close();
  });

  it('describes, reads and rejects with problems', async () => {
    await readScenario(client);
    expect(stderr).not.toContain('internal_score');
  });
});

describe('read tools over Streamable HTTP', () => {
  let seeded: Seeded;
  let http: McpHttpServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    seeded = await seededCrm();
    http = await serveMcpHttp({ createServer: () => createMcpServer({ sync: seeded.sync }), port: 0, token: MCP_TOKEN });
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await http.close();
    await seeded.sync.close();
  });

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'http-reader', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  it('describes, reads and rejects with problems, given the token', async () => {
    await readScenario(await connect({ authorization: `Bearer ${MCP_TOKEN}` }));
  });

  it('refuses a client without the token before it can list or read', async () => {
    await expect(connect({})).rejects.toThrow(/401|Unauthorized/);
  });

  it('refuses a read call without the token, or from a foreign origin, even inside an open session: the CRM is not asked', async () => {
    const open = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${MCP_TOKEN}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(open.status).toBe(200);
    const session = open.headers.get('mcp-session-id')!;
    await open.body?.cancel();
    const readCall = (headers: Record<string, string>) =>
      fetch(http.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_contact', arguments: { externalId: 'c-1' } } }),
      });
    const before = seeded.crm.calls.read;
    const noToken = await readCall({});
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get('www-authenticate')).toBe('Bearer');
    expect(await noToken.text()).not.toContain('Ana');
    const wrongToken = await readCall({ authorization: 'Bearer mcp-read-token-wrong-000000000' });
    expect(wrongToken.status).toBe(401);
    const foreign = await readCall({ authorization: `Bearer ${MCP_TOKEN}`, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(seeded.crm.calls.read).toBe(before);
    const allowed = await readCall({ authorization: `Bearer ${MCP_TOKEN}` });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('"firstname":"Ana"');
    expect(seeded.crm.calls.read).toBe(before + 1);
  });
});
