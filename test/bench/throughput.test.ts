/**
 * The short version of bench:throughput: every record is written, no request draws a 429, and
 * the run takes no less than the zero-CPU floor the bench reports its share against. Asserts
 * correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { chainFloorSeconds, runThroughputBench } from '../../bench/throughput.js';

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

  it('writes every record under the limit with no 429, and never beats its floor', async () => {
    const r = await runThroughputBench({ records: 1_200, distinct: 600, concurrency: 4, latencyMs: 20, limit: 100 });
    expect(r.written).toBe(1_200);
    expect(r.calls).toBe(12);
    expect(r.http429).toBe(0);
    expect(r.floorSeconds).toBeCloseTo(chainFloorSeconds({ requests: 12, perWindow: 100, concurrency: 4, latencyMs: 20 }), 3);
    expect(r.ratioToFloor as number).toBeGreaterThanOrEqual(1);
  });
});
