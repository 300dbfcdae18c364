/** The per-Sync parent memo: known ids and held absences expire, a write ends a hold, the size is bounded; a hold says when its read was made. */
import { describe, expect, it } from 'vitest';
import { parentMemo } from '../../../src/engine/parents.js';

describe('parentMemo', () => {
  it('holds an absent parent until its time runs out or an id for it is learnt', () => {
    let now = 1_000;
    const memo = parentMemo({ now: () => now, absentMs: 2_000, knownMs: 60_000 });
    memo.missing('contact\u0000C-1');
    memo.missing('contact\u0000C-2');
    expect([...memo.seed(['contact\u0000C-1', 'contact\u0000C-2']).absent]).toEqual(['contact\u0000C-1', 'contact\u0000C-2']);
    memo.known('contact\u0000C-2', '42');
    now += 1_999;
    expect(memo.seed(['contact\u0000C-1', 'contact\u0000C-2'])).toEqual({ memo: new Map([['contact\u0000C-2', '42']]), absent: new Set(['contact\u0000C-1']) });
    now += 1;
    expect(memo.seed(['contact\u0000C-1']).absent.size).toBe(0);
  });

  it('starts a hold at the time its read was made, and says when that was while it holds', () => {
    let now = 10_000;
    const memo = parentMemo({ now: () => now, absentMs: 2_000 });
    // The batch read at 9,000 and learnt the answer at 10,000: the hold runs from the read.
    memo.missing('contact\u0000C-1', 9_000);
    memo.missing('contact\u0000C-2');
    expect(memo.absentSince('contact\u0000C-1')).toBe(9_000);
    expect(memo.absentSince('contact\u0000C-2')).toBe(10_000);
    expect(memo.absentSince('contact\u0000C-3')).toBeUndefined();
    now = 11_000;
    expect([...memo.seed(['contact\u0000C-1', 'contact\u0000C-2']).absent]).toEqual(['contact\u0000C-2']);
    memo.known('contact\u0000C-2', '42');
    expect(memo.absentSince('contact\u0000C-2')).toBeUndefined();
  });

  it('drops an id the CRM said is gone and remembers it as gone (for a ledger mark still holding it); a newer id stays', () => {
    const memo = parentMemo({ now: () => 0, max: 2 });
    memo.known('company\u0000acme', '11');
    memo.gone('company\u0000acme', '11');
    expect(memo.seed(['company\u0000acme']).memo.size).toBe(0);
    expect(memo.isGone('company\u0000acme', '11')).toBe(true);
    expect(memo.isGone('company\u0000acme', '12')).toBe(false);
    // Read again under a new id: known, and the old one is still gone.
    memo.known('company\u0000acme', '12');
    memo.gone('company\u0000acme', '11');
    expect(memo.seed(['company\u0000acme']).memo).toEqual(new Map([['company\u0000acme', '12']]));
    // Bounded like the rest.
    memo.gone('company\u0000b', '1');
    memo.gone('company\u0000c', '2');
    expect(memo.isGone('company\u0000acme', '11')).toBe(false);
  });

  it('forgets known ids after knownMs, drops the oldest entries beyond max, and a miss replaces a known id', () => {
    let now = 0;
    const memo = parentMemo({ now: () => now, knownMs: 1_000, max: 2 });
    memo.known('a', '1');
    memo.known('b', '2');
    memo.known('c', '3');
    expect([...memo.seed(['a', 'b', 'c']).memo.keys()]).toEqual(['b', 'c']);
    memo.missing('b');
    expect(memo.seed(['b'])).toEqual({ memo: new Map(), absent: new Set(['b']) });
    now = 1_000;
    expect(memo.seed(['c']).memo.size).toBe(0);
  });
});
