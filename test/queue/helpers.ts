/**
 * Helpers for the queue tests: a unique queue (name and BullMQ prefix) and Redis ledger prefix per
 * test, removed afterwards; event jobs as the webhook receiver adds them; counting model calls.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { EVENT_JOB, eventJobId, type EventJobData } from '../../src/queue/jobs.js';
import type { QueueTarget } from '../../src/queue/target.js';
import { runId } from '../helpers/services.js';

export const HANDLER = join(import.meta.dirname, 'fixtures', 'ticket-handler.mjs');

export interface TestQueue {
  target: QueueTarget;
  queue: Queue;
  /** A Redis ledger URL under this test's own key prefix. */
  ledgerUrl: string;
  /** Obliterate the queue and delete the ledger's keys. */
  drop(): Promise<void>;
}

/** Obliterate a queue and delete every Redis key under `patterns` (its prefix, a ledger's keys). */
export async function dropQueue(redis: string, queue: Queue, patterns: readonly string[]): Promise<void> {
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  const c = new Redis(redis);
  for (const pattern of patterns) {
    for (let cursor = '0'; ;) {
      const [next, keys] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
      if (keys.length > 0) await c.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  }
  await c.quit();
}

export function testQueue(redis: string): TestQueue {
  const id = runId();
  const target: QueueTarget = { url: redis, name: `q-${id}`, prefix: `bq-${id}` };
  const queue = new Queue(target.name, { connection: { url: redis }, prefix: target.prefix! });
  const keyPrefix = `lq-${id}:`;
  const ledger = new URL(redis);
  ledger.searchParams.set('keyPrefix', keyPrefix);
  return {
    target,
    queue,
    ledgerUrl: ledger.toString(),
    drop: () => dropQueue(redis, queue, [`${keyPrefix}*`, `${target.prefix}:*`]),
  };
}

/** The event job of ticket `n`, as the receiver enqueues it. */
export function ticketEvent(n: number, payload: Record<string, unknown> = {}): EventJobData {
  return { v: 1, source: 'tickets', eventId: `evt-${n}`, occurredAt: '2026-11-28T10:00:00Z', receivedAt: '2026-11-28T10:00:01Z', payload: { ticket: n, ...payload } };
}

/** Add event jobs with their idempotency-key job id (a duplicate delivery adds nothing). */
export async function addEvents(queue: Queue, events: readonly EventJobData[], opts: { attempts?: number; backoff?: { type: 'fixed' | 'exponential'; delay: number } } = {}): Promise<void> {
  await queue.addBulk(events.map((e) => ({ name: EVENT_JOB, data: e, opts: { jobId: eventJobId(e), attempts: opts.attempts ?? 5, backoff: opts.backoff ?? { type: 'fixed', delay: 100 } } })));
}

/** Model calls per event id, from the handler's $MODEL_CALLS_FILE. */
export function modelCalls(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const id of readFileSync(file, 'utf8').split('\n').filter(Boolean)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** Wait until the queue has no job left to run (waiting, active, delayed, prioritized, waiting-children). */
export async function drained(queue: Queue, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    if (Object.values(c).every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`queue not drained: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface WorkerProcess {
  child: import('node:child_process').ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once the worker printed its ready line. */
  ready: Promise<void>;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawn `crm-upsert worker --config CONFIG` (the built bin), resolving `ready` on its ready line. */
export async function spawnWorker(config: string, env: Record<string, string>, args: string[] = []): Promise<WorkerProcess> {
  const { spawn } = await import('node:child_process');
  const { BIN, cliEnv } = await import('../cli/helpers.js');
  const child = spawn(process.execPath, [BIN, 'worker', '--config', config, ...args], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let markReady!: () => void;
  let fail!: (e: Error) => void;
  const ready = new Promise<void>((resolve, reject) => ((markReady = resolve), (fail = reject)));
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('"status":"ready"')) markReady();
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      fail(new Error(`worker exited before ready (${code ?? signal}): ${err}`));
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, ready, done };
}

/** The config of a worker test: a fake HubSpot, this test's Redis ledger and queue, the ticket handler. */
export function queueConfigExtra(tq: TestQueue, queue: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ledger: tq.ledgerUrl,
    leaseMs: 10_000,
    queue: { url: tq.target.url, name: tq.target.name, prefix: tq.target.prefix, lockDurationMs: 2_000, stalledIntervalMs: 1_000, inFlightDelayMs: 200, backoff: { type: 'fixed', delayMs: 200 }, ...queue },
    webhooks: { sources: { tickets: { verify: { kind: 'none', eventIdPointer: '/ticket' }, handler: HANDLER } } },
  };
}
