import { describe, expect, it } from 'vitest';
import { parseSlotOwner, slotOwner } from '../../../src/dedupe-window.js';
import { createSync } from '../../../src/engine/index.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import { ownerId } from '../../../src/owner.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');
const WINDOW = 10 * 60_000;

function setup() {
  const crm = memoryCrm();
  const clock = { t: T0 };
  const sync = createSync({
    adapter: crm.adapter,
    ledger: memoryLedger(),
    dedupeWindowMs: WINDOW,
    now: () => clock.t,
    sleep: async () => undefined,
    retry: { minTimeoutMs: 1, maxTimeoutMs: 2 },
  });
  return { crm, sync, clock };
}

/** A keyless note: no eventId, so only identity and time say whether it is a repeat. */
const keylessNote = (at: number, body: string, extra: Record<string, unknown> = {}) => ({
  source: 'gong',
  occurredAt: new Date(at).toISOString(),
  op: 'create',
  object: 'note',
  target: { object: 'contact', externalId: 'c-1' },
  fields: { body },
  ...extra,
});

describe('dedupe window', () => {
  it('suppresses 4 of 5 identical keyless actions inside the window, whatever their text', async () => {
    const { crm, sync, clock } = setup();
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    const outcomes = [];
    for (let i = 0; i < 5; i++) {
      outcomes.push(await sync.apply(keylessNote(clock.t, `call summary, take ${i}`)));
      clock.t += 60_000;
    }
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'suppressed', 'suppressed', 'suppressed', 'suppressed']);
    expect(crm.activities('note')).toHaveLength(1);
    expect(crm.activities('note')[0]!.fields.body).toBe('call summary, take 0');
  });

  it('suppresses identical keyless actions on either side of a bucket boundary', async () => {
    const { crm, sync, clock } = setup();
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    const boundary = Math.ceil(clock.t / WINDOW) * WINDOW;
    clock.t = boundary - 1_000;
    const before = await sync.apply(keylessNote(clock.t, 'one'));
    clock.t = boundary + 1_000;
    const after = await sync.apply(keylessNote(clock.t, 'two'));
    expect([before.status, after.status]).toEqual(['created', 'suppressed']);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('suppresses the second of two identical keyless actions across a bucket boundary in one call', async () => {
    const { crm, sync, clock } = setup();
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    const boundary = Math.ceil(clock.t / WINDOW) * WINDOW;
    const outcomes = await sync.applyMany([keylessNote(boundary - 1_000, 'one'), keylessNote(boundary + 1_000, 'two')]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'suppressed']);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('writes an identical keyless action again once the window has passed', async () => {
    const { crm, sync, clock } = setup();
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    await sync.apply(keylessNote(clock.t, 'one'));
    clock.t += WINDOW + 1;
    const later = await sync.apply(keylessNote(clock.t, 'one'));
    expect(later.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(2);
  });

  it('writes a keyless action with a different intent on the same record', async () => {
    const { crm, sync, clock } = setup();
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    await sync.apply(keylessNote(clock.t, 'summary', { intent: 'call-summary' }));
    const other = await sync.apply(keylessNote(clock.t, 'follow up', { intent: 'follow-up' }));
    expect(other.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(2);
  });

  it('does not let a failed first attempt suppress the retry', async () => {
    const { crm, sync, clock } = setup();
    const failed = await sync.apply(keylessNote(clock.t, 'one'));
    expect(failed.status).toBe('failed');
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    clock.t += 60_000;
    const retry = await sync.apply(keylessNote(clock.t, 'one, again'));
    expect(retry.status).toBe('created');
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('never suppresses actions that carry an event id', async () => {
    const { crm, sync, clock } = setup();
    await sync.apply({ source: 'crm', eventId: 'seed', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' } });
    const a = await sync.apply({ ...keylessNote(clock.t, 'one'), eventId: 'e1' });
    const b = await sync.apply({ ...keylessNote(clock.t, 'two'), eventId: 'e2' });
    expect([a.status, b.status]).toEqual(['created', 'created']);
    expect(crm.activities('note')).toHaveLength(2);
  });
});

describe('slot owners', () => {
  it.each([
    ['this process', slotOwner('v1:f:abc', T0), { key: 'v1:f:abc', at: T0, process: ownerId() }],
    ['a process whose start time is unknown', slotOwner('v1:f:abc', T0, 'host#x 42'), { key: 'v1:f:abc', at: T0, process: 'host#x 42' }],
    ['a slot stored before the process was recorded', `v1:f:abc@${T0}`, { key: 'v1:f:abc', at: T0 }],
  ])('names the holder of %s', (_name, owner, holder) => {
    expect(parseSlotOwner(owner)).toEqual(holder);
  });

  it('keeps the event time after the last @, where earlier versions read it', () => {
    const owner = slotOwner('v1:f:abc', T0);
    expect(Number(owner.slice(owner.lastIndexOf('@') + 1))).toBe(T0);
  });
});
