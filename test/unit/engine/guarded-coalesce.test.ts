/**
 * Concurrent guarded steps share their ledger round trips: the `once` calls of one tick are
 * claimed in one `claim` call and completed in one `complete` call; calls asked while a claim is
 * in flight share the next one; a step that throws is failed alone; sequential calls are not held
 * back; one key asked twice at once runs once.
 */
import { describe, expect, it } from 'vitest';
import { createSync } from '../../../src/engine/create-sync.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { countingLedger } from '../../../bench/lib.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

function setup(extra: { onceLingerMs?: number; ledger?: LedgerBackend } = {}) {
  const counted = countingLedger(extra.ledger ?? memoryLedger());
  const sync = createSync({ adapter: memoryCrm().adapter, ledger: counted.ledger, ...(extra.onceLingerMs !== undefined ? { onceLingerMs: extra.onceLingerMs } : {}) });
  return { sync, calls: counted.calls, reset: counted.reset };
}

describe('guarded steps share round trips', () => {
  it('claims 50 concurrent once calls in one round trip and completes them in one', async () => {
    const { sync, calls } = setup();
    let runs = 0;
    const values = await Promise.all(Array.from({ length: 50 }, (_, i) => sync.once(`step-${i}`, async () => ((runs += 1), { n: i }))));
    expect(values).toEqual(Array.from({ length: 50 }, (_, i) => ({ n: i })));
    expect(runs).toBe(50);
    expect(calls).toEqual({ claim: 1, complete: 1 });
    // And their replays: one claim round trip for all 50, nothing else, no step run again.
    const again = await Promise.all(Array.from({ length: 50 }, (_, i) => sync.once(`step-${i}`, async () => ((runs += 1), { n: -1 }))));
    expect(again).toEqual(values);
    expect(runs).toBe(50);
    expect(calls).toEqual({ claim: 2, complete: 1 });
  });

  it('fails only the step that threw, in the same round trip as the others complete', async () => {
    const { sync, calls, reset } = setup();
    const settled = await Promise.allSettled([
      sync.once('ok-1', () => 1),
      sync.once('boom', () => { throw new Error('provider down'); }),
      sync.once('ok-2', () => 2),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual({ claim: 1, complete: 1, fail: 1 });
    reset();
    // The failed step runs again on its next call (retry-failed), the others replay.
    expect(await Promise.all([sync.once('ok-1', () => 0), sync.once('boom', () => 'now'), sync.once('ok-2', () => 0)])).toEqual([1, 'now', 2]);
    expect(calls).toEqual({ claim: 1, complete: 1 });
  });

  it('runs one key asked twice at once a single time, both callers getting its value', async () => {
    const { sync } = setup();
    let runs = 0;
    const [a, b] = await Promise.all([
      sync.once('same', async () => ((runs += 1), 'first')),
      sync.once('same', async () => ((runs += 1), 'second')),
    ]);
    expect([a, b, runs]).toEqual(['first', 'first', 1]);
  });

  it('runs one key asked three times at once a single time; after a failure, one waiting caller runs it again', async () => {
    const { sync } = setup();
    let runs = 0;
    expect(await Promise.all([1, 2, 3].map((n) => sync.once('three', async () => ((runs += 1), n))))).toEqual([1, 1, 1]);
    expect(runs).toBe(1);
    let tries = 0;
    const settled = await Promise.allSettled([1, 2, 3].map((n) => sync.once('flaky', async () => {
      tries += 1;
      if (tries === 1) throw new Error('provider down');
      return n;
    })));
    // The first caller's attempt fails; of the two that waited on it, one runs the step, the other gets its value.
    expect(settled.map((x) => x.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(settled.slice(1).map((x) => (x as PromiseFulfilledResult<number>).value)).toEqual([2, 2]);
    expect(tries).toBe(2);
  });

  it('does not hold sequential calls back: each is its own claim and completion', async () => {
    const { sync, calls } = setup();
    for (let i = 0; i < 5; i++) expect(await sync.once(`seq-${i}`, () => i)).toBe(i);
    expect(calls).toEqual({ claim: 5, complete: 5 });
  });

  it('with a linger, gathers calls issued a few milliseconds apart into one round trip', async () => {
    const { sync, calls } = setup({ onceLingerMs: 30 });
    const later = (ms: number, key: string) => new Promise<number>((resolve, reject) => setTimeout(() => sync.once(key, () => ms).then(resolve, reject), ms));
    expect(await Promise.all([later(0, 'a'), later(5, 'b'), later(10, 'c')])).toEqual([0, 5, 10]);
    expect(calls.claim).toBe(1);
  });

  it('gathers the calls issued while a claim is in flight into the next one, which leaves when it returns', async () => {
    const inner = memoryLedger();
    const slow: LedgerBackend = { ...inner, claim: async (reqs, now) => (await new Promise((r) => setTimeout(r, 200)), inner.claim(reqs, now)) };
    const { sync, calls } = setup({ ledger: slow });
    const at = (ms: number, key: string) => new Promise<string>((resolve, reject) => setTimeout(() => sync.once(key, () => key).then(resolve, reject), ms));
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(await Promise.all(keys.map((k, i) => at(i < 2 ? 0 : 5 + i * 3, k)))).toEqual(keys);
    // a and b leave at once; c to f, asked while that claim was in flight, share the second.
    expect(calls.claim).toBe(2);
  });

  it('shares the ctx.once claims of concurrent handlers, and their event claims', async () => {
    const { sync, calls } = setup();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => sync.handle({ source: 'test', eventId: `e${i}` }, async (ctx) => {
      await ctx.once('summarize', () => `summary ${i}`);
      return [];
    })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill('completed'));
    // One claim for the 10 events, one for their 10 steps; one completion for the steps, one for the events.
    expect(calls).toEqual({ claim: 2, complete: 2 });
  });
});
