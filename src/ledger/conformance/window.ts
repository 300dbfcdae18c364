/**
 * The dedupe window: slots held by one owner, set-if-absent with expiry.
 */
import { LEASE, T0, type SuiteContext } from './harness.js';

export function windowSuite({ t: { describe, it, expect }, ledger }: SuiteContext): void {
  describe('dedupe window', () => {
    it('acquires an absent slot as pending', async () => {
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0)).toEqual([
        { acquired: true, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE },
      ]);
    });

    it('refuses another owner while the slot is pending or confirmed, and names the holder', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 1)).toEqual([
        { acquired: false, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE },
      ]);
      await ledger().windowSettle([{ id: 'w', owner: 'k1', ttlMs: 600_000 }], T0 + 2);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + LEASE + 10)).toEqual([
        { acquired: false, owner: 'k1', confirmed: true, expiresAt: T0 + 2 + 600_000 },
      ]);
    });

    it('acquires again for the same owner', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
      const [slot] = await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + 5);
      expect(slot).toMatchObject({ acquired: true, owner: 'k1', confirmed: false });
    });

    it('confirms with a ttl counted from now', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
      await ledger().windowSettle([{ id: 'w', owner: 'k1', ttlMs: 600_000 }], T0 + 1000);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + 2000)).toEqual([
        { acquired: true, owner: 'k1', confirmed: true, expiresAt: T0 + 1000 + 600_000 },
      ]);
    });

    it('releases on settle with null, only for the owner', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
      await ledger().windowSettle([{ id: 'w', owner: 'k2', ttlMs: null }, { id: 'w', owner: 'k2', ttlMs: 600_000 }], T0 + 1);
      const [held] = await ledger().windowAcquire([{ id: 'w', owner: 'k3', ttlMs: LEASE }], T0 + 2);
      expect(held).toMatchObject({ acquired: false, owner: 'k1', confirmed: false });
      await ledger().windowSettle([{ id: 'w', owner: 'k1', ttlMs: null }], T0 + 3);
      const [taken] = await ledger().windowAcquire([{ id: 'w', owner: 'k3', ttlMs: LEASE }], T0 + 4);
      expect(taken).toEqual({ acquired: true, owner: 'k3', confirmed: false, expiresAt: T0 + 4 + LEASE });
    });

    it('hands an expired slot to a new owner', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: 1000 }], T0);
      await ledger().windowSettle([{ id: 'w', owner: 'k1', ttlMs: 5000 }], T0 + 10);
      const [slot] = await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: 1000 }], T0 + 10 + 5001);
      expect(slot).toEqual({ acquired: true, owner: 'k2', confirmed: false, expiresAt: T0 + 10 + 5001 + 1000 });
    });

    it('extends a pending hold to now + ttlMs when its owner acquires it again', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + LEASE - 1)).toEqual([
        { acquired: true, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE - 1 + LEASE },
      ]);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + LEASE + 1)).toEqual([
        { acquired: false, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE - 1 + LEASE },
      ]);
    });

    it('leaves a confirmed hold as it is when its owner acquires it again', async () => {
      await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
      await ledger().windowSettle([{ id: 'w', owner: 'k1', ttlMs: 600_000 }], T0 + 1);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + 500_000)).toEqual([
        { acquired: true, owner: 'k1', confirmed: true, expiresAt: T0 + 1 + 600_000 },
      ]);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 600_000)).toEqual([
        { acquired: false, owner: 'k1', confirmed: true, expiresAt: T0 + 1 + 600_000 },
      ]);
    });

    it('probes with ttlMs 0: reports the holder and stores nothing', async () => {
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k1', ttlMs: 0 }], T0)).toEqual([
        { acquired: true, owner: 'k1', confirmed: false, expiresAt: T0 },
      ]);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 1)).toEqual([
        { acquired: true, owner: 'k2', confirmed: false, expiresAt: T0 + 1 + LEASE },
      ]);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k3', ttlMs: 0 }], T0 + 2)).toEqual([
        { acquired: false, owner: 'k2', confirmed: false, expiresAt: T0 + 1 + LEASE },
      ]);
      await ledger().windowSettle([{ id: 'w', owner: 'k2', ttlMs: 600_000 }], T0 + 3);
      expect(await ledger().windowAcquire([{ id: 'w', owner: 'k2', ttlMs: 0 }, { id: 'w', owner: 'k3', ttlMs: 0 }], T0 + 4)).toEqual([
        { acquired: true, owner: 'k2', confirmed: true, expiresAt: T0 + 3 + 600_000 },
        { acquired: false, owner: 'k2', confirmed: true, expiresAt: T0 + 3 + 600_000 },
      ]);
      await ledger().windowAcquire([{ id: 'gone', owner: 'k1', ttlMs: 1000 }], T0);
      expect(await ledger().windowAcquire([{ id: 'gone', owner: 'k2', ttlMs: 0 }], T0 + 1000)).toEqual([
        { acquired: true, owner: 'k2', confirmed: false, expiresAt: T0 + 1000 },
      ]);
      expect(await ledger().windowAcquire([{ id: 'gone', owner: 'k3', ttlMs: LEASE }], T0 + 1001)).toMatchObject([{ acquired: true, owner: 'k3' }]);
    });

    it('answers a batch of slots in input order', async () => {
      await ledger().windowAcquire([{ id: 'w2', owner: 'x', ttlMs: LEASE }], T0);
      const slots = await ledger().windowAcquire([
        { id: 'w1', owner: 'a', ttlMs: LEASE }, { id: 'w2', owner: 'b', ttlMs: LEASE }, { id: 'w3', owner: 'c', ttlMs: LEASE },
      ], T0 + 1);
      expect(slots.map((s) => [s.acquired, s.owner])).toEqual([[true, 'a'], [false, 'x'], [true, 'c']]);
    });

    it('gives one slot to exactly one of 50 concurrent owners', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
        ledger().windowAcquire([{ id: 'hot', owner: `o${i}`, ttlMs: LEASE }], T0)));
      const winners = results.filter((r) => r[0]!.acquired);
      expect(winners).toHaveLength(1);
      const owner = winners[0]![0]!.owner;
      expect(results.every((r) => r[0]!.owner === owner)).toBe(true);
    });
  });
}
