/** The built `crm-upsert mcp` spawned as a real server, and the SDK's real clients connected to it. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Readable } from 'node:stream';
import { BIN, cliEnv, spawnCli, waitFor, type SpawnedCli } from '../cli/helpers.js';

export const CRM_TOKEN = 'pat-na1-mcp-spawned-0000';

const envFor = (extra: Record<string, string>) =>
  Object.fromEntries(Object.entries(cliEnv({ HUBSPOT_ACCESS_TOKEN: CRM_TOKEN, ...extra })).filter((e): e is [string, string] => e[1] !== undefined));

export interface StdioServer {
  client: Client;
  transport: StdioClientTransport;
  stderr(): string;
}

/** `crm-upsert mcp --config PATH` spawned by the SDK's stdio client transport, as an MCP client host does. */
export async function stdioServer(config: string, clientName: string, extraEnv: Record<string, string> = {}): Promise<StdioServer> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--config', config], env: envFor(extraEnv), stderr: 'pipe' });
  let stderr = '';
  (transport.stderr as Readable).on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

export interface HttpServer {
  url: string;
  cli: SpawnedCli;
  stdout(): string;
}

/** `crm-upsert mcp --http 0` spawned; resolves once it printed its URL. */
export async function httpServer(args: string[], extraEnv: Record<string, string> = {}): Promise<HttpServer> {
  const cli = spawnCli(['mcp', ...args], { env: { HUBSPOT_ACCESS_TOKEN: CRM_TOKEN, ...extraEnv } });
  let out = '';
  let exited = false;
  cli.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  cli.child.on('exit', () => (exited = true));
  await waitFor(() => out.includes('\n') || exited, 20_000);
  if (!out.includes('\n')) throw new Error(`mcp --http exited before serving: ${(await cli.done).stderr}`);
  const { url } = JSON.parse(out.split('\n')[0]!) as { url: string };
  return { url, cli, stdout: () => out };
}

export async function httpClient(url: string, clientName: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}
