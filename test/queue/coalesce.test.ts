/**
 * The worker's group commit: concurrent callers share one applyMany, outcomes go back to each in
 * its own order, one call is in flight at a time, and each part gets its exact share of the calls.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import { coalescer, shares } from '../../src/queue/coalesce.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** An applyMany that records each call's inputs and answers `created` with the input as key. */
function recordingApply(options: { latencyMs?: number; callsPerAction?: number; fail?: (actions: readonly unknown[]) => boolean } = {}) {
  const calls: unknown[][] = [];
  let requests = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    calls,
    maxInFlight: () => maxInFlight,
    apiCalls: () => requests,
    async applyMany(actions: readonly unknown[]): Promise<Outcome[]> {
      calls.push([...actions]);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await sleep(options.latencyMs ?? 5);
        if (options.fail?.(actions)) throw new Error('ledger unreachable');
        requests += Math.ceil(actions.length * (options.callsPerAction ?? 0.5));
        return actions.map((a) => ({ key: String(a), status: 'created', attempts: 1 }));
      } finally {
        inFlight -= 1;
      }
    },
  };
}

describe('coalescer', () => {
  it('sends the actions of callers arriving within the linger in one applyMany, each getting its own outcomes', async () => {
    const crm = recordingApply();
    const c = coalescer({ applyMany: (a) => crm.applyMany(a), lingerMs: 30, apiCalls: crm.apiCalls });
    const results = await Promise.all([c.run(['a1', 'a2']), sleep(5).then(() => c.run(['b1'])), sleep(10).then(() => c.run(['c1', 'c2', 'c3']))]);
    expect(crm.calls).toEqual([['a1', 'a2', 'b1', 'c1', 'c2', 'c3']]);
    expect(results.map((r) => r.outcomes.map((o) => o.key))).toEqual([['a1', 'a2'], ['b1'], ['c1', 'c2', 'c3']]);
    // 6 actions -> 3 requests, shared 1 + 0.5 + 1.5 and rounded so they add up.
    expect(results.map((r) => r.apiCalls).reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('keeps one call in flight: what arrives meanwhile rides the next call', async () => {
    const crm = recordingApply({ latencyMs: 40 });
    const c = coalescer({ applyMany: (a) => crm.applyMany(a), lingerMs: 5 });
    const first = c.run(['a']);
    await sleep(15);
    const later = [c.run(['b']), c.run(['c'])];
    await Promise.all([first, ...later]);
    expect(crm.calls).toEqual([['a'], ['b', 'c']]);
    expect(crm.maxInFlight()).toBe(1);
  });

  it('leaves at once when every running caller has handed its actions in', async () => {
    const crm = recordingApply({ latencyMs: 1 });
    let running = 2;
    const c = coalescer({ applyMany: (a) => crm.applyMany(a), lingerMs: 5_000, expected: () => running });
    const started = Date.now();
    await Promise.all([c.run(['a']), c.run(['b'])]);
    running = 0;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(crm.calls).toEqual([['a', 'b']]);
  });

  it('cuts calls at maxActions without splitting a part', async () => {
    const crm = recordingApply({ latencyMs: 1 });
    const c = coalescer({ applyMany: (a) => crm.applyMany(a), lingerMs: 10, maxActions: 4 });
    await Promise.all([c.run(['a1', 'a2', 'a3']), c.run(['b1', 'b2']), c.run(['c1'])]);
    expect(crm.calls).toEqual([['a1', 'a2', 'a3'], ['b1', 'b2', 'c1']]);
  });

  it('rejects every part of a call that threw, and the next call goes on', async () => {
    const crm = recordingApply({ latencyMs: 1, fail: (a) => a.includes('boom') });
    const c = coalescer({ applyMany: (a) => crm.applyMany(a), lingerMs: 10 });
    const failed = await Promise.allSettled([c.run(['boom']), c.run(['x'])]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((await c.run(['y'])).outcomes.map((o) => o.key)).toEqual(['y']);
    expect(c.pending()).toBe(0);
  });

  it.each([
    [7, [1, 1, 1], [3, 2, 2]],
    [0, [5, 5], [0, 0]],
    [10, [1, 3], [3, 7]],
    [1, [2, 2, 2, 2], [1, 0, 0, 0]],
  ])('shares %i calls over parts %j as %j (adding up exactly)', (total, sizes, expected) => {
    expect(shares(total, sizes)).toEqual(expected);
  });
});
