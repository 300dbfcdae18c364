/** A queue whose Redis does not answer: the command fails with a connection error naming it (exit 4), without the password. */
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { connected } from '../../src/queue/target.js';

describe('connected', () => {
  it('gives up on an unreachable Redis after the timeout, with a connection error and no password', async () => {
    const target = { url: 'redis://user:s3cret-pw@127.0.0.1:1', name: 'unreachable' };
    const started = Date.now();
    const err = await connected(new Queue(target.name, { connection: { url: target.url } }), target, 300).catch((e: unknown) => e as Error & { code?: string });
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toBe('ETIMEDOUT');
    expect((err as Error).message).toBe("the queue's Redis at redis://127.0.0.1:1 did not answer within 300 ms");
    expect((err as Error).message).not.toContain('s3cret');
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
