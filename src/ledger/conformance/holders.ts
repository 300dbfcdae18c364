/**
 * Holders: a claim taken with `holds` points that mark at its key in the same round trip, and
 * `heldBy` reads the entry each mark points at, writing nothing. The engine finds through them
 * the claim writing a record (an upsert) when the CRM reports an activity's parent missing, and
 * whether that claim completed after the activity looked for its parent (the entry's `updatedAt`
 * is the `now` it was completed at).
 */
import { FP, LEASE, T0, req, type SuiteContext } from './harness.js';

export function holdersSuite({ t: { describe, it, expect, readOnly }, ledger, claimOne }: SuiteContext): void {
  describe('holders', () => {
    const heldBy = (ids: string[]) => {
      const l = ledger();
      expect(typeof l.heldBy).toBe('function');
      return l.heldBy!(ids);
    };

    it('points the mark at the key that took the claim and reads its entry as get does, in the order asked', async () => {
      const a = await claimOne(req('a', { holds: 'h:contact-1', owner: 'w1' }), T0);
      await claimOne(req('b', { holds: 'h:contact-2' }), T0);
      expect(await heldBy(['h:contact-2', 'h:none', 'h:contact-1'])).toEqual([await ledger().get('b'), null, await ledger().get('a')]);
      expect((await heldBy(['h:contact-1']))[0]).toMatchObject({ key: 'a', status: 'in_progress', leaseUntil: T0 + LEASE, owner: 'w1' });
      // The entry as it is now, not as it was when the mark was set.
      await ledger().complete([{ key: 'a', token: a.token!, result: 'ok' }], T0 + 1);
      expect((await heldBy(['h:contact-1']))[0]).toMatchObject({ key: 'a', status: 'completed', leaseUntil: null, updatedAt: T0 + 1, result: 'ok' });
      expect(await heldBy([])).toEqual([]);
    });

    it('moves only with a claim that is taken: fresh, takeover, retry of a failed entry', async () => {
      await claimOne(req('a', { holds: 'h' }), T0);
      // Not taken: held by a live lease, completed, failed without retry, another identity.
      expect(await claimOne(req('a', { holds: 'h2' }), T0 + 1)).toMatchObject({ outcome: 'in_progress' });
      const b = await claimOne(req('b'), T0);
      await ledger().complete([{ key: 'b', token: b.token!, result: 'ok' }], T0 + 1);
      const c = await claimOne(req('c'), T0);
      await ledger().fail([{ key: 'c', token: c.token!, error: 'no' }], T0 + 1);
      expect(await claimOne(req('b', { holds: 'h' }), T0 + 2)).toMatchObject({ outcome: 'completed' });
      expect(await claimOne(req('c', { holds: 'h' }), T0 + 2)).toMatchObject({ outcome: 'failed' });
      expect(await claimOne({ key: 'a', fingerprint: `${FP}-other`, leaseMs: LEASE, holds: 'h' }, T0 + 2)).toMatchObject({ outcome: 'conflict' });
      expect(await heldBy(['h', 'h2'])).toEqual([await ledger().get('a'), null]);
      // Taken: a retry of the failed entry, then a takeover of the expired lease.
      expect(await claimOne(req('c', { holds: 'h', retryFailed: true }), T0 + 3)).toMatchObject({ outcome: 'claimed' });
      expect((await heldBy(['h']))[0]).toMatchObject({ key: 'c', status: 'in_progress' });
      expect(await claimOne(req('a', { holds: 'h', owner: 'w2' }), T0 + LEASE)).toMatchObject({ outcome: 'claimed', token: 2 });
      expect((await heldBy(['h']))[0]).toMatchObject({ key: 'a', token: 2, owner: 'w2' });
    });

    it('is set by the first of a key repeated in one batch, and a claim reports the marks as they were before it', async () => {
      const [first, repeat] = await ledger().claim([req('k', { holds: 'h1', markId: 'h1' }), req('k', { holds: 'h2' })], T0);
      expect(first).toMatchObject({ outcome: 'claimed' });
      expect(first!.mark).toBeUndefined();
      expect(repeat).toMatchObject({ outcome: 'in_progress' });
      expect((await heldBy(['h1', 'h2'])).map((e) => e?.key ?? null)).toEqual(['k', null]);
      expect((await claimOne(req('k2', { markId: 'h1' }), T0 + 1)).mark).toBe('k');
    });

    it('writes nothing, and reads null once the entry it names is gone', async () => {
      const a = await claimOne(req('a', { holds: 'h', leaseMs: 1_000 }), T0);
      expect((await heldBy(['h']))[0]).toEqual(a.entry);
      // The lease read above was not extended.
      expect(await claimOne(req('a'), T0 + 1_000)).toMatchObject({ outcome: 'claimed', token: a.token! + 1 });
      await ledger().complete([{ key: 'a', token: a.token! + 1, result: 'ok', retentionMs: 10 }], T0 + 1_001);
      await ledger().prune(T0 + 1_011);
      expect(await heldBy(['h'])).toEqual([null]);
      expect(await ledger().list()).toHaveLength(0);
    });

    it('answers a taken claim with the claim the mark named before it: its key, status and lease', async () => {
      const a = await claimOne(req('a', { holds: 'h' }), T0);
      expect(a.holder).toBeUndefined();
      // Another key writing the same record while a holds it: a is reported live.
      const b = await claimOne(req('b', { holds: 'h' }), T0 + 1);
      expect(b.holder).toEqual({ key: 'a', status: 'in_progress', leaseUntil: T0 + LEASE });
      await ledger().complete([{ key: 'a', token: a.token!, result: 'ok' }], T0 + 2);
      await ledger().fail([{ key: 'b', token: b.token!, error: 'no' }], T0 + 3);
      expect((await claimOne(req('c', { holds: 'h' }), T0 + 4)).holder).toEqual({ key: 'b', status: 'failed', leaseUntil: null });
      // Not taken: no holder. The key the mark names itself: no holder.
      expect((await claimOne(req('c', { holds: 'h' }), T0 + 5)).holder).toBeUndefined();
      await ledger().release([{ key: 'c', token: 1 }], T0 + 6);
      const again = await claimOne(req('c', { holds: 'h' }), T0 + 6);
      expect(again).toMatchObject({ outcome: 'claimed' });
      expect(again.holder).toBeUndefined();
      // A mark naming a key whose entry is gone names no holder.
      expect((await claimOne(req('d', { holds: 'h-unset' }), T0 + 7)).holder).toBeUndefined();
    });

    it('reads marks as stored, in the order asked, writing nothing', async () => {
      const l = ledger();
      expect(typeof l.readMarks).toBe('function');
      const a = await claimOne(req('a', { holds: 'h' }), T0);
      await l.complete([{ key: 'a', token: a.token!, result: 'ok', mark: { id: 'm1', value: '{"h":"x"}' } }], T0 + 1);
      expect(await l.readMarks!(['m2', 'm1', 'h'])).toEqual([null, '{"h":"x"}', 'a']);
      expect(await l.readMarks!([])).toEqual([]);
      expect((await claimOne(req('b', { markId: 'm1' }), T0 + 2)).mark).toBe('{"h":"x"}');
    });

    if (readOnly) {
      it('reads through a read-only open, and finds nothing in a ledger that was never created', async () => {
        await claimOne(req('k1', { holds: 'h' }), T0);
        const ro = await readOnly.openLast();
        try {
          expect(await ro.heldBy!(['h', 'h2'])).toEqual([await ledger().get('k1'), null]);
        } finally {
          await ro.close();
        }
        const fresh = await readOnly.openFresh();
        try {
          expect(await fresh.heldBy!(['h'])).toEqual([null]);
        } finally {
          await fresh.close();
        }
        expect(await readOnly.created()).toEqual([]);
      });
    }
  });
}
