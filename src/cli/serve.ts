/**
 * `crm-upsert serve`: the webhook receiver. Verifies each delivery with its source's verifier,
 * adds its events to the BullMQ queue (`queue` section) and acknowledges only then; `crm-upsert
 * worker` runs them. SIGINT / SIGTERM stop accepting connections, let the requests in flight
 * finish, then close the queue connection.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { redact } from '../errors.js';
import { isMissingPackage } from '../optional-package.js';
import { defaultQueueName } from '../queue/jobs.js';
import { loadConfig } from './config.js';
import { ExitCode, UsageError } from './exit.js';

export interface ServeFlags {
  config: string;
  host?: string;
  port?: number;
}

/** How long to wait for Redis at startup, and for the requests in flight at shutdown. */
const READY_TIMEOUT_MS = 10_000;
const DRAIN_TIMEOUT_MS = 10_000;

/** The optional packages `serve` loads (standardwebhooks only when a source uses it). */
const SERVE_PEERS = ['hono', '@hono/node-server', 'bullmq', 'ioredis'];

async function loadPeers() {
  try {
    // bullmq and ioredis too, which the queue sink would load only at its first use: a missing one is this message, not an unreachable Redis.
    const [hooks, node] = await Promise.all([import('../webhooks/api.js'), import('@hono/node-server'), import('bullmq'), import('ioredis')]);
    return { ...hooks, serve: node.serve };
  } catch (err) {
    if (SERVE_PEERS.some((name) => isMissingPackage(err, name))) {
      throw new UsageError('crm-upsert serve needs hono, @hono/node-server, bullmq and ioredis: npm install hono @hono/node-server bullmq ioredis');
    }
    throw err;
  }
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolveListen, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL') {
        reject(new UsageError(`cannot listen on ${host}:${port} (${err.code}): pick another --port or --host`));
      } else reject(err);
    });
    server.once('listening', () => resolveListen(server.address() as AddressInfo));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
    // A keep-alive connection whose request finishes after close() would otherwise idle until
    // its keep-alive timeout.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearTimeout(force);
      clearInterval(idle);
      resolveClose();
    });
    server.closeIdleConnections();
  });
}

/** One stderr line per refusal, at most 10 a second (a flood of bad requests must not flood the log). */
function refusalLog(): (r: { source: string; status: number; reason: string }) => void {
  let second = 0;
  let written = 0;
  let dropped = 0;
  return ({ source, status, reason }) => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      if (dropped > 0) process.stderr.write(`crm-upsert: ${dropped} more refusals not shown\n`);
      second = now;
      written = 0;
      dropped = 0;
    }
    // The source name comes from the URL: no control characters from it reach the log.
    const printable = (text: string) => [...text.slice(0, 200)].map((ch) => (ch < ' ' || ch === '\u007f' ? '?' : ch)).join('');
    if (written++ < 10) process.stderr.write(`crm-upsert: ${status} on ${printable(source)}: ${printable(redact(reason))}\n`);
    else dropped += 1;
  };
}

export async function serveCommand(flags: ServeFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  if (!config.webhooks) throw new UsageError(`config file ${flags.config} has no webhooks section: add webhooks.sources (see docs/webhooks.md)`);
  if (!config.queue) throw new UsageError(`config file ${flags.config} has no queue section: add queue.url, the Redis the receiver enqueues to`);
  const host = flags.host ?? config.webhooks.host;
  const peers = await loadPeers();
  const sources = peers.sourcesFromConfig(config.webhooks, { host });
  const queueName = config.queue.name ?? defaultQueueName(config.crm);
  const sink = peers.eventQueue({ url: config.queue.url, name: queueName, prefix: config.queue.prefix, attempts: config.queue.attempts, backoff: config.queue.backoff, keepCompletedSeconds: config.queue.keepCompletedSeconds });
  const stopped = new Promise<NodeJS.Signals>((resolveSignal) => {
    const handler = (signal: NodeJS.Signals) => {
      process.on(signal, () => process.exit(signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm));
      resolveSignal(signal);
    };
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
  });
  try {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([sink.ready(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS)))]).finally(() => clearTimeout(timer));
  } catch (err) {
    await sink.close();
    process.stderr.write(`crm-upsert: cannot reach the queue's Redis at ${redact(config.queue.url)}: ${redact((err as Error).message)}\n`);
    return ExitCode.infra;
  }
  const hooks = peers.webhookApp({ sources, sink, maxBodyBytes: config.webhooks.maxBodyBytes, onRefused: refusalLog() });
  const server = peers.serve({ fetch: hooks.app.fetch, hostname: host, port: flags.port ?? config.webhooks.port }) as Server;
  let address: AddressInfo;
  try {
    address = await listen(server, host, flags.port ?? config.webhooks.port);
  } catch (err) {
    await sink.close();
    throw err;
  }
  const origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const urls = Object.fromEntries(Object.keys(sources).map((name) => [name, `${origin}/hooks/${name}`]));
  process.stdout.write(`${JSON.stringify({ url: origin, queue: queueName, sources: urls })}\n`);
  process.stderr.write(`crm-upsert: receiving webhooks on ${origin}, enqueuing to ${queueName}\n`);
  for (const [name, url] of Object.entries(urls)) process.stderr.write(`  ${config.webhooks.sources[name]!.verify.kind.padEnd(17)} POST ${url}\n`);
  const signal = await stopped;
  process.stderr.write(`crm-upsert: ${signal}: finishing the requests in flight, then stopping (send again to exit now)\n`);
  await closeServer(server);
  await sink.close();
  const s = hooks.stats();
  process.stderr.write(`crm-upsert: stopped: ${s.accepted} deliveries accepted (${s.events} events), refused ${s.unauthorized} 401, ${s.badRequest} 400, ${s.tooLarge} 413, ${s.unknownSource} 404, ${s.unavailable} 503\n`);
  return signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm;
}
