/**
 * Marks: stored with an accepted complete or fail, returned with a later claim.
 */
import { LEASE, T0, req, type SuiteContext } from './harness.js';

export function marksSuite({ t: { describe, it, expect }, ledger, claimOne }: SuiteContext): void {
  describe('marks', () => {
    it('returns a mark stored by complete with a later claim', async () => {
      const first = await claimOne(req('k1', { markId: 'contact:zd-42' }), T0);
      expect(first.mark).toBeUndefined();
      await ledger().complete([{ key: 'k1', token: first.token!, result: 'ok', mark: { id: 'contact:zd-42', value: 'hash-1' } }], T0 + 1);
      const second = await claimOne(req('k2', { markId: 'contact:zd-42' }), T0 + 2);
      expect(second).toMatchObject({ outcome: 'claimed', mark: 'hash-1' });
      await ledger().complete([{ key: 'k2', token: second.token!, result: 'ok', mark: { id: 'contact:zd-42', value: 'hash-2' } }], T0 + 3);
      expect((await claimOne(req('k3', { markId: 'contact:zd-42' }), T0 + 4)).mark).toBe('hash-2');
      expect((await claimOne(req('k1', { markId: 'contact:zd-42' }), T0 + 4))).toMatchObject({ outcome: 'completed', mark: 'hash-2' });
      expect((await claimOne(req('k4'), T0 + 4)).mark).toBeUndefined();
    });

    it('stores the mark of an accepted fail, not that of a fenced-out one', async () => {
      const a = await claimOne(req('k1'), T0);
      await claimOne(req('k1'), T0 + LEASE);
      expect(await ledger().fail([{ key: 'k1', token: a.token!, error: 'A', mark: { id: 'm', value: 'from A' } }], T0 + LEASE + 1)).toEqual([false]);
      expect((await claimOne(req('k2', { markId: 'm' }), T0 + LEASE + 2)).mark).toBeUndefined();
      expect(await ledger().fail([{ key: 'k1', token: 2, error: 'B', mark: { id: 'm', value: 'possibly written' } }], T0 + LEASE + 3)).toEqual([true]);
      expect((await claimOne(req('k3', { markId: 'm' }), T0 + LEASE + 4)).mark).toBe('possibly written');
    });

    it('does not store the mark of a fenced-out complete', async () => {
      const a = await claimOne(req('k1'), T0);
      await claimOne(req('k1'), T0 + LEASE + 1);
      await ledger().complete([{ key: 'k1', token: a.token!, result: 'A', mark: { id: 'm', value: 'from A' } }], T0 + LEASE + 2);
      expect((await claimOne(req('k2', { markId: 'm' }), T0 + LEASE + 3)).mark).toBeUndefined();
    });
  });
}
