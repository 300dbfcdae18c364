/**
 * The wait hook: budgets and the engine's Retry-After announce a wait before it starts, to the
 * listeners of the waiting call's async scope only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveHubSpotOptions } from '../../adapters/hubspot/index.js';
import { localRateBudget } from '../../src/rate-budget.js';
import { sharedRateBudget } from '../../src/rate-budget-shared.js';
import { announceWait, announcingRetryAfter, observeWaits, type RateWait } from '../../src/telemetry/waits.js';
import { redisUrl, runId } from '../helpers/services.js';
import { objects } from '../e2e/hubspot-helpers.js';

const redisUp = await redisUrl();
const wait = (ms: number): RateWait => ({ ms, kind: 'budget', reason: 'r' });

describe('observeWaits', () => {
  afterEach(() => vi.useRealTimers());

  it('delivers a wait to every listener of the scope it is announced in, once each, and to no other', async () => {
    const outer: number[] = [];
    const inner: number[] = [];
    const other: number[] = [];
    const listenOuter = (w: RateWait) => void outer.push(w.ms);
    await observeWaits(listenOuter, async () => {
      announceWait(wait(1));
      await observeWaits((w) => void inner.push(w.ms), async () => {
        await new Promise((r) => setTimeout(r, 1));
        announceWait(wait(2));
      });
      await observeWaits(listenOuter, async () => announceWait(wait(3)));
    });
    observeWaits((w) => void other.push(w.ms), () => undefined);
    announceWait(wait(4));
    expect(outer).toEqual([1, 2, 3]);
    expect(inner).toEqual([2]);
    expect(other).toEqual([]);
  });

  it('never lets a listener that throws break the wait', async () => {
    const heard: number[] = [];
    await observeWaits((w) => void heard.push(w.ms), () => observeWaits(() => { throw new Error('listener bug'); }, async () => {
      await announcingRetryAfter(async () => undefined, 'hubspot')(1_500);
    }));
    expect(heard).toEqual([1_500]);
  });

  it('hears a local budget wait before it starts, with its length and label', async () => {
    let t = 0;
    const slept: number[] = [];
    const heard: RateWait[] = [];
    const budget = localRateBudget({ points: 2, durationMs: 1_000, marginMs: 100, label: 'the test limit', now: () => t, sleep: async (ms) => { expect(heard).toHaveLength(slept.length + 1); slept.push(ms); t += ms; } });
    await observeWaits((w) => void heard.push(w), async () => {
      await budget.acquire();
      t = 300;
      await budget.acquire();
      await budget.acquire();
    });
    expect(heard).toEqual([{ ms: 800, kind: 'budget', reason: 'the test limit' }]);
    expect(slept).toEqual([800]);
  });

  it.each([
    [{ points: 1, durationMs: 10_000 }, 'HubSpot ten-second limit', 10_250],
    [{ points: 1, durationMs: 1_000 }, 'HubSpot rate limit', 1_250],
  ])('describes the HubSpot adapter budget %j as "%s"', async (rateLimit, reason, ms) => {
    vi.useFakeTimers();
    const { rateBudget } = resolveHubSpotOptions({ accessToken: 'x', objects, rateLimit });
    const heard: RateWait[] = [];
    await observeWaits((w) => void heard.push(w), async () => {
      await rateBudget.acquire();
      const second = rateBudget.acquire();
      await vi.advanceTimersByTimeAsync(ms);
      await second;
    });
    expect(heard).toEqual([{ ms, kind: 'budget', reason }]);
  });

  it.skipIf(!redisUp)('hears a shared budget wait on Redis with its label', async () => {
    const budget = sharedRateBudget({ redis: redisUp! }, { points: 1, durationMs: 1_000, marginMs: 0, keyPrefix: `crm-upsert:test:${runId()}`, label: 'the shared limit' });
    const heard: RateWait[] = [];
    try {
      await observeWaits((w) => void heard.push(w), async () => {
        await budget.acquire();
        await budget.acquire();
      });
    } finally {
      await budget.close();
    }
    expect(heard.length).toBeGreaterThan(0);
    expect(heard[0]).toMatchObject({ kind: 'budget', reason: 'the shared limit' });
    expect(heard[0]!.ms).toBeGreaterThan(500);
    expect(heard[0]!.ms).toBeLessThanOrEqual(1_001);
  });
});
