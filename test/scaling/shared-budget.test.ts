/**
 * One request budget across worker processes: 4 workers (bench/chaos-worker.ts) share
 * sharedRateBudget at 100 requests / 10 s against one fakeHubSpot whose own rolling ten-second
 * limit is also 100 (50 ms latency per request, so the workers send one request after another,
 * not one burst). The fake never has to refuse a request, and over a 20 s steady window (after
 * the first 10 s, which start with a full allowance) the workers use at least 90% of what the
 * budget grants: all of it on Redis (sliding window), half of it on Postgres (fixed windows at
 * floor(points / 2), see src/rate-budget-shared.ts). About 35 s per store.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from '../../bench/chaos.js';
import { postgresUrl, redisUrl } from './services.js';

const POINTS = 100;
const WINDOW_MS = 10_000;
const STEADY_FROM_MS = 10_000;
const STEADY_MS = 20_000;

const stores = [
  // Actions sized so that work remains past the steady window at each store's rate.
  { name: 'Redis', url: await redisUrl(), actions: 1_700, granted: POINTS },
  { name: 'Postgres', url: await postgresUrl(), actions: 800, granted: Math.floor(POINTS / 2) },
];

/** Requests the fake had received by `ms` since the start, from the run's sampled timeline. */
function requestsBy(timeline: [number, number][], ms: number): number {
  let n = 0;
  for (const [t, count] of timeline) if (t <= ms) n = count;
  return n;
}

describe.each(stores)('4 workers sharing one budget on $name', ({ url, actions, granted }) => {
  it.skipIf(url === undefined)('stay under the CRM limit with no 429 and use at least 90% of the budget', async () => {
    const result = await runChaos({
      actions, redeliver: 0, workers: 4, kills: 0, faults: { latencyMs: 50 }, seed: 21, ledgerUrl: url!, chunk: 20,
      tenSecondLimit: POINTS, budget: { url: url!, points: POINTS, durationMs: WINDOW_MS }, timeoutMs: 150_000,
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
    // And the work itself is right.
    expect(result.duplicates).toEqual({ contacts: 0, notes: 0 });
    expect(result.lost).toBe(0);
  }, 180_000);
});
