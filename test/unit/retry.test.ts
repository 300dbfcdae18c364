import { describe, expect, it } from 'vitest';
import { CrmError } from '../../src/errors.js';
import { withRetry } from '../../src/retry.js';

const crm = (kind: CrmError['kind'], extra: { retryAfterMs?: number } = {}) => new CrmError(kind, { vendor: 'test', kind, ...extra });

describe('withRetry', () => {
  it('waits Retry-After before retrying a rate limit, without spending the retry budget', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        calls += 1;
        if (calls <= 3) throw crm('rate_limited', { retryAfterMs: 1_500 });
        return 'ok';
      },
      { retries: 1, minTimeoutMs: 1, maxTimeoutMs: 1, sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('ok');
    expect(waits).toEqual([1_500, 1_500, 1_500]);
  });

  it('gives up on a Retry-After longer than the maximum', async () => {
    let calls = 0;
    await expect(
      withRetry(async () => {
        calls += 1;
        throw crm('rate_limited', { retryAfterMs: 3_600_000 });
      }, { maxRetryAfterMs: 60_000, minTimeoutMs: 1, sleep: async () => undefined }),
    ).rejects.toThrow(CrmError);
    expect(calls).toBe(1);
  });

  it.each(['permanent', 'quota', 'auth'] as const)('never retries a %s error', async (kind) => {
    let calls = 0;
    await expect(withRetry(async () => { calls += 1; throw crm(kind); }, { minTimeoutMs: 1, sleep: async () => undefined })).rejects.toThrow();
    expect(calls).toBe(1);
  });

  it('retries transient errors `retries` times, then gives up', async () => {
    let calls = 0;
    await expect(withRetry(async () => { calls += 1; throw crm('transient'); }, { retries: 3, minTimeoutMs: 1, maxTimeoutMs: 1, sleep: async () => undefined })).rejects.toThrow();
    expect(calls).toBe(4);
  });
});
