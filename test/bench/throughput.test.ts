/**
 * The short version of bench:throughput: every record is written, no request draws a 429, and
 * the run takes no less than the zero-CPU floor the bench reports its share against. Asserts
 * correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { chainFloorSeconds, runThroughputBench, startAndChain } from '../../bench/throughput.js';

describe('bench:throughput (short)', () => {
  it('puts the last request one chain of windows after its place in the first window', () => {
    // 450 requests, 4 at a time, 50 ms each: the 50th of the first window goes in round 13 (600 ms),
    // four windows of 10 s and a latency each follow, and the last latency ends the run.
    expect(chainFloorSeconds({ requests: 450, perWindow: 100, concurrency: 4, latencyMs: 50 })).toBeCloseTo(40.85, 6);
    // A full last window: its 100th request goes in round 25.
    expect(chainFloorSeconds({ requests: 400, perWindow: 100, concurrency: 4, latencyMs: 50 })).toBeCloseTo(1.2 + 30.15 + 0.05, 6);
    // One window only: rounds and the last latency.
    expect(chainFloorSeconds({ requests: 10, perWindow: 100, concurrency: 4, latencyMs: 50 })).toBeCloseTo(0.15, 6);
    expect(chainFloorSeconds({ requests: 1, perWindow: 100, concurrency: 4, latencyMs: 0 })).toBe(0);
  });

  it("splits a run at the last request's place in the first window", () => {
    // 7 requests, 3 per window: the last (7th) is the first window's 1st place, two windows on.
    const at = [1_100, 1_150, 1_200, 11_160, 11_210, 11_260, 21_230];
    const split = startAndChain(at, 1_000, 3);
    expect(split.startSeconds).toBeCloseTo(0.1, 6);
    expect(split.windows).toBe(2);
    expect(split.chainSeconds).toBeCloseTo(20.13, 6);
    expect(split.sustainedShare).toBeCloseTo(20 / 20.13, 6);
    // The 5th: the 2nd place, one window on.
    expect(startAndChain(at.slice(0, 5), 1_000, 3)).toMatchObject({ windows: 1, sustainedShare: 10 / 10.06 });
    expect(startAndChain(at.slice(0, 3), 1_000, 3)).toEqual({ startSeconds: 0.2, chainSeconds: 0, windows: 0, sustainedShare: null });
    expect(startAndChain([], 1_000, 3).sustainedShare).toBeNull();
  });

  it('writes every record under the limit with no 429, and never beats its floor', async () => {
    const r = await runThroughputBench({ records: 1_200, distinct: 600, concurrency: 4, latencyMs: 20, limit: 100 });
    expect(r.written).toBe(1_200);
    expect(r.calls).toBe(12);
    expect(r.http429).toBe(0);
    expect(r.floorSeconds).toBeCloseTo(chainFloorSeconds({ requests: 12, perWindow: 100, concurrency: 4, latencyMs: 20 }), 3);
    expect(r.ratioToFloor as number).toBeGreaterThanOrEqual(1);
    // One window: all of it is the start (its 12th request goes in round 3), none of it a chain.
    expect(r.startFloorSeconds).toBeCloseTo(0.04, 6);
    expect(r.startSeconds as number).toBeGreaterThanOrEqual(0.04);
    expect(r.startSeconds as number).toBeLessThanOrEqual(r.wallSeconds as number);
    expect(r.chainSeconds).toBe(0);
    expect(r.sustainedShare).toBeNull();
  });
});
