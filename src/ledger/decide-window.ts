/**
 * The one dedupe-window state machine: what acquiring a slot does. Memory and SQLite call it;
 * the Postgres SQL and the Redis Lua do the same, held to it by the conformance suite's window tests.
 */
import type { WindowAcquireRequest, WindowSlot } from './types.js';

export type StoredSlot = Omit<WindowSlot, 'acquired'>;

export interface WindowDecision {
  acquired: boolean;
  /** The slot as the request leaves it (what it reports). */
  slot: StoredSlot;
  /** What the store does: nothing, write `slot`, or delete the slot it has. */
  store: 'keep' | 'put' | 'delete';
}

/**
 * Another owner's live slot is refused; the owner's own confirmed slot is left as it is; anything
 * else (absent, expired, the owner's pending hold) starts a pending hold until `now + ttlMs`,
 * except that a probe (`ttlMs` 0) stores nothing and ends what it would have replaced.
 */
export function decideWindow(slot: StoredSlot | null, request: WindowAcquireRequest, now: number): WindowDecision {
  const live = slot !== null && slot.expiresAt > now;
  if (live && slot.owner !== request.owner) return { acquired: false, slot, store: 'keep' };
  if (live && slot.confirmed) return { acquired: true, slot, store: 'keep' };
  const next = { owner: request.owner, confirmed: false, expiresAt: now + request.ttlMs };
  return { acquired: true, slot: next, store: request.ttlMs > 0 ? 'put' : slot ? 'delete' : 'keep' };
}
