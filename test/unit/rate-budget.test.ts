import { describe, expect, it } from 'vitest';
import { requestGate } from '../../adapters/kit/adapter-kit.js';
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

  it('counts a request whose answer is reported from that answer, with no margin', async () => {
    const clock = { t: 0 };
    const sends: number[] = [];
    const budget = localRateBudget({ points: 5, durationMs: 1_000, marginMs: 200, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    for (let i = 0; i < 10; i++) {
      const answered = await budget.acquire();
      sends.push(clock.t);
      clock.t += 30; // the answer arrives 30 ms after the send
      (answered as () => void)();
    }
    // The first five were answered at 30, 60, ... 150 ms: each frees its slot 1 s after its answer,
    // never earlier (the CRM counted it before answering), and without waiting out the margin.
    expect(sends.slice(0, 5)).toEqual([0, 30, 60, 90, 120]);
    expect(sends.slice(5)).toEqual([1_030, 1_060, 1_090, 1_120, 1_150]);
    for (let i = 5; i < 10; i++) expect(sends[i]! - (sends[i - 5]! + 30)).toBeGreaterThanOrEqual(1_000);
  });

  it('keeps the margin for a grant whose request is still unanswered', async () => {
    const clock = { t: 0 };
    const budget = localRateBudget({ points: 1, durationMs: 1_000, marginMs: 200, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    const first = await budget.acquire();
    await budget.acquire();
    expect(clock.t).toBe(1_200);
    expect(typeof first).toBe('function');
  });

  it('counts a request answered after its margin ran out from its answer', async () => {
    const clock = { t: 0 };
    const budget = localRateBudget({ points: 1, durationMs: 1_000, marginMs: 200, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    const answered = await budget.acquire();
    clock.t += 400; // the request reached the CRM as late as 400 ms after its grant
    (answered as () => void)();
    await budget.acquire();
    expect(clock.t).toBe(1_400);
  });

  it('counts a request again from its answer when its margin ran out while it was unanswered', async () => {
    const clock = { t: 0 };
    const budget = localRateBudget({ points: 1, durationMs: 1_000, marginMs: 200, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    const slow = await budget.acquire();
    const next = await budget.acquire();
    expect(clock.t).toBe(1_200);
    (next as () => void)();
    clock.t = 1_500;
    (slow as () => void)();
    await budget.acquire();
    // Both are counted until a second after their answers: the later one, at 2,500 ms, decides.
    expect(clock.t).toBe(2_500);
  });

  it('refuses a request that costs more than the whole budget', async () => {
    await expect(localRateBudget({ points: 2, durationMs: 1_000 }).acquire(3)).rejects.toThrow(RangeError);
  });

  it.each([
    ['answers', async () => 'ok'],
    ['fails', async () => { throw new Error('socket hang up'); }],
  ])('is told by the request gate when a request %s', async (_, call) => {
    const clock = { t: 0 };
    const budget = localRateBudget({ points: 1, durationMs: 1_000, marginMs: 500, now: () => clock.t, sleep: async (ms) => void (clock.t += ms) });
    const gate = requestGate();
    await gate.send(async () => { clock.t += 40; return call(); }, { budgets: [budget] }).catch(() => undefined);
    await budget.acquire();
    // Counted from the answer at 40 ms, not until the margin at 1,500 ms.
    expect(clock.t).toBe(1_040);
    expect(gate.apiCalls()).toBe(1);
  });

  it('refuses a budget of zero', () => {
    expect(() => localRateBudget({ points: 0, durationMs: 1 })).toThrow(RangeError);
  });
});
