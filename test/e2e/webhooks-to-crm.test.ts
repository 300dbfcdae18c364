/**
 * Webhooks to the CRM, end to end: a spawned `crm-upsert serve` and two spawned `crm-upsert
 * worker` processes on real Redis (queue and ledger), a fake HubSpot on loopback as the CRM, and
 * a sender that behaves like HubSpot's: 2,000 HubSpot-v3-signed deliveries carrying 1,000 events
 * (about 30% of the events in 2-3 deliveries, one delivery in four batching 2-4 events), 50 with
 * a bad signature and 20 signed 6 minutes ago, each delivery sent again whenever the answer takes
 * over 200 ms or fails. So that such resends happen in every run, not only on a loaded machine,
 * the first send of one valid delivery in 25 goes through a loopback proxy that holds the answer
 * back 250 ms: the receiver has enqueued the events and answered, the sender gives up and sends
 * again (the classic duplicate). Once the workers drained the queue: exactly one note per valid event on
 * the right contact, one contact per object, nothing for the refused deliveries, the handler's
 * model call made once per event, and `queue stats` showing 0 failed.
 */
import { request, Agent } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { eventJobId } from '../../src/queue/jobs.js';
import { duplicates, ensureBuilt, runCli, spawnCli, tempDir, waitFor, writeHubSpotConfig, type SpawnedCli } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { drained, modelCalls, spawnWorker, testQueue, type TestQueue, type WorkerProcess } from '../queue/helpers.js';
import { hubspotDeliveries, type Delivery } from '../webhooks/hubspot-deliveries.js';

const redis = await redisUrl();
const SECRET = 'e2e-hubspot-app-secret';
const HANDLER = join(import.meta.dirname, 'fixtures', 'hubspot-handler.mjs');
const TOTAL = 2_000;
const EVENTS = 1_000;
const BAD = 50;
const STALE = 20;
const FIRST_ID = 1_000_000;
/** The sender gives up waiting after this long and sends the delivery again (HubSpot waits 5 s; this one is impatient). */
const SENDER_TIMEOUT_MS = 200;
const SENDERS = 24;
// A sender's 200 ms timeout is short on a loaded machine: a delivery keeps being sent until it is
// answered, as providers do for hours; what is asserted is what the CRM ends up holding.
const MAX_SENDS = 40;

const SLOW_EVERY = 25;
const SLOW_ANSWER_MS = 250;

const agent = new Agent({ keepAlive: true, maxSockets: SENDERS * 2 });
/** One connection per slowed send: the proxy delays everything on it. */
const slowAgent = new Agent({ keepAlive: false });

/** A loopback TCP proxy to `target` that passes requests on at once and answers `delayMs` late. */
async function slowAnswers(target: URL, delayMs: number): Promise<{ port: number; answered(): number; close(): Promise<void> }> {
  const open = new Set<Socket>();
  let answered = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    open.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (chunk.toString('latin1').startsWith('HTTP/1.1 200')) answered += 1;
      setTimeout(() => !client.destroyed && client.write(chunk), delayMs);
    });
    const end = () => (client.destroy(), upstream.destroy(), open.delete(client), open.delete(upstream));
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', () => setTimeout(end, delayMs));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    /** Sends the receiver answered 200 (each then dropped by the sender, which never saw the answer). */
    answered: () => answered,
    close: () => new Promise<void>((r) => {
      for (const s of open) s.destroy();
      server.close(() => r());
    }),
  };
}

/** One POST that counts as failed when it takes over `timeoutMs`: the request is dropped, as a sender's timeout does. */
function postWithin(url: string, d: Delivery, timeoutMs: number, viaPort?: number): Promise<{ status: number | 'timeout' | 'error'; ms: number }> {
  const u = new URL(url);
  // Through the proxy the Host header stays the receiver's: the signed URL is the one HubSpot would call.
  const via = viaPort === undefined ? { host: u.hostname, port: u.port, agent } : { host: '127.0.0.1', port: viaPort, agent: slowAgent };
  const started = performance.now();
  return new Promise((resolvePost) => {
    let settled = false;
    const settle = (status: number | 'timeout' | 'error') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePost({ status, ms: performance.now() - started });
    };
    const req = request({ ...via, path: u.pathname, method: 'POST', headers: { ...d.headers, host: u.host, 'content-length': Buffer.byteLength(d.body) } }, (res) => {
      res.resume();
      res.on('end', () => settle(res.statusCode ?? 0));
    });
    const timer = setTimeout(() => {
      settle('timeout');
      req.destroy();
    }, timeoutMs);
    req.on('error', () => settle('error'));
    req.end(d.body);
  });
}

interface Sent {
  delivery: Delivery;
  status: number | 'timeout' | 'error';
  sends: number;
}

/**
 * Send every delivery, `SENDERS` at a time, each again (up to MAX_SENDS sends) after a timeout, a network
 * error or a 5xx; the first send of the deliveries in `slowed` goes through the proxy on `slowPort`.
 */
async function sendAll(url: string, deliveries: Delivery[], latencies: number[], slowed: Set<Delivery>, slowPort: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  let next = 0;
  const sender = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      let answer: Awaited<ReturnType<typeof postWithin>>;
      let sends = 0;
      do {
        sends += 1;
        answer = await postWithin(url, delivery, SENDER_TIMEOUT_MS, sends === 1 && slowed.has(delivery) ? slowPort : undefined);
        if (typeof answer.status === 'number') latencies.push(answer.ms);
      } while ((typeof answer.status !== 'number' || answer.status >= 500) && sends < MAX_SENDS);
      sent.push({ delivery, status: answer.status, sends });
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  return sent;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

describe.skipIf(redis === undefined)('webhooks to the CRM: serve + 2 workers on real Redis', () => {
  let fake: FakeHubSpot;
  let crm: { basePath: string; close(): Promise<void> };
  let tq: TestQueue;
  let serve: SpawnedCli | undefined;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot();
    crm = await fake.listen();
    tq = testQueue(redis!);
  }, 180_000);

  afterAll(async () => {
    for (const p of [serve?.child, ...workers.map((w) => w.child)]) if (p && p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await tq?.drop();
    await crm?.close();
    agent.destroy();
    slowAgent.destroy();
  });

  it('writes exactly one note per valid event, none for refused deliveries, with one model call per event', async () => {
    const dir = tempDir('crm-upsert-e2e-hooks-');
    const calls = join(dir, 'model-calls.txt');
    const config = writeHubSpotConfig(dir, crm.basePath, {
      ledger: tq.ledgerUrl,
      queue: { url: tq.target.url, name: tq.target.name, prefix: tq.target.prefix, concurrency: 10, inFlightDelayMs: 200, backoff: { type: 'fixed', delayMs: 200 } },
      webhooks: { port: 0, sources: { hubspot: { verify: { kind: 'hubspot-v3', secretEnv: 'HUBSPOT_APP_SECRET' }, handler: HANDLER } } },
    });
    const started = Date.now();

    serve = spawnCli(['serve', '--config', config], { env: { HUBSPOT_APP_SECRET: SECRET } });
    let serveOut = '';
    serve.child.stdout!.on('data', (d: Buffer) => (serveOut += d.toString()));
    const env = { HUBSPOT_ACCESS_TOKEN: 'pat-e2e-hooks', MODEL_CALLS_FILE: calls };
    workers.push(await spawnWorker(config, env), await spawnWorker(config, env));
    await waitFor(() => serveOut.includes('\n'), 20_000);
    const listening = JSON.parse(serveOut.split('\n')[0]!) as { url: string; queue: string; sources: { hubspot: string } };
    expect(listening.queue).toBe(tq.target.name);
    await Promise.all(workers.map((w) => w.ready));

    const deliveries = hubspotDeliveries({ secret: SECRET, url: listening.sources.hubspot, now: Date.now(), total: TOTAL, events: EVENTS, bad: BAD, stale: STALE, firstId: FIRST_ID });
    const valid = new Set(Array.from({ length: EVENTS }, (_, i) => FIRST_ID + i));
    const refusedIds = deliveries.filter((d) => d.expect === 401).flatMap((d) => d.eventIds);
    expect(deliveries).toHaveLength(TOTAL);
    expect(refusedIds).toHaveLength(BAD + STALE);
    expect(deliveries.filter((d) => d.eventIds.length > 1).length).toBeGreaterThan(100);

    const slowed = new Set(deliveries.filter((d, i) => d.expect === 200 && i % SLOW_EVERY === 0));
    const proxy = await slowAnswers(new URL(listening.url), SLOW_ANSWER_MS);
    const latencies: number[] = [];
    const sent = await sendAll(listening.sources.hubspot, deliveries, latencies, slowed, proxy.port).finally(() => proxy.close());
    const sentMs = Date.now() - started;
    // Every delivery got its final answer: 200 for the valid ones, 401 for the refused ones.
    expect(sent.filter((s) => s.status !== s.delivery.expect).map((s) => s.status)).toEqual([]);
    const resent = sent.reduce((n, s) => n + s.sends - 1, 0);
    expect(sent.filter((s) => slowed.has(s.delivery) && s.sends < 2)).toEqual([]);

    await drained(tq.queue, 60_000);
    const drainedMs = Date.now() - started;

    // Exactly one note per valid event, each on the contact of its object.
    const contacts = fake.records('contacts');
    const contactOf = new Map(contacts.map((c) => [c.properties.ai_external_id!, c.id]));
    const wantedContacts = new Set([...valid].map((id) => `hs-${id % 997}`));
    expect(new Set(contactOf.keys())).toEqual(wantedContacts);
    expect(duplicates(contacts.map((c) => c.properties.ai_external_id))).toBe(0);
    expect(contacts.every((c) => c.properties.lifecyclestage === 'lead')).toBe(true);
    const notes = fake.records('notes');
    expect(notes).toHaveLength(EVENTS);
    expect(duplicates(notes.map((n) => n.properties.crm_upsert_key))).toBe(0);
    const noteEvents = notes.map((n) => Number(/HubSpot event (\d+):/.exec(n.properties.hs_note_body ?? '')?.[1]));
    expect(new Set(noteEvents)).toEqual(valid);
    for (const [i, n] of notes.entries()) {
      const parents = Object.values(n.associations).flat().map((a) => a.id);
      expect(parents).toEqual([contactOf.get(`hs-${noteEvents[i]! % 997}`)]);
    }

    // The model ran once per valid event, never for a refused one.
    const perEvent = modelCalls(calls);
    expect(new Set([...perEvent.keys()].map(Number))).toEqual(valid);
    expect([...perEvent.values()].filter((n) => n !== 1)).toEqual([]);
    // Nothing of the refused deliveries reached the queue.
    for (const id of refusedIds) expect(await tq.queue.getJob(eventJobId({ source: 'hubspot', eventId: String(id) }))).toBeUndefined();

    const stats = await runCli(['queue', 'stats', '--config', config]);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ command: 'queue stats', queue: tq.target.name, counts: { waiting: 0, active: 0, delayed: 0, completed: EVENTS, failed: 0 } });

    const health = (await (await fetch(`${listening.url}/healthz`)).json()) as Record<string, number>;
    // A delivery sent again after a timeout is counted again when the receiver got to answer the dropped send.
    const resentOf = (status: number) => sent.filter((s) => s.delivery.expect === status).reduce((n, s) => n + s.sends - 1, 0);
    expect(health).toMatchObject({ ok: true, badRequest: 0, tooLarge: 0, unknownSource: 0, unavailable: 0 });
    expect(health.unauthorized).toBeGreaterThanOrEqual(BAD + STALE);
    expect(health.unauthorized).toBeLessThanOrEqual(BAD + STALE + resentOf(401));
    // The slowed sends the receiver answered were enqueued and then sent again: real duplicates.
    expect(proxy.answered()).toBeGreaterThan(0);
    expect(health.accepted).toBeGreaterThanOrEqual(TOTAL - BAD - STALE + proxy.answered());
    expect(health.accepted).toBeLessThanOrEqual(TOTAL - BAD - STALE + resentOf(200));

    serve.child.kill('SIGTERM');
    for (const w of workers) w.child.kill('SIGTERM');
    const [served, ...stopped] = await Promise.all([serve.done, ...workers.map((w) => w.done)]);
    expect(served.code).toBe(143);
    expect(served.stderr).toContain(`deliveries accepted`);
    expect(served.stderr).toContain(`refused ${health.unauthorized} 401, 0 400, 0 413, 0 404, 0 503`);
    expect(stopped.map((s) => s.code)).toEqual([143, 143]);
    const done = workers.map((w) => JSON.parse(w.stdout().trim().split('\n').pop()!) as { completed: number; failed: number });
    expect(done.reduce((n, d) => n + d.completed, 0)).toBe(EVENTS);
    expect(done.map((d) => d.failed)).toEqual([0, 0]);

    console.info(JSON.stringify({ e2e: 'webhooks-to-crm', deliveries: TOTAL, events: EVENTS, slowed: slowed.size, duplicatedBySlowAnswers: proxy.answered(), resent, ackP50Ms: Math.round(percentile(latencies, 0.5)), ackP99Ms: Math.round(percentile(latencies, 0.99)), sentMs, drainedMs, crmCalls: fake.count() }));
  }, 90_000);
});
