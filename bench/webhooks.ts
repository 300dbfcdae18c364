/**
 * bench:webhooks — how fast the receiver acknowledges. The receiver (webhookApp on
 * @hono/node-server, its BullMQ sink on real Redis) runs in a child process; this process sends
 * HubSpot-v3-signed deliveries over loopback keep-alive connections:
 *
 *   1. open loop at `--rate` requests/s (default 500), `--passes` passes (default 3) of
 *      `--seconds` each (default 5): acknowledgement latency p50/p99/max, measured from the moment
 *      each request was due (so a stalled receiver cannot hide queueing delay), target p99 <= 20 ms.
 *      Interleaved with each pass, the same load goes to the floor: a bare node:http server in its
 *      own child process that reads the body, checks the same signature, stores each event with one
 *      ioredis `SET NX` and answers (the least any receiver that acknowledges after a durable write
 *      does). Medians over the passes; the ratio is ours over the floor, measured in one run.
 *   2. closed loop, `--concurrency` requests in flight (default 32) for `--burst` requests:
 *      the most events/s the receiver durably enqueues.
 *
 * Deliveries carry 1 to 3 events; one in ten repeats an earlier one (deduplicated at enqueue).
 * The job count in the queue is checked against the distinct events sent.
 * BENCH_RECEIVER_FLAGS passes node flags to both receivers (e.g. `--trace-gc`).
 *
 *   npm run bench:webhooks
 *   npm run bench:webhooks -- --rate=1000 --seconds=5 --passes=5
 *   BENCH_REDIS=redis://10.0.0.2:6379 npm run bench:webhooks
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { EVENT_JOB, eventJobId } from '../src/queue/jobs.js';
import { eventJobOptions } from '../src/queue/producer.js';
import { eventQueue, hubspotV3Verifier, webhookApp } from '../src/webhooks/index.js';
import { hubspotBody, hubspotHeaders, post } from '../test/webhooks/hubspot-deliveries.js';
import { isMain, main, numberArg, round, seconds } from './lib.js';

const SECRET = 'bench-hubspot-app-secret';
const REDIS = process.env.BENCH_REDIS ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

/** Serve until stdin closes: print `{ port }` once listening, then the receiver's own figures. */
async function serveUntilStdinEnds(server: Server, figures: () => Promise<Record<string, unknown>>): Promise<void> {
  await new Promise<void>((r) => (server.listening ? r() : server.once('listening', () => r())));
  // How long the receiver's event loop was blocked: the part of the tail no handler timer sees.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  process.stdin.resume();
  await new Promise<void>((r) => process.stdin.once('end', () => r()));
  server.close();
  process.stdout.write(`${JSON.stringify({ ...(await figures()), loopDelayP99Ms: round(loopDelay.percentile(99) / 1e6, 2), loopDelayMaxMs: round(loopDelay.max / 1e6, 2) })}\n`);
  process.exit(0);
}

/** Child mode: the library's receiver. */
async function receiver(name: string, prefix: string): Promise<void> {
  const sink = eventQueue({ url: REDIS, name, prefix });
  await sink.ready();
  const hooks = webhookApp({ sources: { hubspot: { verify: hubspotV3Verifier({ secret: SECRET }) } }, sink });
  // Time inside the receiver (request dispatched -> response ready), apart from socket and scheduling.
  const inside: number[] = [];
  const timed = async (req: Request, env: unknown) => {
    const t = performance.now();
    const res = await hooks.app.fetch(req, env);
    inside.push(performance.now() - t);
    return res;
  };
  const server = serve({ fetch: timed, hostname: '127.0.0.1', port: 0 }) as Server;
  await serveUntilStdinEnds(server, async () => {
    await sink.close();
    inside.sort((a, b) => a - b);
    return { ...hooks.stats(), insideP50Ms: round(percentile(inside, 50), 2), insideP99Ms: round(percentile(inside, 99), 2) };
  });
}

/**
 * Child mode: a floor, a bare node:http server that verifies, stores the events and answers: with
 * one ioredis `SET NX` each (`redis`), or with BullMQ's own `addBulk` under the same job ids and
 * options as the receiver's (`bullmq`: the least a receiver acknowledging after a BullMQ add does).
 */
async function floorReceiver(kind: 'redis' | 'bullmq', prefix: string): Promise<void> {
  const redis = new Redis(REDIS);
  const queue = kind === 'bullmq' ? new Queue(`${prefix}-q`, { connection: redis, prefix }) : undefined;
  const store = (events: { eventId: number }[]) => {
    if (queue) return queue.addBulk(events.map((e) => ({ name: EVENT_JOB, data: e, opts: { ...eventJobOptions({}), jobId: eventJobId({ source: 'hubspot', eventId: String(e.eventId) }) } })));
    const pipeline = redis.pipeline();
    for (const e of events) pipeline.set(`${prefix}:${e.eventId}`, JSON.stringify(e), 'NX');
    return pipeline.exec();
  };
  let stored = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ts = String(req.headers['x-hubspot-request-timestamp']);
      const want = createHmac('sha256', SECRET).update(`POST http://${req.headers.host}${req.url}`.replace(' ', '')).update(body).update(ts).digest();
      const given = Buffer.from(String(req.headers['x-hubspot-signature-v3']), 'base64');
      if (given.length !== want.length || !timingSafeEqual(given, want)) return void res.writeHead(401).end();
      const events = JSON.parse(body.toString('utf8')) as { eventId: number }[];
      store(events).then(() => {
        stored += events.length;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }, () => res.writeHead(503).end());
    });
  }).listen(0, '127.0.0.1');
  await serveUntilStdinEnds(server, async () => {
    await queue?.obliterate({ force: true });
    await queue?.close();
    const keys = await redis.keys(`${prefix}:*`);
    for (let i = 0; i < keys.length; i += 1_000) await redis.del(...keys.slice(i, i + 1_000));
    redis.disconnect();
    return { stored };
  });
}

/** Deliveries of fresh events, each 1-3 of them; one in ten repeats an earlier delivery. */
function deliveryMaker(url: string) {
  const sent: number[][] = [];
  const distinct = new Set<number>();
  let next = 1;
  let i = 0;
  return {
    distinct,
    next(): { body: string; headers: Record<string, string>; events: number } {
      i += 1;
      const ids = i % 10 === 9 && sent.length > 0 ? sent[(i * 7919) % sent.length]! : Array.from({ length: 1 + (i % 3) }, () => next++);
      sent.push(ids);
      for (const id of ids) distinct.add(id);
      const now = Date.now();
      const body = hubspotBody(ids, now);
      return { body, headers: hubspotHeaders(SECRET, url, body, now), events: ids.length };
    },
  };
}

/** A receiver child process and a way to read its JSON lines. */
function child(args: string[]) {
  const flags = process.env.BENCH_RECEIVER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const proc: ChildProcess = spawn(process.execPath, [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buffered = '';
  const waiters: (() => void)[] = [];
  proc.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      // --trace-gc prints to stdout too: pass its lines on to stderr.
      if (!line.startsWith('{')) { process.stderr.write(`${args[0]}: ${line}\n`); continue; }
      lines.push(line);
      waiters.shift()?.();
    }
  });
  const nextLine = async (): Promise<Record<string, unknown>> => {
    if (lines.length === 0) await new Promise<void>((r) => waiters.push(r));
    return JSON.parse(lines.shift()!) as Record<string, unknown>;
  };
  return {
    proc,
    async url(): Promise<string> {
      const { port } = (await nextLine()) as { port: number };
      return `http://127.0.0.1:${port}/hooks/hubspot`;
    },
    /** Stop it and read its figures. */
    async finish(): Promise<Record<string, unknown>> {
      proc.stdin!.end();
      return nextLine();
    },
  };
}

/** One open-loop pass: `total` requests at `rate`/s, latency from each request's due time. */
async function openLoop(url: string, make: ReturnType<typeof deliveryMaker>, rate: number, total: number) {
  const latencies: number[] = [];
  let failures = 0;
  let events = 0;
  const t0 = performance.now();
  await new Promise<void>((done) => {
    let issued = 0;
    let finished = 0;
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
      for (; issued < due; issued++) {
        const dueAt = t0 + (issued / rate) * 1000;
        const d = make.next();
        post(url, d.body, d.headers).then((status) => {
          latencies.push(performance.now() - dueAt);
          if (status === 200) events += d.events; else failures += 1;
        }, () => { failures += 1; }).finally(() => { if (++finished === total) done(); });
      }
      if (issued < total) setTimeout(tick, 1);
    };
    tick();
  });
  const wall = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { achievedRate: Math.round(total / wall), failures, events, eventsPerSecond: Math.round(events / wall), p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: latencies.at(-1)!, latencies };
}

export async function runWebhooksBench(o: { rate: number; seconds: number; passes: number; burst: number; concurrency: number }): Promise<Record<string, unknown>> {
  const stamp = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  const name = `bench-hooks-${stamp}`;
  const prefix = `bench-${stamp}`;
  const ours = child(['--receiver', name, prefix]);
  const floor = child(['--floor', 'redis', `${prefix}-floor`]);
  const bullFloor = child(['--floor', 'bullmq', `${prefix}-bullmq`]);
  const inspect = new Queue(name, { connection: { url: REDIS }, prefix });
  try {
    const [oursUrl, floorUrl, bullUrl] = await Promise.all([ours.url(), floor.url(), bullFloor.url()]);
    const make = deliveryMaker(oursUrl);
    const makeFloor = deliveryMaker(floorUrl);
    const makeBull = deliveryMaker(bullUrl);
    const loadBefore = round(loadavg()[0]!, 2);
    // Warm up the connections and both receivers' code paths: one second at the rate, not counted.
    for (const [u, m] of [[oursUrl, make], [floorUrl, makeFloor], [bullUrl, makeBull]] as const) await openLoop(u, m, o.rate, o.rate);

    const total = Math.round(o.rate * o.seconds);
    const oursPasses: Awaited<ReturnType<typeof openLoop>>[] = [];
    const floorPasses: Awaited<ReturnType<typeof openLoop>>[] = [];
    const bullPasses: Awaited<ReturnType<typeof openLoop>>[] = [];
    const order = [
      () => openLoop(floorUrl, makeFloor, o.rate, total).then((x) => floorPasses.push(x)),
      () => openLoop(bullUrl, makeBull, o.rate, total).then((x) => bullPasses.push(x)),
      () => openLoop(oursUrl, make, o.rate, total).then((x) => oursPasses.push(x)),
    ];
    // Rotate the order each pass, so no receiver always follows the same one.
    for (let p = 0; p < o.passes; p++) for (let k = 0; k < order.length; k++) await order[(p + k) % order.length]!();
    const summary = (passes: typeof oursPasses) => ({
      p50Ms: round(median(passes.map((x) => x.p50Ms)), 2),
      p99Ms: round(median(passes.map((x) => x.p99Ms)), 2),
      maxMs: round(Math.max(...passes.map((x) => x.maxMs)), 2),
      p99PerPassMs: passes.map((x) => round(x.p99Ms, 2)),
      // Every request of every pass together: the tail a sender sees over the whole run.
      p99AllPassesMs: round(percentile(passes.flatMap((x) => x.latencies).sort((a, b) => a - b), 99), 2),
      achievedRate: median(passes.map((x) => x.achievedRate)),
      failures: passes.reduce((a, x) => a + x.failures, 0),
    });
    const refused = [...oursPasses, ...floorPasses, ...bullPasses].reduce((a, x) => a + x.failures, 0);
    if (refused > 0) throw new Error(`${refused} requests were not answered 200: the figures would not compare like with like`);
    const oursOpen = summary(oursPasses);
    const floorOpen = summary(floorPasses);
    const bullOpen = summary(bullPasses);

    let burstEvents = 0;
    let burstFailures = 0;
    let issued = 0;
    const t1 = performance.now();
    await Promise.all(Array.from({ length: o.concurrency }, async () => {
      while (issued++ < o.burst) {
        const d = make.next();
        const status = await post(oursUrl, d.body, d.headers);
        if (status === 200) burstEvents += d.events; else burstFailures += 1;
      }
    }));
    const burstWall = (performance.now() - t1) / 1000;

    const counts = await inspect.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
    const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
    const [receiverStats, floorStats, bullStats] = await Promise.all([ours.finish(), floor.finish(), bullFloor.finish()]);
    return {
      bench: 'webhooks',
      openLoop: {
        targetRate: o.rate,
        passes: o.passes,
        requestsPerPass: total,
        ...oursOpen,
        eventsPerSecond: median(oursPasses.map((x) => x.eventsPerSecond)),
        targetP99Ms: 20,
        p99Met: oursOpen.p99Ms <= 20,
        floor: floorOpen,
        bullmqFloor: bullOpen,
        p99VsFloor: round(oursOpen.p99Ms / floorOpen.p99Ms, 2),
        p99VsBullmqFloor: round(oursOpen.p99Ms / bullOpen.p99Ms, 2),
        p50VsBullmqFloor: round(oursOpen.p50Ms / bullOpen.p50Ms, 2),
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
      receiver: receiverStats,
      floorReceiver: floorStats,
      bullmqFloorReceiver: bullStats,
      // Other processes on the machine inflate latency: the 1-minute load average before and after.
      loadAverage: [loadBefore, round(loadavg()[0]!, 2)],
    };
  } finally {
    await inspect.obliterate({ force: true }).catch(() => undefined);
    await inspect.close();
    for (const c of [ours, floor, bullFloor]) c.proc.kill();
  }
}

if (process.argv[2] === '--receiver') {
  await receiver(process.argv[3]!, process.argv[4]!);
} else if (process.argv[2] === '--floor') {
  await floorReceiver(process.argv[3] as 'redis' | 'bullmq', process.argv[4]!);
} else if (isMain(import.meta.url)) {
  await main(() => runWebhooksBench({
    rate: numberArg('rate', 500),
    seconds: numberArg('seconds', 5),
    passes: numberArg('passes', 3),
    burst: numberArg('burst', 5_000),
    concurrency: numberArg('concurrency', 32),
  }));
}
