/**
 * The short version of bench:reads: reading N contacts back by external id takes the floor the
 * CRMs' limits imply, links included, answers every one, and beats one request per record.
 * Asserts request counts only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { runReads } from '../../bench/reads.js';

describe('bench:reads (short)', () => {
  it.each(['hubspot', 'salesforce'] as const)('reads 250 %s contacts at the floor, with and without links', async (crm) => {
    const run = await runReads(crm, 250);
    expect(run.plain).toMatchObject({ found: 250, atFloor: true });
    expect(run.withLinks).toMatchObject({ linked: 250, atFloor: true });
    if (crm === 'hubspot') {
      expect(run.plain.calls).toBe(3);
      expect(run.withLinks.calls).toBe(9);
      expect(run.naive!.calls).toBe(250);
    } else {
      expect(run.plain.calls).toBe(1);
      expect(run.withLinks.calls).toBe(1);
    }
  });
});
