/**
 * Many workers, one ledger: 4 worker processes (bench/chaos-worker.ts) each sync the same 5,000
 * actions (2,500 contact upserts, 2,500 notes), each in its own order, against one fakeHubSpot on
 * loopback, first fault-free, then with 10% of responses lost after commit and one worker
 * SIGKILLed mid-run and restarted. On Postgres and on Redis: every contact and every note exists
 * once in the CRM and every ledger key ends completed. In CI an unreachable backend fails this file.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from '../../bench/chaos.js';
import { postgresUrl, redisUrl, writes } from './services.js';

const ACTIONS = 5_000;
const backends = [
  { name: 'postgres', url: await postgresUrl() },
  { name: 'redis', url: await redisUrl() },
];

describe.each(backends)('4 worker processes on one $name ledger', ({ url }) => {
  it.skipIf(url === undefined)('write each of 5,000 overlapping actions exactly once', async () => {
    const result = await runChaos({
      // No kills here, so a long lease costs nothing; it keeps a worker starved of CPU on a loaded
      // machine from losing its claims to another (which would write again: correct, but not "one writer").
      actions: ACTIONS, redeliver: 0, workers: 4, kills: 0, faults: {}, seed: 11, ledgerUrl: url!, share: 'all', timeoutMs: 150_000, leaseMs: 30_000,
    });

    expect(result.deliveries).toBe(ACTIONS);
    expect(result.records).toEqual({ contacts: ACTIONS / 2, notes: ACTIONS / 2 });
    expect(result.distinct).toEqual({ contacts: ACTIONS / 2, notes: ACTIONS / 2 });
    expect(result.duplicates).toEqual({ contacts: 0, notes: 0 });
    expect(result.ledgerEntries).toEqual({ completed: ACTIONS });
    expect(result.lost).toBe(0);
    // Every worker went through all 5,000; exactly one of them wrote each key, the rest replayed it.
    const outcomes = result.outcomes as { done: number; left: number }[];
    expect(outcomes.map((o) => [o.done, o.left])).toEqual(Array.from({ length: 4 }, () => [ACTIONS, 0]));
    expect(writes(outcomes)).toBe(ACTIONS);
  }, 180_000);

  it.skipIf(url === undefined)('loses and duplicates nothing with 10% of responses lost after commit and a worker SIGKILLed and restarted', async () => {
    const result = await runChaos({
      actions: ACTIONS, redeliver: 0, workers: 4, kills: 1, faults: { lostResponse: 0.1 }, seed: 12, ledgerUrl: url!, share: 'all', timeoutMs: 150_000,
    });

    expect(result.kills).toHaveLength(1);
    expect(result.workerStarts).toBe(5);
    expect((result.faults as Record<string, number>).lost_response).toBeGreaterThan(0);
    expect(result.records).toEqual({ contacts: ACTIONS / 2, notes: ACTIONS / 2 });
    expect(result.duplicates).toEqual({ contacts: 0, notes: 0 });
    expect(result.ledgerEntries).toEqual({ completed: ACTIONS });
    expect(result.lostInLedger).toBe(0);
    expect(result.missingInCrm).toBe(0);
  }, 180_000);
});
