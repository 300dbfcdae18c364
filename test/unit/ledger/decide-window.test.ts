import { describe, expect, it } from 'vitest';
import { decideWindow, type StoredSlot, type WindowDecision } from '../../../src/ledger/decide-window.js';

const T0 = Date.UTC(2026, 0, 1);
const pending = (owner: string, expiresAt: number): StoredSlot => ({ owner, confirmed: false, expiresAt });
const confirmed = (owner: string, expiresAt: number): StoredSlot => ({ owner, confirmed: true, expiresAt });

describe('decideWindow', () => {
  it.each<[string, StoredSlot | null, string, number, number, WindowDecision]>([
    ['absent: a pending hold', null, 'a', 1000, T0, { acquired: true, slot: pending('a', T0 + 1000), store: 'put' }],
    ['absent, a probe: reported, nothing stored', null, 'a', 0, T0, { acquired: true, slot: pending('a', T0), store: 'keep' }],
    ['held by another owner: refused, the holder named', pending('b', T0 + 5), 'a', 1000, T0, { acquired: false, slot: pending('b', T0 + 5), store: 'keep' }],
    ['confirmed by another owner: refused', confirmed('b', T0 + 5), 'a', 0, T0, { acquired: false, slot: confirmed('b', T0 + 5), store: 'keep' }],
    ['the owner\'s pending hold: extended', pending('a', T0 + 5), 'a', 1000, T0, { acquired: true, slot: pending('a', T0 + 1000), store: 'put' }],
    ['the owner\'s pending hold, a probe: ended', pending('a', T0 + 5), 'a', 0, T0, { acquired: true, slot: pending('a', T0), store: 'delete' }],
    ['the owner\'s confirmed slot: left as it is', confirmed('a', T0 + 5), 'a', 1000, T0, { acquired: true, slot: confirmed('a', T0 + 5), store: 'keep' }],
    ['expired at exactly now: a new owner takes it', confirmed('b', T0), 'a', 1000, T0, { acquired: true, slot: pending('a', T0 + 1000), store: 'put' }],
    ['expired, a probe: reported, the stale slot ended', pending('b', T0 - 1), 'a', 0, T0, { acquired: true, slot: pending('a', T0), store: 'delete' }],
  ])('%s', (_name, slot, owner, ttlMs, now, expected) => {
    expect(decideWindow(slot, { id: 'w', owner, ttlMs }, now)).toEqual(expected);
  });
});
