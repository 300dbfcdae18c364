/**
 * extend(): the spread's result, in an object the size of its properties. The engine keeps one
 * planned and one claimed record per line in flight; built as `{ ...item, more }` each took
 * several times the heap of the same properties copied onto a fresh object.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { engineContext } from '../../src/engine/create-sync.js';
import { forClaim, prepareAll } from '../../src/engine/prepare.js';
import { extend } from '../../src/extend.js';
import { memoryLedger } from '../../src/ledger/memory.js';
import { memoryCrm } from '../helpers/memory-crm.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap bytes retained per element of what `make` returns (a full GC before and after). */
function retainedPerItem<T>(n: number, make: () => T[]): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = make();
  gc();
  const after = process.memoryUsage().heapUsed;
  expect(kept).toHaveLength(n);
  return (after - before) / n;
}

describe('extend', () => {
  it('gives what the spread gives: own enumerable properties, later ones winning, the base untouched', () => {
    const sym = Symbol('s');
    const base = { a: 1, b: 'two', [sym]: true } as { a: number; b: string; [sym]: boolean };
    Object.defineProperty(base, 'hidden', { value: 1, enumerable: false });
    const out = extend(base, { b: 'three', c: null });
    expect(out).toEqual({ ...base, b: 'three', c: null });
    expect(out[sym]).toBe(true);
    expect(Object.keys(out)).toEqual(['a', 'b', 'c']);
    expect('hidden' in out).toBe(false);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(base).toEqual({ a: 1, b: 'two', [sym]: true });
  });

  it('keeps a claimed upsert record (the planned action with its mark id and fields hash) small', () => {
    const crm = memoryCrm();
    const ctx = engineContext({ adapter: crm.adapter, ledger: memoryLedger(), now: () => 0, sleep: async () => undefined });
    const n = 20_000;
    const inputs = Array.from({ length: n }, (_, i) => ({ source: 's', eventId: `e${i}`, op: 'upsert', object: 'contact', externalId: `c-${i}`, fields: { email: `p${i}@example.com` } }));
    const { planned } = prepareAll(ctx, inputs);
    expect(planned).toHaveLength(n);
    // The object with its two new strings (each a 32-character hash with its source): about
    // 400 bytes; the spread-built record took about 750.
    const bytes = retainedPerItem(n, () => planned.map((p) => forClaim(ctx, p)));
    expect(bytes).toBeLessThan(550);
  });
});
