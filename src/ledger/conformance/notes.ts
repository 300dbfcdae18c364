/**
 * Notes: the holder of a claim leaves a note of work under way as its entry's `result`, fenced by
 * its token, and whoever takes the claim over reads it; `complete` replaces it, and a fresh entry
 * starts without one.
 */
import { ValidationError } from '../../errors.js';
import type { Json, NoteRequest } from '../types.js';
import { LEASE, T0, req, type SuiteContext } from './harness.js';
import { STORED_JSON } from './storage.js';

/** What a Salesforce Bulk lane notes once its rows are in a job. */
const BULK = { bulkJob: '750xx', uploaded: true, attempt: 1 };

export function notesSuite({ t: { describe, it, expect }, ledger, claimOne }: SuiteContext): void {
  describe('notes', () => {
    const note = (requests: NoteRequest[], now: number) => {
      const l = ledger();
      expect(typeof l.note).toBe('function');
      return l.note!(requests, now);
    };

    it('stores a note on a held claim as its result, changing nothing else; a later note replaces it', async () => {
      const { token } = await claimOne(req('k1', { owner: 'w1' }), T0);
      const before = (await ledger().get('k1'))!;
      expect(before.result).toBeNull();
      expect(await note([{ key: 'k1', token: token!, note: BULK }], T0 + 5)).toEqual([true]);
      const noted = { ...before, result: BULK, updatedAt: T0 + 5 };
      expect(await ledger().get('k1')).toEqual(noted);
      expect(await ledger().getMany!(['k1'])).toEqual([noted]);
      expect(await ledger().list({ status: 'in_progress' })).toEqual([noted]);
      expect(await note([{ key: 'k1', token: token!, note: { ...BULK, attempt: 2 } }], T0 + 6)).toEqual([true]);
      expect(await ledger().get('k1')).toEqual({ ...before, result: { ...BULK, attempt: 2 }, updatedAt: T0 + 6 });
      // A live claim: the note neither extended nor ended the lease.
      expect(await claimOne(req('k1'), T0 + LEASE - 1)).toMatchObject({ outcome: 'in_progress' });
    });

    it('is fenced like complete: refused with another token, once settled, and for an absent key', async () => {
      const a = await claimOne(req('k1'), T0);
      const b = await claimOne(req('k1'), T0 + LEASE);
      expect(b.token).toBe(a.token! + 1);
      const held = await ledger().get('k1');
      expect(await note([{ key: 'k1', token: a.token!, note: 'from A' }], T0 + LEASE + 1)).toEqual([false]);
      expect(await note([{ key: 'k1', token: b.token! + 1, note: 'from the future' }], T0 + LEASE + 1)).toEqual([false]);
      expect(await ledger().get('k1')).toEqual(held);

      const c = await claimOne(req('k2'), T0);
      await ledger().complete([{ key: 'k2', token: c.token!, result: { id: '0031x' } }], T0 + 1);
      expect(await note([{ key: 'k2', token: c.token!, note: BULK }], T0 + 2)).toEqual([false]);
      expect(await ledger().get('k2')).toMatchObject({ status: 'completed', result: { id: '0031x' }, updatedAt: T0 + 1 });

      const d = await claimOne(req('k3'), T0);
      await ledger().fail([{ key: 'k3', token: d.token!, error: 'no' }], T0 + 1);
      const failed = await ledger().get('k3');
      expect(await note([{ key: 'k3', token: d.token!, note: BULK }], T0 + 2)).toEqual([false]);
      expect(await ledger().get('k3')).toEqual(failed);

      expect(await note([{ key: 'ghost', token: 1, note: BULK }], T0)).toEqual([false]);
      expect(await ledger().get('ghost')).toBeNull();
    });

    it('is kept across a takeover: the next holder reads it in its claim and in get, and notes in turn', async () => {
      const a = await claimOne(req('k1'), T0);
      await note([{ key: 'k1', token: a.token!, note: BULK }], T0 + 1);
      const b = await claimOne(req('k1', { owner: 'w2' }), T0 + LEASE);
      expect(b).toMatchObject({ outcome: 'claimed', token: a.token! + 1, entry: { status: 'in_progress', attempts: 2, result: BULK, owner: 'w2' } });
      expect(await ledger().get('k1')).toEqual(b.entry);
      // The holder that was taken over can no longer write over its successor's note.
      expect(await note([{ key: 'k1', token: a.token!, note: 'stale' }], T0 + LEASE + 1)).toEqual([false]);
      expect(await note([{ key: 'k1', token: b.token!, note: { ...BULK, attempt: 2 } }], T0 + LEASE + 1)).toEqual([true]);
      expect((await ledger().get('k1'))!.result).toEqual({ ...BULK, attempt: 2 });
    });

    it('is kept by a claim after release, and by a retry of a failed entry with its error', async () => {
      const a = await claimOne(req('k1'), T0);
      await note([{ key: 'k1', token: a.token!, note: BULK }], T0 + 1);
      expect(await ledger().release([{ key: 'k1', token: a.token! }], T0 + 2)).toEqual([true]);
      expect(await ledger().get('k1')).toMatchObject({ status: 'in_progress', result: BULK, leaseUntil: T0 + 2 });
      expect(await claimOne(req('k1'), T0 + 2)).toMatchObject({ outcome: 'claimed', token: a.token! + 1, entry: { result: BULK } });

      const c = await claimOne(req('k2'), T0);
      await note([{ key: 'k2', token: c.token!, note: BULK }], T0 + 1);
      await ledger().fail([{ key: 'k2', token: c.token!, error: { code: 'crm' } }], T0 + 2);
      expect(await ledger().get('k2')).toMatchObject({ status: 'failed', result: BULK, error: { code: 'crm' } });
      const retry = await claimOne(req('k2', { retryFailed: true }), T0 + 3);
      expect(retry).toMatchObject({ outcome: 'claimed', entry: { status: 'in_progress', result: BULK, error: { code: 'crm' } } });
    });

    it('is replaced by the result of complete', async () => {
      const a = await claimOne(req('k1'), T0);
      await note([{ key: 'k1', token: a.token!, note: BULK }], T0 + 1);
      expect(await ledger().complete([{ key: 'k1', token: a.token!, result: { id: '0031x' } }], T0 + 2)).toEqual([true]);
      expect(await ledger().get('k1')).toMatchObject({ status: 'completed', result: { id: '0031x' }, error: null });
      expect(await claimOne(req('k1'), T0 + 3)).toMatchObject({ outcome: 'completed', entry: { result: { id: '0031x' } } });
    });

    it('answers a batch item by item, and a key repeated in it in order', async () => {
      const [a, b] = (await ledger().claim([req('a'), req('b')], T0)).map((r) => r.token!);
      expect(await note([{ key: 'a', token: a!, note: 'A' }, { key: 'b', token: b! + 1, note: 'B' }], T0 + 1)).toEqual([true, false]);
      expect((await ledger().getMany!(['a', 'b'])).map((e) => e!.result)).toEqual(['A', null]);
      expect(await note([
        { key: 'a', token: a!, note: 'first' }, { key: 'a', token: a! + 1, note: 'fenced out' }, { key: 'a', token: a!, note: 'second' },
        { key: 'b', token: b!, note: 'B' },
      ], T0 + 2)).toEqual([true, false, true, true]);
      expect((await ledger().getMany!(['a', 'b'])).map((e) => e!.result)).toEqual(['second', 'B']);
      expect(await note([], T0 + 3)).toEqual([]);
    });

    it('leaves nothing to a fresh entry: after retention expiry, or after a failed entry with a note was pruned', async () => {
      const a = await claimOne(req('k1'), T0);
      await note([{ key: 'k1', token: a.token!, note: BULK }], T0 + 1);
      await ledger().complete([{ key: 'k1', token: a.token!, result: 'done', retentionMs: 1000 }], T0 + 2);
      expect(await claimOne(req('k1'), T0 + 1002)).toMatchObject({ outcome: 'claimed', entry: { attempts: 1, result: null } });
      expect((await ledger().get('k1'))!.result).toBeNull();

      const b = await claimOne(req('k2'), T0);
      await note([{ key: 'k2', token: b.token!, note: BULK }], T0 + 1);
      await ledger().fail([{ key: 'k2', token: b.token!, error: 'no' }], T0 + 2);
      expect(await ledger().prune(T0 + 3, T0 + 3)).toBe(1);
      expect(await claimOne(req('k2'), T0 + 4)).toMatchObject({ outcome: 'claimed', entry: { attempts: 1, result: null, error: null } });
    });

    for (const [label, value] of STORED_JSON) it(`round-trips ${label} as a note`, async () => {
      const { token } = await claimOne(req('k1'), T0);
      await note([{ key: 'k1', token: token!, note: value }], T0 + 1);
      expect((await ledger().get('k1'))!.result).toEqual(value);
      expect((await claimOne(req('k1'), T0 + LEASE)).entry.result).toEqual(value);
    });

    it('refuses a note JSON cannot encode and writes none of its batch', async () => {
      const { token } = await claimOne(req('k1'), T0);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      for (const bad of [undefined, BigInt(10), cyclic, () => 1] as unknown as Json[]) {
        await expect(note([{ key: 'k1', token: token!, note: 'fine' }, { key: 'k1', token: token!, note: bad }], T0 + 1)).rejects.toThrow(ValidationError);
      }
      expect(await ledger().get('k1')).toMatchObject({ result: null, updatedAt: T0 });
    });
  });
}
