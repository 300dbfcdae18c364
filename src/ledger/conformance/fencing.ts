/**
 * Fencing: a claim's token guards every later write of it, and tokens never go backwards.
 */
import { LEASE, T0, req, type SuiteContext } from './harness.js';

export function fencingSuite({ t: { describe, it, expect }, ledger, claimOne }: SuiteContext): void {
  describe('fencing', () => {
    it('refuses complete, fail, release and renew with a stale token; the successor result stands', async () => {
      const a = await claimOne(req('k1'), T0);
      const b = await claimOne(req('k1'), T0 + LEASE + 1);
      expect(b.token).toBe(2);
      const later = T0 + LEASE + 2;
      expect(await ledger().complete([{ key: 'k1', token: a.token!, result: 'from A' }], later)).toEqual([false]);
      expect(await ledger().fail([{ key: 'k1', token: a.token!, error: 'from A' }], later)).toEqual([false]);
      expect(await ledger().renew([{ key: 'k1', token: a.token! }], LEASE, later)).toEqual([false]);
      expect(await ledger().release([{ key: 'k1', token: a.token! }], later)).toEqual([false]);
      expect(await ledger().get('k1')).toMatchObject({ status: 'in_progress', token: 2, leaseUntil: T0 + LEASE + 1 + LEASE });
      expect(await ledger().complete([{ key: 'k1', token: b.token!, result: 'from B' }], later + 1)).toEqual([true]);
      expect(await ledger().complete([{ key: 'k1', token: a.token!, result: 'from A' }], later + 2)).toEqual([false]);
      expect(await ledger().get('k1')).toMatchObject({ status: 'completed', result: 'from B', token: 2 });
    });

    it('refuses to complete or fail a key that is no longer in progress, even with its token', async () => {
      const { token } = await claimOne(req('k1'), T0);
      expect(await ledger().complete([{ key: 'k1', token: token!, result: 1 }], T0 + 1)).toEqual([true]);
      expect(await ledger().complete([{ key: 'k1', token: token!, result: 2 }], T0 + 2)).toEqual([false]);
      expect(await ledger().fail([{ key: 'k1', token: token!, error: 'late' }], T0 + 2)).toEqual([false]);
      expect(await ledger().get('k1')).toMatchObject({ status: 'completed', result: 1, error: null });
    });

    it('refuses every fenced write to an unknown key', async () => {
      expect(await ledger().complete([{ key: 'ghost', token: 1, result: null }], T0)).toEqual([false]);
      expect(await ledger().fail([{ key: 'ghost', token: 1, error: null }], T0)).toEqual([false]);
      expect(await ledger().release([{ key: 'ghost', token: 1 }], T0)).toEqual([false]);
      expect(await ledger().renew([{ key: 'ghost', token: 1 }], LEASE, T0)).toEqual([false]);
      expect(await ledger().get('ghost')).toBeNull();
    });

    it('answers a mixed batch item by item, in order', async () => {
      const claimed = await ledger().claim([req('a'), req('b'), req('c')], T0);
      const [a, b, c] = claimed.map((r) => r.token!);
      expect(await ledger().complete([
        { key: 'a', token: a!, result: 'A' }, { key: 'b', token: b! + 1, result: 'B' }, { key: 'c', token: c!, result: 'C' },
      ], T0 + 1)).toEqual([true, false, true]);
      expect(await ledger().fail([{ key: 'b', token: 99, error: 'x' }, { key: 'b', token: b!, error: 'y' }], T0 + 2)).toEqual([false, true]);
      expect((await ledger().get('b'))!.error).toBe('y');
    });

    it('makes a released key claimable at once with the next token', async () => {
      const { token } = await claimOne(req('k1'), T0);
      expect(await ledger().release([{ key: 'k1', token: token! }], T0 + 10)).toEqual([true]);
      expect((await ledger().get('k1'))!.status).toBe('in_progress');
      const next = await claimOne(req('k1'), T0 + 10);
      expect(next).toMatchObject({ outcome: 'claimed', token: 2 });
      expect(next.entry.attempts).toBe(2);
    });

    it('extends a live lease on renew', async () => {
      const { token } = await claimOne(req('k1'), T0);
      expect(await ledger().renew([{ key: 'k1', token: token! }], 2 * LEASE, T0 + LEASE - 1)).toEqual([true]);
      const entry = await ledger().get('k1');
      expect(entry).toMatchObject({ leaseUntil: T0 + LEASE - 1 + 2 * LEASE, token: 1, status: 'in_progress' });
      expect((await claimOne(req('k1'), T0 + LEASE + 1)).outcome).toBe('in_progress');
      expect((await claimOne(req('k1'), T0 + 3 * LEASE)).outcome).toBe('claimed');
    });
    it('refuses to renew a lease that already ran out', async () => {
      const { token } = await claimOne(req('k1'), T0);
      expect(await ledger().renew([{ key: 'k1', token: token! }], LEASE, T0 + LEASE + 1)).toEqual([false]);
      expect((await ledger().get('k1'))!.leaseUntil).toBe(T0 + LEASE);
    });

    it('answers empty batches with empty results', async () => {
      expect(await ledger().claim([], T0)).toEqual([]);
      expect(await ledger().complete([], T0)).toEqual([]);
      expect(await ledger().fail([], T0)).toEqual([]);
      expect(await ledger().release([], T0)).toEqual([]);
      expect(await ledger().renew([], LEASE, T0)).toEqual([]);
      expect(await ledger().windowAcquire([], T0)).toEqual([]);
      await expect(ledger().windowSettle([], T0)).resolves.toBeUndefined();
      expect(await ledger().list()).toEqual([]);
    });
  });

  describe('tokens never go backwards', () => {
    /** Tokens 1 -> 2 (takeover) -> completed with a retention of 1 s, ending at the returned time. */
    const claimTwiceAndComplete = async (): Promise<number> => {
      expect((await claimOne(req('k1'), T0)).token).toBe(1);
      expect((await claimOne(req('k1'), T0 + LEASE)).token).toBe(2);
      expect(await ledger().complete([{ key: 'k1', token: 2, result: 'B', retentionMs: 1000 }], T0 + LEASE + 1)).toEqual([true]);
      return T0 + LEASE + 1 + 1000;
    };
    const expectStaleRefused = async (tokens: number[], now: number) => {
      for (const token of tokens) {
        expect(await ledger().complete([{ key: 'k1', token, result: 'stale' }], now)).toEqual([false]);
        expect(await ledger().fail([{ key: 'k1', token, error: 'stale' }], now)).toEqual([false]);
        expect(await ledger().renew([{ key: 'k1', token }], LEASE, now)).toEqual([false]);
        expect(await ledger().release([{ key: 'k1', token }], now)).toEqual([false]);
      }
    };

    it('gives the next claim after retention expiry a higher token and refuses the stale ones', async () => {
      const expired = await claimTwiceAndComplete();
      const next = await claimOne(req('k1'), expired);
      expect(next).toMatchObject({ outcome: 'claimed', entry: { attempts: 1, result: null } });
      expect(next.token!).toBeGreaterThan(2);
      await expectStaleRefused([1, 2], expired + 1);
      expect(await ledger().get('k1')).toMatchObject({ status: 'in_progress', token: next.token });
      expect(await ledger().complete([{ key: 'k1', token: next.token!, result: 'C' }], expired + 2)).toEqual([true]);
    });

    it('gives the next claim after prune a higher token and refuses the stale ones', async () => {
      const expired = await claimTwiceAndComplete();
      expect(await ledger().prune(expired)).toBe(1);
      expect(await ledger().get('k1')).toBeNull();
      const next = await claimOne(req('k1'), expired + 1);
      expect(next).toMatchObject({ outcome: 'claimed', entry: { attempts: 1 } });
      expect(next.token!).toBeGreaterThan(2);
      await expectStaleRefused([1, 2], expired + 2);
      expect(await ledger().complete([{ key: 'k1', token: next.token!, result: 'C' }], expired + 3)).toEqual([true]);
      expect(await ledger().get('k1')).toMatchObject({ status: 'completed', result: 'C', token: next.token });
    });

    it('keeps counting after a failed entry was pruned by age', async () => {
      await claimOne(req('k1'), T0);
      await claimOne(req('k1'), T0 + LEASE);
      expect(await ledger().fail([{ key: 'k1', token: 2, error: 'x' }], T0 + LEASE + 1)).toEqual([true]);
      expect(await ledger().prune(T0 + LEASE + 2, T0 + LEASE + 2)).toBe(1);
      const next = await claimOne(req('k1'), T0 + LEASE + 3);
      expect(next.token!).toBeGreaterThan(2);
      await expectStaleRefused([1, 2], T0 + LEASE + 4);
    });
  });
}
