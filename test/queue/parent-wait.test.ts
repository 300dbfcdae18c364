/**
 * How long an event job waits for a parent record another event writes: half the time waited so
 * far, within [inFlightDelayMs, 30 s], until parentWaitMs has passed since the job was added.
 */
import { describe, expect, it } from 'vitest';
import { parentDelay } from '../../src/queue/run-event.js';

describe('parentDelay', () => {
  const o = { inFlightDelayMs: 1_000, parentWaitMs: 600_000 };

  it('waits at least inFlightDelayMs, then half the time waited, at most 30 s', () => {
    expect(parentDelay(0, 0, o)).toBe(1_000);
    expect(parentDelay(0, 1_500, o)).toBe(1_000);
    expect(parentDelay(0, 10_000, o)).toBe(5_000);
    expect(parentDelay(0, 59_000, o)).toBe(29_500);
    expect(parentDelay(0, 300_000, o)).toBe(30_000);
  });

  it('stops once parentWaitMs has passed since the job was added, and never waits with parentWaitMs 0', () => {
    expect(parentDelay(0, 599_999, o)).toBe(30_000);
    expect(parentDelay(0, 600_000, o)).toBeUndefined();
    expect(parentDelay(0, 0, { ...o, parentWaitMs: 0 })).toBeUndefined();
  });

  it('takes a job added in the future (clock skew between hosts) as added now', () => {
    expect(parentDelay(5_000, 0, o)).toBe(1_000);
  });
});
