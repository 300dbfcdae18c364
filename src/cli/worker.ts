/**
 * `crm-upsert worker [--config PATH] [--ledger URL] [--concurrency N]`: consume the config's
 * queue until SIGTERM / SIGINT. Event jobs run through their source's handler module
 * (`webhooks.sources.<name>.handler`, relative to the config file), chunk jobs of
 * `sync --queue` through applyMany. A signal drains for at most `queue.drainSeconds`: no new job
 * starts, the running ones finish; then the connections are closed whatever is left, and the
 * worker prints its summary and exits 143 (SIGTERM) or 130 (SIGINT), also when the queue's Redis
 * is gone. A second signal exits at once. Jobs it did not finish go back to the queue once their
 * lock expires, and replay from the ledger.
 *
 * When the CRM refuses the token (401/403), every job would fail alike and spend its attempts:
 * the worker sends nothing more, puts the jobs it is running back on the queue (delayed, no
 * attempt spent), and exits 2 naming the token's variable.
 */
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSync } from '../engine/index.js';
import { redact } from '../errors.js';
import { watchRateLimits } from '../queue/rate-limits.js';
import type { EventHandler } from '../queue/run-event.js';
import { startWorker, type QueueWorker } from '../queue/worker.js';
import { guardAdapter } from './adapter-guard.js';
import { authFix } from './auth-hint.js';
import { buildAdapter, engineSettings, loadConfig, openConfigLedger, type Config } from './config.js';
import { ExitCode, UsageError } from './exit.js';
import { queueSettings, queueTarget } from './queue.js';
import { preflight, settleWithin } from './sync.js';

export interface WorkerFlags {
  config: string;
  ledger?: string;
  concurrency?: number;
}

/** Import every source's handler module; a missing module or one without a default function is a usage error. */
export async function loadHandlers(config: Config, configPath: string): Promise<Record<string, EventHandler>> {
  const handlers: Record<string, EventHandler> = {};
  for (const [name, source] of Object.entries(config.webhooks?.sources ?? {})) {
    const path = resolve(dirname(resolve(configPath)), source.handler);
    let mod: { default?: unknown };
    try {
      mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (err) {
      throw new UsageError(`webhooks.sources.${name}.handler: cannot load ${path}: ${(err as Error).message}`);
    }
    if (typeof mod.default !== 'function') throw new UsageError(`webhooks.sources.${name}.handler: ${path} has no default export function (async (event, ctx) => actions)`);
    handlers[name] = mod.default as EventHandler;
  }
  return handlers;
}

const READY_TIMEOUT_MS = 10_000;
/** Longest wait for the sync (ledger, CRM client) to close after a stop that did not drain, ms. */
const CLOSE_AFTER_FORCED_MS = 1_000;

function waitForSignal(onSecond: (code: number) => void): { signal: Promise<NodeJS.Signals>; dispose(): void } {
  let got: NodeJS.Signals | undefined;
  let resolveSignal!: (s: NodeJS.Signals) => void;
  const signal = new Promise<NodeJS.Signals>((r) => (resolveSignal = r));
  const handler = (s: NodeJS.Signals) => {
    if (got) return onSecond(s === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm);
    got = s;
    resolveSignal(s);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return { signal, dispose: () => (process.off('SIGINT', handler), process.off('SIGTERM', handler)) };
}

type Stop = { kind: 'signal'; signal: NodeJS.Signals; ready: boolean } | { kind: 'auth'; message: string } | { kind: 'unready' };

/** What ends the run: a signal (also one before the worker is ready), a refused token, or a Redis that never answered. */
async function nextStop(qw: QueueWorker, signal: Promise<NodeJS.Signals>, authStop: Promise<string>, onReady: () => void): Promise<Stop> {
  let timer: NodeJS.Timeout | undefined;
  const first = await Promise.race([
    qw.ready().then(() => 'ready' as const),
    new Promise<'unready'>((r) => (timer = setTimeout(() => r('unready'), READY_TIMEOUT_MS))),
    signal.then((s) => ({ kind: 'signal' as const, signal: s, ready: false })),
  ]);
  clearTimeout(timer);
  if (first !== 'ready') return first === 'unready' ? { kind: 'unready' } : first;
  onReady();
  return await Promise.race([
    signal.then((s) => ({ kind: 'signal' as const, signal: s, ready: true })),
    authStop.then((message) => ({ kind: 'auth' as const, message })),
  ]);
}

export async function workerCommand(flags: WorkerFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  const settings = queueSettings(config, undefined, 'worker');
  const target = queueTarget(config, settings);
  const handlers = await loadHandlers(config, flags.config);
  await preflight(config, flags);
  let refused!: (message: string) => void;
  const authStop = new Promise<string>((r) => (refused = r));
  // Only the token trips it: an unreachable CRM is left to the outage rule (queue.outage) and BullMQ's retries.
  const guard = guardAdapter(await buildAdapter(config), { unreachableAfter: Number.POSITIVE_INFINITY, onTrip: (_, error) => refused(authFix(config, error)) });
  const watch = watchRateLimits(guard.adapter);
  const engine = engineSettings(config);
  const { leaseMs } = engine;
  const sync = createSync({ adapter: watch.adapter, ledger: openConfigLedger(config, flags.ledger), ...engine });
  const concurrency = flags.concurrency ?? settings.concurrency;
  const signals = waitForSignal((code) => process.exit(code));
  const started = Date.now();
  const qw = startWorker({
    sync, queue: target, handlers, concurrency, lingerMs: settings.lingerMs, maxBatchActions: settings.maxBatchActions, leaseMs,
    inFlightDelayMs: settings.inFlightDelayMs, parentWaitMs: settings.parentWaitMs, lockDurationMs: settings.lockDurationMs, stalledIntervalMs: settings.stalledIntervalMs,
    rateLimits: watch, name: `crm-upsert-${process.pid}`, holdWhen: () => guard.tripped() !== undefined,
    outage: settings.outage,
    onOutagePause: (p) => process.stderr.write(`crm-upsert: the CRM did not answer ${p.unansweredJobs} jobs in a row (${p.reason}): pausing the queue ${Math.round(p.pauseMs / 100) / 10} s; the jobs go back to wait, no attempt spent\n`),
  });
  let drained: boolean | undefined;
  try {
    const stop = await nextStop(qw, signals.signal, authStop, () =>
      process.stdout.write(`${JSON.stringify({ command: 'worker', queue: target.name, concurrency, sources: Object.keys(handlers), status: 'ready' })}\n`));
    if (stop.kind === 'unready') {
      process.stderr.write(`crm-upsert: stopped by an infrastructure fault: the queue's Redis at ${redact(target.url)} did not answer within ${READY_TIMEOUT_MS / 1000} s\n`);
      return ExitCode.infra;
    }
    if (stop.kind === 'auth') process.stderr.write(`crm-upsert: stopped: ${stop.message}\ncrm-upsert: the jobs stay on the queue, no attempt spent: start the worker again with a valid token\n`);
    else process.stderr.write(`crm-upsert: ${stop.signal}: finishing the jobs in progress (at most ${settings.drainSeconds} s), then stopping (send again to exit now)\n`);
    // A worker that never got ready has no job to finish.
    drained = await qw.stop(stop.kind === 'signal' && !stop.ready ? 0 : settings.drainSeconds * 1_000);
    if (!drained && (stop.kind === 'auth' || stop.ready)) {
      process.stderr.write(`crm-upsert: the jobs in progress did not finish within ${settings.drainSeconds} s (queue.drainSeconds): closed the queue's connections; those jobs stay on the queue and run again once their lock expires, replaying from the ledger what they did\n`);
    }
    const [stopped, code] = stop.kind === 'auth' ? ['auth', ExitCode.usage] : [stop.signal, stop.signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm];
    process.stdout.write(`${JSON.stringify({ command: 'worker', queue: target.name, ...qw.stats(), stopped, drained, durationMs: Date.now() - started, exitCode: code })}\n`);
    return code;
  } finally {
    signals.dispose();
    drained ??= await qw.stop(0);
    await settleWithin(sync.close(), drained ? 5_000 : CLOSE_AFTER_FORCED_MS);
  }
}
