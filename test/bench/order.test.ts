/**
 * The short version of bench:order: the first run creates every deal, the replay replays every one
 * with 0 requests, the update run updates every one, with the same requests under `order: 'event'`
 * and `order: 'arrival'` (the bench throws otherwise). Asserts correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { orderBackend } from '../../bench/order.js';

describe('bench:order (short)', () => {
  it.each(['sqlite', 'memory'] as const)('runs the three runs on the %s ledger with the same requests in both orders', async (ledger) => {
    const result = await orderBackend(ledger, { n: 250, passes: 1 });
    // 250 deals in batches of 100: 3 batch upserts to create, none to replay, 3 to update.
    expect(result).toMatchObject({ ledger, requests: { firstRun: 3, replay: 0, update: 3 } });
    expect(Object.keys(result.ratio as object)).toEqual(['firstRun', 'replay', 'update']);
  });
});
