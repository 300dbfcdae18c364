/**
 * Notes that arrive before their contact, walked with `applyEach` and counted on the fake
 * HubSpot's request log (over loopback): a note whose contact nothing has shown the Sync yet is
 * held back, not sent with a contact read that finds nothing, and goes out once its contact is
 * written (with no read at all) or at the end of the walk (the contacts still unknown read
 * together).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type Outcome, type Settled } from '../../src/index.js';
import { decodeActionFailure } from '../../src/engine/payloads.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const upsert = (n: number) => ({ source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@example.test` } });
const note = (n: number, text = `note ${n}`) => ({
  source: 'crm-test', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `C-${n}` },
  fields: { hs_note_body: text, hs_timestamp: '2026-11-29T10:00:00Z' },
});
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** Walks the inputs, recording each outcome once and how many inputs had been pulled when it came. */
async function walk(steps: AsyncIterable<Settled>, pulled: () => number) {
  const outcomes: Outcome[] = [];
  const settledAt: number[] = [];
  for await (const settled of steps) {
    for (const { index, outcome } of settled) {
      expect(outcomes[index]).toBeUndefined();
      outcomes[index] = outcome;
      settledAt[index] = pulled();
    }
  }
  return { outcomes, settledAt };
}

function counted<T>(items: readonly T[]) {
  let pulled = 0;
  return {
    pulled: () => pulled,
    async *stream(): AsyncIterable<T> {
      for (const item of items) {
        pulled += 1;
        yield item;
      }
    },
  };
}

function expectNotesOnce(h: Harness, n: number) {
  const keys = h.fake.records('notes').map((r) => r.properties.crm_upsert_key);
  expect(keys).toHaveLength(n);
  expect(new Set(keys).size).toBe(n);
}

describe('applyEach: creates whose parent is not known yet (hubspotAdapter over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());
  const sync = (options: Partial<Parameters<typeof createSync>[0]> = {}) =>
    createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure', ...options });

  it('holds notes back until their contacts are written later in the walk: all created, no contact read', async () => {
    h = await harness('loopback');
    const s = sync();
    // 100 notes, then their 100 contacts, then 100 more contacts.
    const list = [...range(0, 100).map((n) => note(n)), ...range(0, 200).map(upsert)];
    const input = counted(list);
    const { outcomes, settledAt } = await walk(s.applyEach(input.stream(), { batchSize: 50 }), input.pulled);
    expect(outcomes.map((o) => o.status)).toEqual(list.map(() => 'created'));
    expectNotesOnce(h, 100);
    expect(h.fake.count('contacts/batch/read')).toBe(0);
    // Sent as soon as 50 of them had their contact written, while the walk went on, in two requests.
    expect(Math.max(...settledAt.slice(0, 100))).toBeLessThan(list.length);
    expect(h.fake.count('notes/batch/create')).toBe(2);
    await s.close();
  });

  it('without it, the same walk reads contacts that are not there yet and fails those notes as parent-missing', async () => {
    h = await harness('loopback');
    const s = sync();
    const list = [...range(0, 100).map((n) => note(n)), ...range(0, 200).map(upsert)];
    const input = counted(list);
    const { outcomes } = await walk(s.applyEach(input.stream(), { batchSize: 50, deferUnknownParents: false }), input.pulled);
    expect(outcomes.slice(0, 100).every((o) => o.status === 'failed' && /does not exist in HubSpot/.test(o.error?.message ?? ''))).toBe(true);
    expect(h.fake.count('contacts/batch/read')).toBe(2);
    expectNotesOnce(h, 0);
    await s.close();
  });

  it.each([
    { deferUnknownParents: true, reads: 4 },
    { deferUnknownParents: false, reads: 20 },
  ])('reads the contacts still unknown at the end of the walk together, in full batches (deferUnknownParents: $deferUnknownParents)', async ({ deferUnknownParents, reads }) => {
    // The contacts exist in HubSpot already, written by another system: nothing in this ledger knows them.
    h = await harness('loopback');
    await sync().applyMany(range(0, 120).map(upsert));
    h.fake.core.resetLog();
    const s = sync();
    // Six notes on those contacts in every 30 lines, between unrelated contact upserts.
    const list = range(0, 20).flatMap((c) => [...range(c * 6, c * 6 + 6).map((n) => note(n)), ...range(1000 + c * 24, 1024 + c * 24).map(upsert)]);
    const { outcomes } = await walk(s.applyEach(list, { batchSize: 30, deferUnknownParents }), () => 0);
    expect(outcomes.map((o) => o.status)).toEqual(list.map(() => 'created'));
    expectNotesOnce(h, 120);
    // Sent with their chunk, every call of 30 lines reads its six contacts; held back, the notes
    // go out at the end in four calls of 30, one read each.
    expect(h.fake.count('contacts/batch/read')).toBe(reads);
    await s.close();
  });

  it('a held-back note is recorded as failed and surely unwritten: after a crash, retry-failed creates it once, with no lookup', async () => {
    h = await harness('loopback');
    const ledger = openLedger('memory:');
    const s = sync({ ledger });
    // The walk stops (the process dies) right after the notes were held back.
    let steps = 0;
    for await (const settled of s.applyEach(range(0, 10).map((n) => note(n)), { batchSize: 10 })) {
      expect(settled).toEqual([]);
      if (++steps === 2) break;
    }
    const failed = await ledger.list({ status: 'failed' });
    expect(failed).toHaveLength(10);
    for (const e of failed) {
      const stored = decodeActionFailure(e.error)!;
      expect(stored.error.message).toMatch(/parent contact "C-\d" is not known yet: the create was held back until it is, and not sent$/);
      expect(stored.error.retryable).toBe(true);
      expect(stored.retry?.possiblyWritten).toBe(false);
    }
    expect(h.fake.counts()).toEqual({});
    await sync({ ledger }).applyMany(range(0, 10).map(upsert));
    const again = await sync({ ledger }).retryStored(failed);
    expect(again.map((o) => o.status)).toEqual(range(0, 10).map(() => 'created'));
    expectNotesOnce(h, 10);
    expect(h.fake.count('associations')).toBe(0);
    expect(h.fake.count('notes/batch/read')).toBe(0);
  });

  it('a redelivered note with different text, held back twice in one walk, is still one note', async () => {
    h = await harness('loopback');
    const s = sync();
    const list = [note(1), note(1, 'note 1, written again by the model'), ...range(2, 60).map(upsert), upsert(1)];
    const { outcomes } = await walk(s.applyEach(list, { batchSize: 20 }), () => 0);
    expect(outcomes[0]!.status).toBe('created');
    expect(outcomes[1]!.status).toBe('replayed');
    expectNotesOnce(h, 1);
    expect(h.fake.count('contacts/batch/read')).toBe(0);
    await s.close();
  });

  it('holds at most maxDeferred: beyond, the oldest go out with their contacts read', async () => {
    h = await harness('loopback');
    const s = sync();
    const list = range(0, 100).map((n) => note(n));
    const input = counted(list);
    const { outcomes, settledAt } = await walk(s.applyEach(input.stream(), { batchSize: 10, maxDeferred: 30 }), input.pulled);
    expect(outcomes.every((o) => o.status === 'failed' && /does not exist in HubSpot/.test(o.error?.message ?? ''))).toBe(true);
    // The first ten were settled when 40 inputs had been read, not at the end.
    expect(Math.max(...settledAt.slice(0, 10))).toBe(40);
    expect(h.fake.count('contacts/batch/read')).toBe(10);
    await s.close();
  });

  it.each([0, -1, 2.5])('refuses maxDeferred %s', async (maxDeferred) => {
    h = await harness('loopback');
    const s = sync();
    await expect(walk(s.applyEach([note(1)], { maxDeferred }), () => 0)).rejects.toThrow(/maxDeferred/);
  });
});
