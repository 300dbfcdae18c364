/**
 * bench:webhooks — how fast the receiver acknowledges. The receiver (webhookApp on
 * @hono/node-server, its BullMQ sink on real Redis) runs in a child process; this process sends
 * HubSpot-v3-signed deliveries over loopback keep-alive connections:
 *
 *   1. open loop at `--rate` requests/s for `--seconds` (default 500/s for 10 s): acknowledgement
 *      latency p50/p99/max, measured from the moment each request was due (so a stalled
 *      receiver cannot hide queueing delay), target p99 <= 20 ms;
 *   2. closed loop, `--concurrency` requests in flight (default 32) for `--burst` requests:
 *      the most events/s the receiver durably enqueues.
 *
 * Deliveries carry 1 to 3 events; one in ten repeats an earlier one (deduplicated at enqueue).
 * The job count in the queue is checked against the distinct events sent.
 *
 *   npm run bench:webhooks
 *   npm run bench:webhooks -- --rate=1000 --seconds=5
 *   BENCH_REDIS=redis://10.0.0.2:6379 npm run bench:webhooks
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { eventQueue, hubspotV3Verifier, webhookApp } from '../src/webhooks/index.js';
import { hubspotBody, hubspotHeaders, post } from '../test/webhooks/hubspot-deliveries.js';
import { isMain, main, numberArg, round, seconds } from './lib.js';

const SECRET = 'bench-hubspot-app-secret';
const REDIS = process.env.BENCH_REDIS ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Child mode: serve the receiver until stdin closes; print `{ port }` once listening. */
async function receiver(name: string, prefix: string): Promise<void> {
  const sink = eventQueue({ url: REDIS, name, prefix });
  await sink.ready();
  const hooks = webhookApp({ sources: { hubspot: { verify: hubspotV3Verifier({ secret: SECRET }) } }, sink });
  // Time inside the receiver (request dispatched -> response ready), apart from socket and scheduling.
  const inside: number[] = [];
  // How long the receiver's event loop was blocked: the part of the tail no handler timer sees.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  const timed = async (req: Request, env: unknown) => {
    const t = performance.now();
    const res = await hooks.app.fetch(req, env);
    inside.push(performance.now() - t);
    return res;
  };
  const server = serve({ fetch: timed, hostname: '127.0.0.1', port: 0 }) as Server;
  await new Promise<void>((r) => server.once('listening', () => r()));
  loopDelay.enable();
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  process.stdin.resume();
  await new Promise<void>((r) => process.stdin.once('end', () => r()));
  server.close();
  await sink.close();
  inside.sort((a, b) => a - b);
  process.stdout.write(`${JSON.stringify({ ...hooks.stats(), insideP50Ms: round(percentile(inside, 50), 2), insideP99Ms: round(percentile(inside, 99), 2), loopDelayP99Ms: round(loopDelay.percentile(99) / 1e6, 2), loopDelayMaxMs: round(loopDelay.max / 1e6, 2) })}\n`);
  process.exit(0);
}

/** Deliveries of fresh events, each 1-3 of them; one in ten repeats an earlier delivery. */
function deliveryMaker(port: number) {
  const url = `http://127.0.0.1:${port}/hooks/hubspot`;
  const sent: number[][] = [];
  const distinct = new Set<number>();
  let next = 1;
  return {
    distinct,
    next(i: number): { body: string; headers: Record<string, string>; events: number } {
      const ids = i % 10 === 9 && sent.length > 0 ? sent[(i * 7919) % sent.length]! : Array.from({ length: 1 + (i % 3) }, () => next++);
      sent.push(ids);
      for (const id of ids) distinct.add(id);
      const now = Date.now();
      const body = hubspotBody(ids, now);
      return { body, headers: hubspotHeaders(SECRET, url, body, now), events: ids.length };
    },
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function runWebhooksBench(o: { rate: number; seconds: number; burst: number; concurrency: number }): Promise<Record<string, unknown>> {
  const stamp = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  const name = `bench-hooks-${stamp}`;
  const prefix = `bench-${stamp}`;
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--receiver', name, prefix], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buffered = '';
  const lineWaiters: (() => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      lines.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      lineWaiters.shift()?.();
    }
  });
  const nextLine = async (): Promise<unknown> => {
    if (lines.length === 0) await new Promise<void>((r) => lineWaiters.push(r));
    return JSON.parse(lines.shift()!);
  };
  const { port } = (await nextLine()) as { port: number };
  const make = deliveryMaker(port);
  const url = `http://127.0.0.1:${port}/hooks/hubspot`;
  const loadBefore = round(loadavg()[0]!, 2);
  const inspect = new Queue(name, { connection: { url: REDIS }, prefix });
  try {
    // Warm up the connections and the receiver's code paths.
    for (let i = 0; i < 50; i++) { const d = make.next(i); await post(url, d.body, d.headers); }

    const total = Math.round(o.rate * o.seconds);
    const latencies: number[] = [];
    let failures = 0;
    let openEvents = 0;
    const t0 = performance.now();
    await new Promise<void>((done) => {
      let issued = 0;
      let finished = 0;
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * o.rate) + 1);
        for (; issued < due; issued++) {
          const dueAt = t0 + (issued / o.rate) * 1000;
          const d = make.next(50 + issued);
          post(url, d.body, d.headers).then((status) => {
            latencies.push(performance.now() - dueAt);
            if (status === 200) openEvents += d.events; else failures += 1;
          }, () => { failures += 1; }).finally(() => { if (++finished === total) done(); });
        }
        if (issued < total) setTimeout(tick, 1);
      };
      tick();
    });
    const openWall = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);

    let burstEvents = 0;
    let burstFailures = 0;
    let issued = 0;
    const t1 = performance.now();
    await Promise.all(Array.from({ length: o.concurrency }, async () => {
      while (issued < o.burst) {
        const d = make.next(50 + total + issued++);
        const status = await post(url, d.body, d.headers);
        if (status === 200) burstEvents += d.events; else burstFailures += 1;
      }
    }));
    const burstWall = (performance.now() - t1) / 1000;

    const counts = await inspect.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
    const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
    child.stdin!.end();
    const stats = await nextLine();
    return {
      bench: 'webhooks',
      openLoop: {
        targetRate: o.rate,
        requests: total,
        achievedRate: Math.round(total / openWall),
        failures,
        p50Ms: round(percentile(latencies, 50), 2),
        p99Ms: round(percentile(latencies, 99), 2),
        maxMs: round(latencies.at(-1)!, 2),
        targetP99Ms: 20,
        p99Met: percentile(latencies, 99) <= 20,
        eventsPerSecond: Math.round(openEvents / openWall),
      },
      closedLoop: {
        concurrency: o.concurrency,
        requests: o.burst,
        failures: burstFailures,
        wallSeconds: seconds(burstWall * 1000),
        requestsPerSecond: Math.round(o.burst / burstWall),
        eventsPerSecond: Math.round(burstEvents / burstWall),
      },
      distinctEvents: make.distinct.size,
      jobsInQueue: jobs,
      receiver: stats,
      // Other processes on the machine inflate latency: the 1-minute load average before and after.
      loadAverage: [loadBefore, round(loadavg()[0]!, 2)],
    };
  } finally {
    await inspect.obliterate({ force: true }).catch(() => undefined);
    await inspect.close();
    child.kill();
  }
}

if (process.argv[2] === '--receiver') {
  await receiver(process.argv[3]!, process.argv[4]!);
} else if (isMain(import.meta.url)) {
  await main(() => runWebhooksBench({
    rate: numberArg('rate', 500),
    seconds: numberArg('seconds', 10),
    burst: numberArg('burst', 5_000),
    concurrency: numberArg('concurrency', 32),
  }));
}
