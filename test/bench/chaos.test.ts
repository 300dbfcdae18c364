/**
 * The short chaos run: 1,000 actions (30% redelivered) through 2 worker processes on one
 * Postgres ledger and one faulty fakeHubSpot (lost responses, 429, 5xx, resets), one worker
 * SIGKILLed mid-run and restarted. Nothing is duplicated and nothing is lost. Asserts
 * correctness only, never speed. In CI an unreachable Postgres fails this file.
 */
import { describe, expect, it } from 'vitest';
import { CHAOS_FAULTS, runChaos } from '../../bench/chaos.js';
import { postgresUrl } from '../helpers/services.js';

const url = await postgresUrl();

describe.skipIf(url === undefined)('bench:chaos (short)', () => {
  it('ends with 0 duplicates and 0 lost actions across worker processes, faults and a SIGKILL', async () => {
    const result = await runChaos({
      actions: 1_000,
      redeliver: 0.3,
      workers: 2,
      kills: 1,
      faults: CHAOS_FAULTS,
      seed: 7,
      ledgerUrl: url!,
      timeoutMs: 150_000,
    });
    expect(result.kills).toHaveLength(1);
    expect(result.workerStarts).toBe(3);
    expect(result.duplicates).toEqual({ contacts: 0, notes: 0 });
    expect(result.lostInLedger).toBe(0);
    expect(result.missingInCrm).toBe(0);
    // The faults did happen: this is not a fault-free run by accident.
    const faults = result.faults as Record<string, number>;
    expect(faults.lost_response).toBeGreaterThan(0);
  }, 180_000);
});
