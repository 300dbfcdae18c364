/**
 * `crm-upsert mcp [--config PATH] [--ledger URL] [--http PORT] [--host H]`: the MCP server on the
 * engine the config describes. stdio by default (stdout is the protocol: every diagnostic goes to
 * stderr); Streamable HTTP with --http, on 127.0.0.1 unless --host says otherwise, and then only
 * with a bearer token from CRM_UPSERT_MCP_TOKEN. Runs until the client closes stdin (exit 0) or a
 * signal (130 / 143); calls in flight are let finish first.
 */
import { InvalidArgumentError } from 'commander';
import { isMissingPackage } from '../optional-package.js';
import { createSync, type Sync } from '../engine/index.js';
import { ConfigError, plainMessage, redact } from '../errors.js';
import { buildAdapter, engineSettings, ledgerUrl, loadConfig, openConfigLedger, type Config } from './config.js';
import { adapterReads } from '../adapter.js';
import { ExitCode, UsageError } from './exit.js';
import { checkLedgerTarget } from './preflight.js';
import { vendorOf } from './vendors.js';
import { settleWithin } from './sync.js';

/** The environment variable holding the HTTP bearer token. */
export const MCP_TOKEN_ENV = 'CRM_UPSERT_MCP_TOKEN';
/** How long a stop waits for tool calls in flight, ms. */
const DRAIN_MS = 10_000;

export interface McpFlags {
  /** Config file. Default crm-upsert.config.json. */
  config: string;
  /** Ledger URL; overrides the config's. */
  ledger?: string;
  /** Serve Streamable HTTP on this port (0: a free one). Default: stdio. */
  http?: number;
  /** With `http`: the address to bind. Default 127.0.0.1. */
  host?: string;
}

/** `--http` takes 0 (a free port) to 65535. */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('must be a port number (0-65535; 0 picks a free one).');
  return n;
}

type McpEntry = typeof import('../mcp/api.js');

async function loadMcp(): Promise<McpEntry> {
  try {
    return await import('../mcp/api.js');
  } catch (err) {
    if (isMissingPackage(err, '@modelcontextprotocol/sdk')) throw new UsageError('crm-upsert mcp needs @modelcontextprotocol/sdk (^1.32.2): npm install @modelcontextprotocol/sdk@^1.32.2');
    throw err;
  }
}

/**
 * The engine the config describes. Not `openSync`: its adapter breaker suits one run (after a
 * refused token or an unreachable CRM the run stops), while a server lives on and must recover
 * once the CRM answers again.
 */
async function openEngine(config: Config, flags: McpFlags, env: NodeJS.ProcessEnv): Promise<{ sync: Sync; inFlight: () => number }> {
  const adapter = await buildAdapter(config, env);
  const inner = createSync({ adapter, ledger: openConfigLedger(config, flags.ledger), ...engineSettings(config) });
  let running = 0;
  const apply: Sync['apply'] = async (action) => {
    running += 1;
    try {
      return await inner.apply(action);
    } finally {
      running -= 1;
    }
  };
  return { sync: { ...inner, apply }, inFlight: () => running };
}

async function drain(inFlight: () => number): Promise<void> {
  const deadline = Date.now() + DRAIN_MS;
  while (inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** Resolves with the signal that asked the server to stop. */
function signalled(): { received: Promise<NodeJS.Signals>; dispose(): void } {
  let onSignal!: (s: NodeJS.Signals) => void;
  const received = new Promise<NodeJS.Signals>((resolve) => (onSignal = resolve));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { received, dispose: () => (process.off('SIGINT', onSignal), process.off('SIGTERM', onSignal)) };
}

const exitFor = (signal: NodeJS.Signals | undefined) => (signal === 'SIGINT' ? ExitCode.sigint : signal === 'SIGTERM' ? ExitCode.sigterm : ExitCode.ok);

export async function mcpCommand(flags: McpFlags, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const http = flags.http !== undefined;
  if (flags.host !== undefined && !http) throw new UsageError('--host is for --http PORT (stdio has no address)');
  if (!http) {
    // stdout carries the protocol: whatever a dependency prints there would corrupt it.
    console.log = console.info = console.debug = console.error;
  }
  const mcp = await loadMcp();
  const host = flags.host ?? '127.0.0.1';
  const token = env[MCP_TOKEN_ENV] || undefined;
  if (http && !mcp.isLoopback(host) && !token) {
    throw new UsageError(`--host ${host} is not a loopback address: set ${MCP_TOKEN_ENV} to the bearer token clients must send (refusing to serve CRM writes without one)`);
  }
  if (token !== undefined && token.length < mcp.MIN_TOKEN_LENGTH) throw new UsageError(`${MCP_TOKEN_ENV} is too short: use at least ${mcp.MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`);
  const config = await loadConfig(flags.config);
  const url = ledgerUrl(config, flags.ledger);
  checkLedgerTarget(url);
  const { sync, inFlight } = await openEngine(config, flags, env);
  const crmName = vendorOf(config.crm).label;
  const factory = () => mcp.createMcpServer({ sync, dedupeWindowMs: config.dedupeWindowMs, crmName });
  const reads = adapterReads(sync.adapter);
  const tools = [
    ...mcp.toolSpecs(sync.adapter.objects, { crm: crmName, windowMs: config.dedupeWindowMs }).map((t) => t.name),
    ...mcp.readToolSpecs(sync.adapter.objects, { crm: crmName, reads }).map((t) => t.name),
  ];
  const stop = signalled();
  let signal: NodeJS.Signals | undefined;
  try {
    const what = `tools ${[...tools, 'get_outcome'].join(', ')}; crm ${config.crm}, ledger ${redact(url)}`;
    if (http) {
      let served: Awaited<ReturnType<McpEntry['serveMcpHttp']>>;
      try {
        served = await mcp.serveMcpHttp({ createServer: factory, port: flags.http!, host, ...(token ? { token } : {}) });
      } catch (err) {
        if (err instanceof ConfigError) throw new UsageError(plainMessage(err));
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new UsageError(`--http ${flags.http} --host ${host}: cannot listen (${code})`);
        throw err;
      }
      process.stdout.write(`${JSON.stringify({ url: served.url, transport: 'streamable-http' })}\n`);
      process.stderr.write(`crm-upsert mcp: serving ${served.url} (Streamable HTTP${token ? ', bearer token required' : ', loopback only'}; ${what})\n`);
      signal = await stop.received;
      await drain(inFlight);
      await served.close();
    } else {
      const session = await mcp.serveMcpStdio(factory());
      process.stderr.write(`crm-upsert mcp: serving over stdio (${what})\n`);
      signal = await Promise.race([stop.received, session.closed.then(() => undefined)]);
      await drain(inFlight);
      await session.close();
    }
    if (signal) process.stderr.write(`crm-upsert mcp: ${signal}: stopped\n`);
    return exitFor(signal);
  } finally {
    stop.dispose();
    await settleWithin(sync.close(), 5_000);
  }
}
