/**
 * The short version of bench:calls: our run writes each record once (no duplicates, nothing lost)
 * at the batch limit of calls, even with 20% of responses lost, and the second run makes 0 calls.
 * Asserts correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { runCallsBench } from '../../bench/calls.js';
import { runSalesCalls } from '../../bench/sales-call.js';

interface Run {
  crm: string;
  approach: string;
  calls: number;
  duplicates: { contacts: number; activities: number };
  lost: number;
  lostResponses: number;
  secondRunCalls?: number;
}

describe('bench:calls (short)', () => {
  it('writes every record once, at ceil(N/batch) calls per object, and replays with 0 calls', async () => {
    const n = 250;
    const result = await runCallsBench({ n, lost: 0.2, concurrency: 4, searchLagMs: 1_000, only: ['ours'], seed: 3 });
    const clean = result.clean as Run[];
    const faulted = result.withLostResponses as Run[];
    expect(clean.map((r) => r.crm)).toEqual(['hubspot', 'salesforce']);
    for (const run of [...clean, ...faulted]) {
      expect(run.duplicates).toEqual({ contacts: 0, activities: 0 });
      expect(run.lost).toBe(0);
    }
    // The faulted runs did lose responses after the CRM committed them.
    expect(faulted.map((r) => r.lostResponses > 0)).toEqual([true, true]);
    const [hubspot, salesforce] = clean;
    // One write call per batch per object: activities on contacts written in the same call need no parent read.
    expect(hubspot!.calls).toBe(2 * Math.ceil(n / 100));
    expect(salesforce!.calls).toBe(2 * Math.ceil(n / 200));
    expect(hubspot!.secondRunCalls).toBe(0);
    expect(salesforce!.secondRunCalls).toBe(0);
  });

  it('writes N sales calls (company, contact, deal, note with three associations, task) at the floor the batch limits imply, and 0 calls again', async () => {
    for (const crm of ['hubspot', 'salesforce'] as const) {
      const run = await runSalesCalls(crm, 250);
      // HubSpot: 8 requests per 100 events (5 writes, 3 association calls); Salesforce: 5 per 200.
      expect(run.floor).toBe(crm === 'hubspot' ? 24 : 10);
      expect(run.calls).toBe(run.floor);
      expect(run.secondRunCalls).toBe(0);
    }
  });
});

