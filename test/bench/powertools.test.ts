/**
 * The short version of bench:powertools for our side, on Redis: guarded `once` calls run each
 * distinct step exactly once, one at a time at 1.7 round trips a call (a claim, and a completion
 * for a new key), and with 50 callers in flight sharing their claims and completions (at most
 * 0.1 round trips a call). Asserts correctness and round trips only, never speed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { callOrder, medianRows, oursOnce, type PowertoolsOptions } from '../../bench/powertools.js';
import { redisUrl, runId } from '../helpers/services.js';

let url: string | undefined;
beforeAll(async () => {
  url = await redisUrl();
});

describe('bench:powertools (short, ours)', () => {
  const options = (redis: string): PowertoolsOptions => ({ calls: 1_000, concurrency: 50, duplicateShare: 0.3, redisUrl: redis, seed: 3 });

  it('runs each distinct step once; one at a time: a claim per call plus a completion per new key', async (t) => {
    if (!url) return t.skip();
    const o = options(url);
    const order = callOrder(o);
    const result = await oursOnce(o, order, runId(), 1);
    expect(result.executions).toBe(700);
    // One clock read, 1,000 claims and 700 completions.
    expect(result.commands).toEqual({ time: 1, evalsha: 1_700 });
  });

  it('at concurrency 50, shares claims and completions: at most 0.1 round trips per call', async (t) => {
    if (!url) return t.skip();
    const o = options(url);
    const result = await oursOnce(o, callOrder(o), runId(), 50);
    expect(result.executions).toBe(700);
    expect(result.roundTrips as number).toBeLessThanOrEqual(100);
  });
});

describe('bench:powertools --passes', () => {
  it('reports each approach at its median rate over the passes, from the pass nearest it', () => {
    const pass = (once: number, pt: number, rt: number) => [
      { approach: 'powertools', concurrency: 50, callsPerSecond: pt },
      { approach: 'ours-once', concurrency: 50, callsPerSecond: once, roundTripsPerCall: rt },
      { approach: 'powertools', error: 'does not load' },
    ];
    const rows = medianRows([pass(40_000, 20_000, 0.07), pass(60_000, 30_000, 0.09), pass(50_000, 10_000, 0.08)]);
    expect(rows[0]).toMatchObject({ callsPerSecond: 20_000, passRates: [20_000, 30_000, 10_000] });
    expect(rows[1]).toMatchObject({ callsPerSecond: 50_000, roundTripsPerCall: 0.08, passRates: [40_000, 60_000, 50_000] });
    expect(rows[2]).toEqual({ approach: 'powertools', error: 'does not load' });
    expect(medianRows([pass(1, 2, 0.1)])[1]).toEqual({ approach: 'ours-once', concurrency: 50, callsPerSecond: 1, roundTripsPerCall: 0.1 });
  });
});
