/**
 * The short version of bench:pipedrive: new records at their floor of a lookup and a create (plus
 * one fields read), known records at one update each, replays at none, 0 duplicates with the
 * search index lagging. Asserts counts only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { runPipedriveCalls } from '../../bench/pipedrive-calls.js';

describe('bench:pipedrive (short)', () => {
  it('new records take 2 requests, known ones 1, replays 0; no duplicate', async () => {
    const n = 100;
    const result = (await runPipedriveCalls({ n, lagMs: 2_000, concurrency: 4 })) as Record<string, { requests: number; statuses: string[] } | number>;
    expect(result.newRecords).toMatchObject({ requests: 2 * n + 1, statuses: ['created'] });
    expect(result.knownRecords).toMatchObject({ requests: n, statuses: ['updated'] });
    expect(result.replays).toMatchObject({ requests: 0, statuses: ['replayed'] });
    expect(result.persons).toBe(n);
    expect(result.duplicates).toBe(0);
  });
});
