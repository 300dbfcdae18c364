/**
 * The store itself: its clock and durability, read-only opens, and what it keeps faithfully.
 */
import { LedgerError } from '../../errors.js';
import type { Json, LedgerBackend } from '../types.js';
import { LEASE, T0, req, type SuiteContext } from './harness.js';

/** JSON values a ledger must store and read back unchanged, as a result, an error or a note. */
export const STORED_JSON: readonly [string, Json][] = [
  ['a nested object', { id: '0031x000', props: { email: 'a@b.co', tags: ['x', 'y'], score: 12.5, ok: true, none: null }, list: [[1], [{ deep: { er: -3 } }]] }],
  ['unicode text', { note: 'Grüße, 東京 🚀 — “quotes” \\ back\\slash\n\ttab', rtl: 'שלום', zeroWidth: 'a\u200bb' }],
  ['a bare string', 'plain'],
  ['a number', -1234567.891],
  ['null', null],
  ['an array', [1, 'two', false, null, { three: 3 }]],
];

export function storageSuite({ t, ledger, claimOne }: SuiteContext): void {
  const { describe, it, expect } = t;
  describe('clock and durability', () => {
    const clockName = { true: 'reads its own clock: close to this machine, never going backwards', false: 'has no clock of its own' };
    it(t.clock === undefined ? 'reads its own clock, if it has one, like a shared ledger must' : clockName[`${t.clock}`], async () => {
      const clock = ledger().clock;
      if (t.clock !== undefined) expect(typeof clock).toBe(t.clock ? 'function' : 'undefined');
      if (!clock) return;
      const first = await ledger().clock!();
      const second = await ledger().clock!();
      expect(Number.isInteger(first)).toBe(true);
      expect(Math.abs(first - Date.now())).toBeLessThan(5000);
      expect(second).toBeGreaterThanOrEqual(first);
    });

    it(t.durable === undefined ? 'answers isDurable with a boolean, if at all' : `answers isDurable ${t.durable}`, async () => {
      const durable = await ledger().isDurable?.();
      if (t.durable !== undefined) expect(durable).toBe(t.durable);
      else expect(durable === undefined || typeof durable === 'boolean').toBe(true);
    });
  });

  if (t.readOnly) {
    const readOnly = t.readOnly;
    describe('opened with createSchema: false', () => {
      const writes = (l: LedgerBackend): [string, () => Promise<unknown>][] => [
        ['claim', () => l.claim([req('k1')], T0)],
        ['complete', () => l.complete([{ key: 'k1', token: 1, result: 'ok' }], T0)],
        ['fail', () => l.fail([{ key: 'k1', token: 1, error: 'x' }], T0)],
        ['release', () => l.release([{ key: 'k1', token: 1 }], T0)],
        ['renew', () => l.renew([{ key: 'k1', token: 1 }], LEASE, T0)],
        ...(l.note ? [['note', () => l.note!([{ key: 'k1', token: 1, note: 'x' }], T0)] as [string, () => Promise<unknown>]] : []),
        ['windowAcquire', () => l.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0)],
        ['windowSettle', () => l.windowSettle([{ id: 'w', owner: 'k1', ttlMs: null }], T0)],
        ['prune', () => l.prune(T0)],
      ];

      it('finds nothing in a ledger that was never created, refuses every write and creates nothing', async () => {
        const ro = await readOnly.openFresh();
        try {
          expect(await ro.get('k1')).toBeNull();
          expect(await ro.list()).toEqual([]);
          expect(await ro.list({ status: 'completed', after: 'a', limit: 5 })).toEqual([]);
          expect(await ro.bornAt?.()).toBeNull();
          for (const [what, write] of writes(ro)) {
            const error = await write().then(() => undefined, (err: unknown) => err);
            expect(error, what).toBeInstanceOf(LedgerError);
            expect((error as Error).message, what).toMatch(/read-only/);
          }
        } finally {
          await ro.close();
        }
        expect(await readOnly.created()).toEqual([]);
      });

      it('reads an existing ledger and still refuses writes', async () => {
        const { token } = await claimOne(req('k1', { owner: 'w1' }), T0);
        await ledger().complete([{ key: 'k1', token: token!, result: { id: 7 } }], T0 + 1);
        const ro = await readOnly.openLast();
        try {
          expect(await ro.get('k1')).toEqual(await ledger().get('k1'));
          // Its birth is stored with it: another open finds the same.
          const born = await ledger().bornAt!();
          expect(await ro.bornAt?.()).toBe(born);
          expect((await ro.list({ status: 'completed' })).map((e) => [e.key, e.owner])).toEqual([['k1', 'w1']]);
          await expect(ro.claim([req('k2')], T0 + 2)).rejects.toThrow(LedgerError);
          expect(await ledger().get('k2')).toBeNull();
        } finally {
          await ro.close();
        }
      });
    });
  }

  describe('stored JSON', () => {
    const values = STORED_JSON;
    for (const [label, value] of values) it(`round-trips ${label} as a result`, async () => {
      const { token } = await claimOne(req('k1'), T0);
      await ledger().complete([{ key: 'k1', token: token!, result: value }], T0 + 1);
      expect((await ledger().get('k1'))!.result).toEqual(value);
      expect((await claimOne(req('k1'), T0 + 2)).entry.result).toEqual(value);
      expect((await ledger().getMany!(['k1']))[0]!.result).toEqual(value);
    });

    for (const [label, value] of values) it(`round-trips ${label} as an error`, async () => {
      const { token } = await claimOne(req('k1'), T0);
      await ledger().fail([{ key: 'k1', token: token!, error: value }], T0 + 1);
      expect((await ledger().get('k1'))!.error).toEqual(value);
      expect((await ledger().list({ status: 'failed' }))[0]!.error).toEqual(value);
      expect((await ledger().getMany!(['k1']))[0]!.error).toEqual(value);
    });

    it('keeps keys with unusual characters apart', async () => {
      const keys = ['a:b', 'a b', 'a\u00e9', 'a/b?c=d&e', 'ключ', '🔑', "it's", 'x'.repeat(400)];
      const results = await ledger().claim(keys.map((k) => req(k)), T0);
      expect(results.map((r) => [r.key, r.outcome])).toEqual(keys.map((k) => [k, 'claimed']));
      for (const k of keys) expect((await ledger().get(k))!.key).toBe(k);
    });
  });
}
