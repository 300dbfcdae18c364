/**
 * Serving MCP over Streamable HTTP (the SDK's StreamableHTTPServerTransport) on node:http, one
 * McpServer per session: a server holds one transport, and each session's client name scopes its
 * idempotency keys. On a loopback address the Host and Origin headers must be loopback too (DNS
 * rebinding); on any other address every request must carry the bearer token, and the server
 * refuses to start without one.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, redact, registerSecret } from '../errors.js';

export interface McpHttpOptions {
  /** A new server for each session (`() => createMcpServer({ sync })`). */
  createServer: () => McpServer;
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** Address to bind. Default 127.0.0.1. Anything but a loopback address needs `token`. */
  host?: string;
  /** Bearer token every request must send (`Authorization: Bearer <token>`), at least 16 characters. Default none (loopback only). */
  token?: string;
  /** The endpoint's path. Default /mcp. */
  path?: string;
  /** Largest request body read, bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** A session without a request for this long is closed (its client gets 404 and initializes again). Default 30 minutes. */
  sessionIdleMs?: number;
  /** Sessions open at once; an initialize beyond it gets 503 with Retry-After. Default 1,000. */
  maxSessions?: number;
}

export interface McpHttpServer {
  /** The endpoint clients connect to, e.g. http://127.0.0.1:3333/mcp. */
  readonly url: string;
  readonly port: number;
  /** Open sessions. */
  sessions(): number;
  /** Close every session and stop listening. */
  close(): Promise<void>;
}

export const MIN_TOKEN_LENGTH = 16;
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True for addresses only this machine can reach. */
export const isLoopback = (host: string): boolean => LOOPBACK_NAMES.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host);

const digest = (s: string) => createHash('sha256').update(s).digest();

function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJson(req: IncomingMessage, limit: number): Promise<{ ok: true; body: unknown } | { ok: false; status: number; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return { ok: false, status: 413, message: `request body over ${limit} bytes` };
    chunks.push(chunk);
  }
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON' };
  }
}

/** Host/Origin of a loopback-bound server must name loopback: a web page's DNS-rebound name is refused. */
function loopbackRequest(req: IncomingMessage): boolean {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!isLoopback(host)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return isLoopback(new URL(origin).hostname);
  } catch {
    return false;
  }
}

export async function serveMcpHttp(options: McpHttpOptions): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const limit = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const { token } = options;
  const loopback = isLoopback(host);
  if (!loopback && !token) throw new ConfigError(`${host} is not a loopback address: serving CRM writes there needs a bearer token (refusing to start without one)`);
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) throw new ConfigError(`the bearer token is ${token.length} characters; use at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`);
  registerSecret(token);
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 1_000;
  // `calls`: POST requests of the session still being answered; `seen`: when the last one started or ended.
  const sessions = new Map<string, { server: McpServer; transport: StreamableHTTPServerTransport; seen: number; calls: number }>();
  // A client that never ends its session must not hold a server (and its engine handles) forever.
  const sweeper = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const [id, session] of sessions) {
      if (session.seen >= cutoff || session.calls > 0) continue;
      sessions.delete(id);
      void session.server.close().catch(() => undefined);
    }
  }, Math.max(10, Math.min(idleMs / 2, 60_000)));
  sweeper.unref();

  async function open(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const read = await readJson(req, limit);
    if (!read.ok) return sendJsonRpcError(res, read.status, -32700, read.message);
    if (!isInitializeRequest(read.body)) return sendJsonRpcError(res, 400, -32000, 'Bad Request: no valid session id (send initialize first)');
    if (sessions.size >= maxSessions) return sendJsonRpcError(res, 503, -32000, `Service Unavailable: ${maxSessions} sessions are open; retry later`, { 'retry-after': '5' });
    const server = options.createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { server, transport, seen: Date.now(), calls: 0 }),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await server.connect(transport);
    server.server.onclose = () => void (transport.sessionId && sessions.delete(transport.sessionId));
    await transport.handleRequest(req, res, read.body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://x').pathname !== path) return sendJsonRpcError(res, 404, -32000, `not found: the MCP endpoint is ${path}`);
    if (loopback && !loopbackRequest(req)) return sendJsonRpcError(res, 403, -32000, 'Forbidden: Host and Origin must be loopback');
    if (expected) {
      const given = digest((req.headers.authorization ?? '').replace(/^bearer\s+/i, 'Bearer '));
      if (!timingSafeEqual(given, expected)) return sendJsonRpcError(res, 401, -32001, 'Unauthorized: send Authorization: Bearer <token>', { 'www-authenticate': 'Bearer' });
    }
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id);
      if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found: initialize again');
      session.seen = Date.now();
      // A call still being answered (a slow CRM read) is not idleness, and idle time counts from its
      // end. A GET (the client's standing event stream) does not count: it stays open while idle.
      if (req.method === 'POST') {
        session.calls += 1;
        res.once('close', () => {
          session.calls -= 1;
          session.seen = Date.now();
        });
      }
      return session.transport.handleRequest(req, res);
    }
    if (req.method === 'POST') return open(req, res);
    return sendJsonRpcError(res, 400, -32000, 'Bad Request: no valid session id');
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      process.stderr.write(`crm-upsert mcp: ${redact(err instanceof Error ? err.message : String(err))}\n`);
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${path}`,
    port,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      await Promise.allSettled([...sessions.values()].map((s) => s.server.close()));
      sessions.clear();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        // Open SSE streams would hold close() forever.
        http.closeAllConnections();
      });
    },
  };
}
