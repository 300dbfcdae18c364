/**
 * The short version of bench:replay on SQLite: a repeat of completed actions comes back
 * `replayed` with no CRM call and one read-only ledger round trip (getMany) per applyMany; the
 * first run takes one claim per applyMany and one completion per adapter batch. Asserts
 * correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { firstRunCost, replayBackend, sqliteBackend } from '../../bench/replay.js';

describe('bench:replay (short)', () => {
  it('replays every completed action with 1 read-only lookup per applyMany, no claim, no write and 0 CRM calls', async () => {
    const result = await replayBackend(await sqliteBackend(), { n: 3_000, passes: 2 });
    // Replays: getMany only (no claim, complete, fail or window call); first run: one lookup in all, then claims.
    expect(result.roundTrips).toEqual({ claimsPerApplyMany: 1, completesPerAdapterBatch: 1, lookupsInFirstRun: 1, replayPerApplyMany: { getMany: 1 } });
    expect(result.adapterCallsDuringReplay).toBe(0);
    expect(result.firstRun).toMatchObject({ applyManyCalls: 3, adapterBatches: 30, ledgerCalls: { getMany: 1, claim: 3, complete: 30 } });
  });

  it('measures the first run against a bare INSERT of the same rows', async () => {
    const result = await firstRunCost({ n: 500, passes: 1 });
    // The floor inserts every row the first run completed, no more, no fewer.
    expect(result).toMatchObject({ backend: 'sqlite', n: 500, rowsInserted: 500 });
  });
});
