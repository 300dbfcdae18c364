/**
 * One request budget across worker processes: 4 workers (bench/chaos-worker.ts) share
 * sharedRateBudget at 100 requests / 10 s against one fakeHubSpot whose own rolling ten-second
 * limit is also 100 (50 ms latency per request, so the workers send one request after another,
 * not one burst). The fake never has to refuse a request, and over a 20 s steady window (after
 * the first 10 s, which start with a full allowance) the workers use at least 90% of what the
 * budget grants (a sliding window on Redis and on Postgres). The workers have more work than fits and are
 * stopped after 31 s of requests, so the figures do not depend on how many calls an action takes.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from '../../bench/chaos.js';
import { postgresUrl, redisUrl } from './services.js';

const POINTS = 100;
const WINDOW_MS = 10_000;
const STEADY_FROM_MS = 10_000;
const STEADY_MS = 20_000;

const stores = [
  { name: 'Redis', url: await redisUrl(), granted: POINTS },
  { name: 'Postgres', url: await postgresUrl(), granted: POINTS },
];

/** Requests the fake had received by `ms` since the start, from the run's sampled timeline. */
function requestsBy(timeline: [number, number][], ms: number): number {
  let n = 0;
  for (const [t, count] of timeline) if (t <= ms) n = count;
  return n;
}

describe.each(stores)('4 workers sharing one budget on $name', ({ url, granted }) => {
  it.skipIf(url === undefined)('stay under the CRM limit with no 429 and use at least 90% of the budget', async () => {
    // More work than the budget lets through in the run: the workers are stopped just after the window.
    const result = await runChaos({
      actions: 10_000, redeliver: 0, workers: 4, kills: 0, faults: { latencyMs: 50 }, seed: 21, ledgerUrl: url!, chunk: 20,
      tenSecondLimit: POINTS, budget: { url: url!, points: POINTS, durationMs: WINDOW_MS },
      runForMs: STEADY_FROM_MS + STEADY_MS + 1_000, timeoutMs: 150_000,
    });

    // Not one request over the fake's rolling limit: it would have answered 429.
    expect(result.limited).toBe(0);
    const timeline = result.timeline as [number, number][];
    const first = timeline.find(([, n]) => n > 0)![0];
    const from = first + STEADY_FROM_MS;
    const to = from + STEADY_MS;
    expect(timeline[timeline.length - 1]![0]).toBeGreaterThanOrEqual(to);
    const steady = requestsBy(timeline, to) - requestsBy(timeline, from);
    const ceiling = (granted * STEADY_MS) / WINDOW_MS;
    expect(steady).toBeLessThanOrEqual(ceiling);
    expect(steady).toBeGreaterThanOrEqual(0.9 * ceiling);
    // The workers were still busy when stopped, and what they wrote, they wrote once.
    expect(result.stopped).toBe(true);
    expect(result.duplicates).toEqual({ contacts: 0, notes: 0 });
  }, 180_000);
});
