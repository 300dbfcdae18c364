/**
 * The short version of bench:walk: every record is written once, in full batches, whatever the
 * batchSize and however many requests are in flight. Asserts correctness only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { runWalkBench, walkOnce } from '../../bench/walk.js';

describe('bench:walk (short)', () => {
  it('writes every record once, in ceil(N/100) requests, one at a time and four at a time', async () => {
    const r = await runWalkBench({ records: 1_250, latencyMs: 2, passes: 1, batchSizes: [100, 500] });
    const results = r.results as { concurrency: number; batchSize: number; calls: number; floorRecordsPerSecond: number }[];
    expect(results.map((x) => [x.concurrency, x.batchSize])).toEqual([[1, 500], [4, 100], [4, 500]]);
    for (const x of results) expect(x.calls).toBe(13);
    // The floor: ceil(13 / concurrency) rounds of 2 ms.
    expect(results.map((x) => x.floorRecordsPerSecond)).toEqual([48_077, 156_250, 156_250]);
  });

  it('a walk of single lines four at a time still writes each record once, in full batches', async () => {
    const run = await walkOnce({ records: 450, latencyMs: 1, concurrency: 4, batchSize: 1, tag: 'single' });
    expect(run).toMatchObject({ written: 450, calls: 5, duplicates: 0 });
  });
});
