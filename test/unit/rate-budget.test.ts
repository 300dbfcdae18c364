import { describe, expect, it } from 'vitest';
import { localRateBudget } from '../../src/rate-budget.js';

describe('localRateBudget', () => {
  it('never lets more than `points` requests through in any window', async () => {
    const clock = { t: 0 };
    const sends: number[] = [];
    const budget = localRateBudget({ points: 10, durationMs: 1_000, marginMs: 0, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    for (let i = 0; i < 35; i++) {
      await budget.acquire();
      sends.push(clock.t);
    }
    for (const t of sends) expect(sends.filter((s) => s >= t && s < t + 1_000).length).toBeLessThanOrEqual(10);
    // 35 sends at 10 per second need a bit over 3 seconds, not more.
    expect(clock.t).toBeGreaterThanOrEqual(3_000);
    expect(clock.t).toBeLessThan(3_100);
  });

  it('keeps each send counted for the margin past its window', async () => {
    const clock = { t: 0 };
    const sends: number[] = [];
    const budget = localRateBudget({ points: 5, durationMs: 1_000, marginMs: 200, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    for (let i = 0; i < 10; i++) {
      await budget.acquire();
      sends.push(clock.t);
    }
    expect(sends.slice(5)).toEqual([1_200, 1_200, 1_200, 1_200, 1_200]);
  });

  it('refuses a budget of zero', () => {
    expect(() => localRateBudget({ points: 0, durationMs: 1 })).toThrow(RangeError);
  });
});
