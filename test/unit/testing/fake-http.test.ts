import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeHttpCore, FaultKind, interceptWithNock, listenLoopback, seededRandom, type FakeVendor } from '../../../adapters/testing/fake-http.js';

function counterVendor() {
  const state = { commits: 0 };
  const vendor: FakeVendor = {
    name: 'test',
    handle: (req) => {
      state.commits += 1;
      return { status: 200, body: { ok: true, echo: req.body ?? null, path: req.path } };
    },
    rateLimited: (s) => ({ status: 429, headers: { 'retry-after': String(s) }, body: { message: 'slow down' } }),
    serverError: () => ({ status: 503, body: { message: 'unavailable' } }),
  };
  return { state, vendor };
}

function post(url: string, body: unknown): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const fronts = [
  ['loopback', async (core: FakeHttpCore) => {
    const server = await listenLoopback(core);
    return { url: server.url, stop: () => server.close() };
  }],
  ['nock', async (core: FakeHttpCore) => {
    const front = await interceptWithNock(core, 'http://fake.test:4010');
    return { url: front.origin, stop: async () => front.stop() };
  }],
] as const;

describe('seededRandom', () => {
  it('repeats the same sequence for the same seed', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    expect(Array.from({ length: 5 }, a)).toEqual(Array.from({ length: 5 }, b));
  });
});

describe.each(fronts)('FakeHttpCore over %s', (_name, open) => {
  let stop: () => Promise<void> = async () => undefined;
  afterEach(() => stop());

  it('serves JSON with a JSON content type and counts requests', async () => {
    const { state, vendor } = counterVendor();
    const core = new FakeHttpCore(vendor);
    const front = await open(core);
    stop = front.stop;
    const res = await post(`${front.url}/a/b%2Fc`, { x: 1 });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ ok: true, echo: { x: 1 }, path: '/a/b/c' });
    expect(state.commits).toBe(1);
    expect(core.count()).toBe(1);
  });

  it('commits a lost response but drops the connection', async () => {
    const { state, vendor } = counterVendor();
    const core = new FakeHttpCore(vendor);
    const front = await open(core);
    stop = front.stop;
    core.failNext(FaultKind.lostResponse);
    await expect(post(`${front.url}/x`, {})).rejects.toThrow();
    expect(state.commits).toBe(1);
    core.failNext(FaultKind.reset);
    await expect(post(`${front.url}/x`, {})).rejects.toThrow();
    expect(state.commits).toBe(1);
    expect(core.faultCounts()).toMatchObject({ lost_response: 1, reset: 1 });
  });

  it('answers 429 with Retry-After and 503 without committing', async () => {
    const { state, vendor } = counterVendor();
    const core = new FakeHttpCore(vendor, { retryAfterSeconds: 3 });
    const front = await open(core);
    stop = front.stop;
    core.failNext(FaultKind.rateLimit);
    const limited = await post(`${front.url}/x`, {});
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('3');
    core.failNext(FaultKind.serverError);
    expect((await post(`${front.url}/x`, {})).status).toBe(503);
    expect(state.commits).toBe(0);
  });

  it('commits a missing_result and drops the last result; serves html_error as a text/html page without committing', async () => {
    const state = { commits: 0 };
    const vendor: FakeVendor = {
      name: 'test',
      handle: () => ({ status: 200, body: { results: [{ n: ++state.commits }, { n: ++state.commits }] } }),
      rateLimited: () => ({ status: 429 }),
      serverError: () => ({ status: 503 }),
      faults: { teapot: () => ({ status: 418, body: { message: 'short and stout' } }) },
    };
    const core = new FakeHttpCore(vendor);
    const front = await open(core);
    stop = front.stop;
    core.failNext(FaultKind.missingResult);
    expect(JSON.parse((await post(`${front.url}/x`, {})).body)).toEqual({ results: [{ n: 1 }] });
    expect(state.commits).toBe(2);
    core.failNext(FaultKind.htmlError);
    const page = await post(`${front.url}/x`, {});
    expect(page.status).toBe(502);
    expect(page.headers['content-type']).toBe('text/html; charset=UTF-8');
    expect(page.body).toContain('<title>502 Bad Gateway</title>');
    core.failNext('teapot');
    expect((await post(`${front.url}/x`, {})).status).toBe(418);
    expect(state.commits).toBe(2);
    expect(core.faultCounts()).toMatchObject({ missing_result: 1, html_error: 1, teapot: 1, reset: 0 });
    expect(() => core.failNext('nonsense')).toThrow(/unknown fault "nonsense" \(known: rate_limit, .*teapot\)/);
  });

  it('stamps each logged request with its arrival, before the injected latency', async () => {
    const { vendor } = counterVendor();
    const core = new FakeHttpCore(vendor, { latencyMs: 60 });
    const front = await open(core);
    stop = front.stop;
    const before = Date.now();
    await post(`${front.url}/x`, {});
    const answered = Date.now();
    await post(`${front.url}/y`, {});
    const [first, second] = core.log;
    expect(first!.at).toBeGreaterThanOrEqual(before);
    // Logged on arrival: the answer came a latency later.
    expect(answered - first!.at).toBeGreaterThanOrEqual(55);
    expect(second!.at).toBeGreaterThanOrEqual(answered);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(55);
  });

  it('draws the same random faults for the same seed', async () => {
    const run = async () => {
      const { vendor } = counterVendor();
      const core = new FakeHttpCore(vendor, { seed: 42, serverError: 0.3 });
      const front = await open(core);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await post(`${front.url}/x`, {})).status);
      await front.stop();
      return statuses;
    };
    const first = await run();
    expect(first).toContain(503);
    expect(await run()).toEqual(first);
  });
});
