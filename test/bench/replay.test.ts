/**
 * The short version of bench:replay on SQLite: a repeat of completed actions comes back
 * `replayed` with no CRM call and one ledger round trip per applyMany; the first run takes one
 * claim per applyMany and one completion per adapter batch. Asserts correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { replayBackend, sqliteBackend } from '../../bench/replay.js';

describe('bench:replay (short)', () => {
  it('replays every completed action with 1 claim per applyMany and 0 CRM calls', async () => {
    const result = await replayBackend(await sqliteBackend(), { n: 3_000, passes: 1 });
    expect(result.roundTrips).toEqual({ claimsPerApplyMany: 1, completesPerAdapterBatch: 1, replayPerApplyMany: { claim: 1 } });
    expect(result.adapterCallsDuringReplay).toBe(0);
    expect(result.firstRun).toMatchObject({ applyManyCalls: 3, adapterBatches: 30, ledgerCalls: { claim: 3, complete: 30 } });
  });
});
