/**
 * Birth: when the ledger began remembering, kept once and answered the same ever after, so an
 * event older than the ledger is known to be one it cannot remember.
 */
import { LEASE, T0, req, type SuiteContext } from './harness.js';

export function birthSuite({ t, ledger, claimOne }: SuiteContext): void {
  const { describe, it, expect } = t;
  const bornAt = async (): Promise<number | null> => {
    const fn = ledger().bornAt;
    expect(typeof fn, 'bornAt').toBe('function');
    return fn!.call(ledger());
  };

  describe('birth', () => {
    it('knows when it was born: a moment ago, on its own clock when it has one', async () => {
      const born = await bornAt();
      const now = ledger().clock ? await ledger().clock!() : Date.now();
      expect(Number.isInteger(born)).toBe(true);
      expect(now).toBeGreaterThanOrEqual(born!);
      expect(now - born!).toBeLessThan(60_000);
    });

    it('answers the same birth ever after, whatever it stores, settles or prunes', async () => {
      const born = await bornAt();
      const { token } = await claimOne(req('k1'), T0);
      await ledger().complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: 1 }], T0 + 1);
      const other = await claimOne(req('k2'), T0 + 2);
      await ledger().fail([{ key: 'k2', token: other.token!, error: 'x' }], T0 + 3);
      await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 4);
      expect(await ledger().prune(T0 + LEASE, T0 + LEASE)).toBeGreaterThan(0);
      expect(await bornAt()).toBe(born);
    });

    it('gives concurrent first askers one birth', async () => {
      const asked = await Promise.all(Array.from({ length: 8 }, () => bornAt()));
      expect(new Set(asked).size).toBe(1);
      expect(await bornAt()).toBe(asked[0]);
    });
  });
}
