/**
 * How long an event job waits for a parent record another event writes: half the time waited so
 * far, within [inFlightDelayMs, 30 s], until parentWaitMs has passed since the job was added; and
 * which runs wait at all (another worker holding what did not complete, or absent parents).
 */
import { describe, expect, it } from 'vitest';
import { LINK_NOT_FOUND, PARENT_DEFERRED, PARENT_NOT_FOUND } from '../../src/engine/defer.js';
import type { HandleResult, HandlerAction } from '../../src/engine/guarded.js';
import { PARENT_IN_FLIGHT } from '../../src/engine/parent-held.js';
import { ErrorCode } from '../../src/errors.js';
import type { Outcome, OutcomeStatus } from '../../src/outcome.js';
import { parentDelay, waitsFor } from '../../src/queue/run-event.js';

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

describe('waitsFor: what an event job that did not complete waits for, no attempt spent', () => {
  const contact = { op: 'upsert', object: 'contact', externalId: 'c-1', fields: {} } as HandlerAction;
  const note = { op: 'create', object: 'note', target: { object: 'contact', externalId: 'c-2' }, fields: {} } as HandlerAction;
  const outcome = (status: OutcomeStatus, vendorCode?: string): Outcome => ({
    key: `k-${status}`, status, attempts: 0, ...(vendorCode ? { error: { name: 'CrmError', code: ErrorCode.crm, message: 'x', vendorCode } } : {}),
  });
  const run = (status: HandleResult['status'], outcomes: Outcome[]): HandleResult => ({ key: 'evt', status, outcomes });

  it('waits on the other worker when every action that did not complete is held there (a note whose contact another worker is writing)', () => {
    expect(waitsFor(run('failed', [outcome('created'), outcome('in_flight', PARENT_IN_FLIGHT)]), [contact, note])).toBe('held');
    expect(waitsFor(run('in_flight', []), [])).toBe('held');
  });

  it('waits for the parent\'s event when the others failed as parent-absent, with held ones among them', () => {
    expect(waitsFor(run('failed', [outcome('in_flight', PARENT_IN_FLIGHT), outcome('failed', PARENT_NOT_FOUND)]), [note, note])).toBe('parent');
    expect(waitsFor(run('failed', [outcome('created'), outcome('failed', PARENT_DEFERRED)]), [contact, note])).toBe('parent');
  });

  it('waits for the linked record\'s event when a record or an activity failed only because a record it links to is absent', () => {
    const linkedNote = { ...note, target: { object: 'contact', externalId: 'c-1' } } as HandlerAction;
    // The contact links to a company no event has written yet; its note fails with it.
    expect(waitsFor(run('failed', [outcome('failed', LINK_NOT_FOUND), outcome('failed', PARENT_NOT_FOUND)]), [contact, linkedNote])).toBe('parent');
    expect(waitsFor(run('failed', [outcome('created'), outcome('failed', LINK_NOT_FOUND)]), [contact, note])).toBe('parent');
  });

  it('waits for nothing once an action failed for a reason of its own, or when the run completed', () => {
    expect(waitsFor(run('failed', [outcome('failed'), outcome('in_flight', PARENT_IN_FLIGHT)]), [contact, note])).toBeUndefined();
    expect(waitsFor(run('completed', [outcome('created')]), [contact])).toBeUndefined();
  });
});
