/**
 * The hono app mounted inside another app and called through `fetch` (no Node server, so the
 * body is read from the web stream): what reaches the sink, the limit enforced on a streamed
 * body, and 503 when the sink fails or is too slow.
 */
import { createHmac } from 'node:crypto';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { hmacSha256Verifier, webhookApp, type EventJobData, type EventSink } from '../../src/webhooks/index.js';

const SECRET = 'mounted-secret';
const NOW = Date.parse('2026-12-01T12:00:00Z');
const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

function memorySink(behaviour: 'ok' | 'fail' | 'hang' = 'ok'): EventSink & { events: EventJobData[] } {
  const events: EventJobData[] = [];
  return {
    events,
    enqueue: async (batch) => {
      if (behaviour === 'fail') throw new Error('redis down');
      if (behaviour === 'hang') await new Promise(() => undefined);
      events.push(...batch);
    },
  };
}

function mounted(sink: EventSink, enqueueTimeoutMs = 2_000) {
  const hooks = webhookApp({
    sources: { generic: { verify: hmacSha256Verifier({ secret: SECRET, prefix: 'sha256=', eventIdPointer: '/id', occurredAtPointer: '/at' }), maxBodyBytes: 1_000 } },
    sink, now: () => NOW, enqueueTimeoutMs,
  });
  const outer = new Hono();
  outer.route('/api', hooks.app);
  return { hooks, post: (body: string | ReadableStream<Uint8Array>, headers: Record<string, string>) => outer.request('/api/hooks/generic', { method: 'POST', body, headers, duplex: 'half' } as RequestInit) };
}

describe('webhookApp mounted in another hono app', () => {
  it('enqueues the verified event with its source, id, time and receipt time, then answers 200', async () => {
    const sink = memorySink();
    const { hooks, post } = mounted(sink);
    const body = JSON.stringify({ id: 'ord-1', at: '2026-12-01T11:58:00Z', total: 5 });
    const res = await post(body, { 'x-signature': sign(body) });
    expect(res.status).toBe(200);
    expect(sink.events).toEqual([{ v: 1, source: 'generic', eventId: 'ord-1', occurredAt: '2026-12-01T11:58:00.000Z', receivedAt: '2026-12-01T12:00:00.000Z', payload: { id: 'ord-1', at: '2026-12-01T11:58:00Z', total: 5 } }]);
    expect(hooks.stats()).toMatchObject({ accepted: 1, events: 1 });
  });

  it('stops reading a streamed body past the limit (413) and enqueues nothing', async () => {
    const sink = memorySink();
    const { hooks, post } = mounted(sink);
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({ pull(c) { pulled += 1; c.enqueue(new Uint8Array(300).fill(32)); } });
    const res = await post(endless, { 'x-signature': sign('') });
    expect(res.status).toBe(413);
    expect(pulled).toBeLessThan(10);
    expect(sink.events).toEqual([]);
    expect(hooks.stats().tooLarge).toBe(1);
  });

  it('answers 503 when the sink fails or does not answer in time', async () => {
    const body = JSON.stringify({ id: 'ord-2' });
    for (const behaviour of ['fail', 'hang'] as const) {
      const sink = memorySink(behaviour);
      const { hooks, post } = mounted(sink, 100);
      const res = await post(body, { 'x-signature': sign(body) });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(hooks.stats()).toMatchObject({ unavailable: 1, accepted: 0 });
    }
  });
});
