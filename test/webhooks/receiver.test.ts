/**
 * The receiver over real HTTP on loopback, enqueuing to real Redis/BullMQ: 2,000 HubSpot-signed
 * deliveries (redeliveries, batches, 50 bad signatures, 20 stale) leave exactly one job per valid
 * event, under its event job id, and none for the refused ones; 400/401/404/413 are counted and
 * enqueue nothing; an unreachable Redis answers 503.
 */
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventJobId, eventQueue, hubspotV3Verifier, noVerification, webhookApp, type EventQueue, type WebhookApp } from '../../src/webhooks/index.js';
import { redisUrl, runId } from '../helpers/services.js';
import { pool } from '../../bench/lib.js';
import { hubspotBody, hubspotDeliveries, hubspotHeaders, post } from './hubspot-deliveries.js';

const url = await redisUrl();
const SECRET = 'hubspot-app-secret-under-test';

async function listen(app: WebhookApp): Promise<{ server: Server; origin: string }> {
  const server = serve({ fetch: app.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  await new Promise<void>((r) => server.once('listening', () => r()));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
const close = (server: Server) => new Promise<void>((r) => server.close(() => r()));

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(!url)('webhook receiver -> BullMQ', () => {
  const prefix = `bull-${runId()}`;
  const name = `hooks-${runId()}`;
  let sink: EventQueue;
  let hooks: WebhookApp;
  let server: Server;
  let origin: string;
  let inspect: Queue;

  beforeAll(async () => {
    sink = eventQueue({ url: url!, name, prefix, attempts: 3, backoff: { type: 'fixed', delayMs: 500 } });
    await sink.ready();
    hooks = webhookApp({
      sources: {
        hubspot: { verify: hubspotV3Verifier({ secret: SECRET }), maxBodyBytes: 64 * 1024 },
        local: { verify: noVerification({ eventIdPointer: '/id' }) },
      },
      sink,
    });
    ({ server, origin } = await listen(hooks));
    inspect = new Queue(name, { connection: { url: url! }, prefix });
  });

  afterAll(async () => {
    await inspect?.obliterate({ force: true }).catch(() => undefined);
    await inspect?.close();
    if (server) await close(server);
    await sink?.close();
  });

  it('turns 2,000 deliveries into exactly one job per valid event, none for the bad or stale ones', async () => {
    const now = Date.now();
    const target = `${origin}/hooks/hubspot`;
    const deliveries = hubspotDeliveries({ secret: SECRET, url: target, now, total: 2_000, events: 1_000, bad: 50, stale: 20 });
    expect(deliveries).toHaveLength(2_000);
    const statuses: number[] = new Array(deliveries.length);
    await pool(deliveries, 32, async (d, i) => {
      statuses[i] = await post(target, d.body, d.headers);
    });
    expect(statuses.filter((s, i) => s !== deliveries[i]!.expect)).toEqual([]);

    const valid = new Set(deliveries.filter((d) => d.expect === 200).flatMap((d) => d.eventIds));
    const refused = new Set(deliveries.filter((d) => d.expect === 401).flatMap((d) => d.eventIds));
    expect(valid.size).toBe(1_000);
    expect(refused.size).toBe(70);
    const jobs = await inspect.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed'], 0, -1);
    const ids = jobs.map((j) => j.id!);
    expect(ids).toHaveLength(1_000);
    expect(new Set(ids)).toEqual(new Set([...valid].map((e) => eventJobId({ source: 'hubspot', eventId: String(e) }))));
    const job = jobs[0]!;
    expect(job.name).toBe('event');
    expect(job.data).toMatchObject({ v: 1, source: 'hubspot', eventId: expect.any(String), occurredAt: new Date(now - 60_000).toISOString(), payload: { subscriptionType: 'contact.propertyChange' } });
    expect(job.id).toBe(eventJobId({ source: 'hubspot', eventId: job.data.eventId }));
    expect(job.opts).toMatchObject({ attempts: 3, backoff: { type: 'fixed', delay: 500 }, removeOnComplete: { age: 86_400 }, removeOnFail: false });
    expect(hooks.stats()).toMatchObject({ accepted: 1_930, unauthorized: 70, events: deliveries.filter((d) => d.expect === 200).reduce((n, d) => n + d.eventIds.length, 0) });
  });

  it('refuses an unknown source (404), a body over the limit (413, also when streamed without a length) and bad JSON (400), enqueuing nothing', async () => {
    const before = hooks.stats();
    const count = async () => (await inspect.getJobCounts('waiting')).waiting;
    const jobsBefore = await count();
    const now = Date.now();
    const target = `${origin}/hooks/hubspot`;

    const unknownBody = hubspotBody([1], now);
    const unknown = await fetch(`${origin}/hooks/zendesk`, { method: 'POST', headers: hubspotHeaders(SECRET, `${origin}/hooks/zendesk`, unknownBody, now), body: unknownBody });
    expect(unknown.status).toBe(404);

    const big = hubspotBody(Array.from({ length: 400 }, (_, i) => 9_000_000 + i), now);
    expect(big.length).toBeGreaterThan(64 * 1024);
    const tooLarge = await fetch(target, { method: 'POST', headers: hubspotHeaders(SECRET, target, big, now), body: big });
    expect(tooLarge.status).toBe(413);
    const chunks = [new TextEncoder().encode(big.slice(0, 40_000)), new TextEncoder().encode(big.slice(40_000))];
    const streamed = await fetch(target, {
      method: 'POST', headers: hubspotHeaders(SECRET, target, big, now), duplex: 'half',
      body: new ReadableStream({ pull(c) { const next = chunks.shift(); if (next) c.enqueue(next); else c.close(); } }),
    } as RequestInit);
    expect(streamed.status).toBe(413);

    const broken = '[{"eventId": 77,';
    const bad = await fetch(target, { method: 'POST', headers: hubspotHeaders(SECRET, target, broken, now), body: broken });
    expect(bad.status).toBe(400);
    const local = await fetch(`${origin}/hooks/local`, { method: 'POST', body: '{"noid":1}' });
    expect(local.status).toBe(400);

    expect(hooks.stats()).toEqual({ ...before, unknownSource: before.unknownSource + 1, tooLarge: before.tooLarge + 2, badRequest: before.badRequest + 2 });
    expect(await count()).toBe(jobsBefore);
    const health = await (await fetch(`${origin}/healthz`)).json();
    expect(health).toEqual({ ok: true, ...hooks.stats() });
  });

  it('answers 503 with Retry-After when the queue cannot be reached, and enqueues nothing', async () => {
    const port = await freePort();
    const deadName = `hooks-dead-${runId()}`;
    const dead = eventQueue({ url: `redis://127.0.0.1:${port}`, name: deadName, prefix });
    const app = webhookApp({ sources: { hubspot: { verify: hubspotV3Verifier({ secret: SECRET }) } }, sink: dead, enqueueTimeoutMs: 300 });
    const { server: s, origin: o } = await listen(app);
    try {
      const now = Date.now();
      const target = `${o}/hooks/hubspot`;
      const started = Date.now();
      const answers = await Promise.all([1, 2, 3].map(async (i) => {
        const body = hubspotBody([8_000_000 + i], now);
        const res = await fetch(target, { method: 'POST', headers: hubspotHeaders(SECRET, target, body, now), body });
        return { status: res.status, retryAfter: res.headers.get('retry-after') };
      }));
      expect(answers).toEqual([1, 2, 3].map(() => ({ status: 503, retryAfter: '5' })));
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(app.stats()).toMatchObject({ unavailable: 3, accepted: 0, events: 0 });
      const deadQueue = new Queue(deadName, { connection: { url: url! }, prefix });
      expect(await deadQueue.getJobCounts()).toMatchObject({ waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0 });
      await deadQueue.close();
    } finally {
      await close(s);
      await dead.close();
    }
  });
});
