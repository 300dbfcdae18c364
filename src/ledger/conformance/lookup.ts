/**
 * getMany: the read-only batched lookup the engine answers repeats from. It reports every entry as
 * `get` does, in the order asked, and changes nothing: no entry, lease, token or index moves.
 */
import { LEASE, T0, req, type SuiteContext } from './harness.js';

export function lookupSuite({ t: { describe, it, expect, readOnly }, ledger, claimOne }: SuiteContext): void {
  describe('getMany', () => {
    const getMany = (keys: string[]) => {
      const l = ledger();
      expect(typeof l.getMany).toBe('function');
      return l.getMany!(keys);
    };

    it('answers each key as get does, in the order asked, null where absent', async () => {
      const a = await claimOne(req('a', { owner: 'w1' }), T0);
      const b = await claimOne(req('b'), T0);
      const c = await claimOne(req('c'), T0);
      await ledger().complete([{ key: 'a', token: a.token!, result: { recordId: '101' }, retentionMs: 5_000 }], T0 + 1);
      await ledger().fail([{ key: 'b', token: b.token!, error: { message: 'no' } }], T0 + 2);
      const keys = ['c', 'missing', 'a', 'b', 'a'];
      const got = await getMany(keys);
      expect(got).toHaveLength(keys.length);
      expect(got).toEqual(await Promise.all(keys.map((k) => ledger().get(k))));
      expect(got[0]).toMatchObject({ key: 'c', status: 'in_progress', token: c.token, leaseUntil: T0 + LEASE });
      expect(got[1]).toBeNull();
      expect(got[2]).toMatchObject({ key: 'a', status: 'completed', result: { recordId: '101' }, owner: 'w1', expiresAt: T0 + 1 + 5_000 });
      expect(got[3]).toMatchObject({ key: 'b', status: 'failed', error: { message: 'no' } });
      expect(await getMany([])).toEqual([]);
    });

    it('writes nothing: absent keys stay absent, leases are not renewed, tokens do not move', async () => {
      const held = await claimOne(req('held', { leaseMs: 1_000 }), T0);
      expect(await getMany(['held', 'ghost'])).toHaveLength(2);
      expect(await ledger().get('ghost')).toBeNull();
      expect(await ledger().list()).toHaveLength(1);
      expect(await ledger().get('held')).toEqual(held.entry);
      // The lease read above was not extended: it still runs out when it did.
      expect(await claimOne(req('held'), T0 + 1_000)).toMatchObject({ outcome: 'claimed', token: held.token! + 1 });
      expect(await claimOne(req('ghost'), T0 + 1_000)).toMatchObject({ outcome: 'claimed', token: 1 });
    });

    it('keeps keys with unusual characters apart and reads a large batch', async () => {
      const odd = ['a:b', 'a b', 'a\u00e9', 'ключ', '🔑', "it's", 'x'.repeat(400)];
      const many = Array.from({ length: 1_500 }, (_, i) => `bulk-${i}`);
      await ledger().claim([...odd, ...many.filter((_, i) => i % 2 === 0)].map((k) => req(k)), T0);
      const got = await getMany([...odd, ...many]);
      expect(got.slice(0, odd.length).map((e) => e?.key)).toEqual(odd);
      expect(got.slice(odd.length).map((e) => e?.key ?? null)).toEqual(many.map((k, i) => (i % 2 === 0 ? k : null)));
    });

    if (readOnly) {
      it('reads through a read-only open, and finds nothing in a ledger that was never created', async () => {
        const { token } = await claimOne(req('k1'), T0);
        await ledger().complete([{ key: 'k1', token: token!, result: 'done' }], T0 + 1);
        const ro = await readOnly.openLast();
        try {
          expect(await ro.getMany!(['k1', 'k2'])).toEqual([await ledger().get('k1'), null]);
        } finally {
          await ro.close();
        }
        const fresh = await readOnly.openFresh();
        try {
          expect(await fresh.getMany!(['k1'])).toEqual([null]);
        } finally {
          await fresh.close();
        }
        expect(await readOnly.created()).toEqual([]);
      });
    }
  });
}
