/**
 * The one conformance suite every ledger backend passes (src/ledger/types.ts is the spec).
 * Each backend's own test file only wires it up: `open` returns a fresh, empty ledger per test.
 * Time is always passed explicitly (`now`), never read from a clock.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { isLedgerBackend } from '../../src/ledger/index.js';
import type { ClaimRequest, Json, LedgerBackend } from '../../src/ledger/types.js';
import { compiledLedgerModule, removeCompiledLedgers } from '../helpers/compile-ledger.js';

export interface LedgerConformanceOptions {
  /** Skip the whole suite (service unreachable outside CI). */
  skip?: boolean;
  /** The ledgers `open` returns have a clock of their own (`clock()`). */
  clock: boolean;
  /** What `isDurable()` answers for the ledgers `open` returns. */
  durable: boolean;
  /** Opens with `createSchema: false`; absent for a backend that has no such option. */
  readOnly?: ReadOnlyWiring;
}

export interface ReadOnlyWiring {
  /** The store of the ledger `open` returned last, opened with createSchema: false. */
  openLast(): Promise<LedgerBackend>;
  /** A store that was never created, opened with createSchema: false. */
  openFresh(): Promise<LedgerBackend>;
  /** What exists of the store `openFresh` named last (tables, files, keys): empty when nothing was created. */
  created(): Promise<string[]>;
}

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const LEASE = 30_000;
const FP = 'fp-contact-upsert';

const req = (key: string, extra: Partial<ClaimRequest> = {}): ClaimRequest => ({ key, fingerprint: FP, leaseMs: LEASE, ...extra });

export function describeLedgerConformance(
  name: string,
  open: () => Promise<LedgerBackend>,
  opts: LedgerConformanceOptions,
): void {
  describe.skipIf(opts.skip === true)(`ledger conformance: ${name}`, () => {
    let ledger: LedgerBackend;

    beforeEach(async () => {
      ledger = await open();
    });
    afterEach(async () => {
      await ledger?.close();
    });

    const claimOne = async (r: ClaimRequest, now: number) => (await ledger.claim([r], now))[0]!;

    describe('claim', () => {
      it('implements every method of the contract', () => {
        expect(isLedgerBackend(ledger)).toBe(true);
        expect(ledger.name).toBe(name);
      });

      it('claims an absent key with token 1 and a lease', async () => {
        const r = await claimOne(req('k1'), T0);
        expect(r).toMatchObject({ key: 'k1', outcome: 'claimed', token: 1 });
        expect(r.entry).toEqual({
          key: 'k1', fingerprint: FP, status: 'in_progress', token: 1, leaseUntil: T0 + LEASE, attempts: 1,
          result: null, error: null, createdAt: T0, updatedAt: T0, expiresAt: null, owner: null,
        });
        expect(await ledger.get('k1')).toEqual(r.entry);
      });

      it('reports in_progress while another claim holds a live lease', async () => {
        await claimOne(req('k1'), T0);
        const r = await claimOne(req('k1'), T0 + LEASE - 1);
        expect(r.outcome).toBe('in_progress');
        expect(r.token).toBeUndefined();
        expect(r.entry).toMatchObject({ status: 'in_progress', token: 1, attempts: 1, leaseUntil: T0 + LEASE });
      });

      it('returns the stored result for a completed key', async () => {
        const { token } = await claimOne(req('k1'), T0);
        expect(await ledger.complete([{ key: 'k1', token: token!, result: { id: '101', created: true } }], T0 + 5)).toEqual([true]);
        const entry = await ledger.get('k1');
        expect(entry).toMatchObject({ status: 'completed', result: { id: '101', created: true }, leaseUntil: null, updatedAt: T0 + 5, expiresAt: null, token: 1 });
        const again = await claimOne(req('k1'), T0 + 10 * LEASE);
        expect(again.outcome).toBe('completed');
        expect(again.token).toBeUndefined();
        expect(again.entry.result).toEqual({ id: '101', created: true });
      });

      it('takes over an expired lease with the next token and attempt', async () => {
        await claimOne(req('k1'), T0);
        const r = await claimOne(req('k1', { leaseMs: 1000 }), T0 + LEASE + 1);
        expect(r).toMatchObject({ outcome: 'claimed', token: 2 });
        expect(r.entry).toMatchObject({ status: 'in_progress', token: 2, attempts: 2, leaseUntil: T0 + LEASE + 1 + 1000, createdAt: T0, updatedAt: T0 + LEASE + 1 });
      });

      it('counts lease and retention ends as reached at exactly leaseUntil and expiresAt', async () => {
        await claimOne(req('k1'), T0);
        expect((await claimOne(req('k1'), T0 + LEASE - 1)).outcome).toBe('in_progress');
        const taken = await claimOne(req('k1'), T0 + LEASE);
        expect(taken).toMatchObject({ outcome: 'claimed', token: 2 });
        await ledger.complete([{ key: 'k1', token: 2, result: 'ok', retentionMs: 1000 }], T0 + LEASE);
        expect(await ledger.prune(T0 + LEASE + 999)).toBe(0);
        expect(await ledger.prune(T0 + LEASE + 1000)).toBe(1);
      });

      it('reports a failed key as failed unless retryFailed is set', async () => {
        const { token } = await claimOne(req('k1'), T0);
        expect(await ledger.fail([{ key: 'k1', token: token!, error: { code: 'CRM', message: 'boom' } }], T0 + 1)).toEqual([true]);
        const failed = await claimOne(req('k1'), T0 + 2);
        expect(failed.outcome).toBe('failed');
        expect(failed.entry).toMatchObject({ status: 'failed', error: { code: 'CRM', message: 'boom' }, leaseUntil: null, updatedAt: T0 + 1 });
        const retried = await claimOne(req('k1', { retryFailed: true }), T0 + 3);
        expect(retried).toMatchObject({ outcome: 'claimed', token: 2 });
        expect(retried.entry).toMatchObject({ status: 'in_progress', attempts: 2, leaseUntil: T0 + 3 + LEASE });
        // The engine reads the failure it takes over (was the write possibly sent?): it must survive the claim.
        expect(retried.entry.error).toEqual({ code: 'CRM', message: 'boom' });
      });

      it.each([
        ['in_progress', async (_l: LedgerBackend, _t: number) => undefined],
        ['completed', async (l: LedgerBackend, t: number) => { await l.complete([{ key: 'k1', token: t, result: 'ok' }], T0 + 1); }],
        ['failed', async (l: LedgerBackend, t: number) => { await l.fail([{ key: 'k1', token: t, error: 'bad' }], T0 + 1); }],
      ])('reports a conflict for a different fingerprint when the key is %s', async (status, settle) => {
        const { token } = await claimOne(req('k1'), T0);
        await settle(ledger, token!);
        const r = await claimOne(req('k1', { fingerprint: 'fp-other', retryFailed: true }), T0 + 2);
        expect(r.outcome).toBe('conflict');
        expect(r.token).toBeUndefined();
        expect(r.entry).toMatchObject({ key: 'k1', fingerprint: FP, status, token: 1 });
      });

      it('reports a conflict instead of taking over an expired lease with a different fingerprint', async () => {
        await claimOne(req('k1'), T0);
        const r = await claimOne(req('k1', { fingerprint: 'fp-other' }), T0 + 10 * LEASE);
        expect(r.outcome).toBe('conflict');
        expect(await ledger.get('k1')).toMatchObject({ fingerprint: FP, token: 1 });
      });

      it('returns 500 results in input order for a batch of 500', async () => {
        const keys = Array.from({ length: 500 }, (_, i) => `batch-${String((i * 7919) % 500).padStart(3, '0')}`);
        const results = await ledger.claim(keys.map((k) => req(k)), T0);
        expect(results.map((r) => r.key)).toEqual(keys);
        expect(results.every((r) => r.outcome === 'claimed' && r.token === 1)).toBe(true);
        const done = await ledger.complete(results.map((r) => ({ key: r.key, token: r.token!, result: { k: r.key } })), T0 + 1);
        expect(done).toEqual(keys.map(() => true));
        const replay = await ledger.claim(keys.map((k) => req(k)), T0 + 2);
        expect(replay.map((r) => [r.key, r.outcome, r.entry.result])).toEqual(keys.map((k) => [k, 'completed', { k }]));
      });

      it('claims a key that appears several times in one batch exactly once', async () => {
        const results = await ledger.claim([req('dup'), req('other'), req('dup'), req('dup')], T0);
        expect(results.map((r) => r.key)).toEqual(['dup', 'other', 'dup', 'dup']);
        const dups = results.filter((r) => r.key === 'dup');
        expect(dups.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
        expect(dups.filter((r) => r.outcome === 'in_progress')).toHaveLength(2);
        expect(dups.every((r) => r.entry.token === 1)).toBe(true);
        expect(results[1]!.outcome).toBe('claimed');
      });

      it('gives exactly one of 50 concurrent claims of one key', async () => {
        const results = await Promise.all(Array.from({ length: 50 }, () => ledger.claim([req('hot')], T0)));
        const outcomes = results.map((r) => r[0]!.outcome);
        expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
        expect(outcomes.filter((o) => o === 'in_progress')).toHaveLength(49);
        expect(await ledger.get('hot')).toMatchObject({ token: 1, attempts: 1 });
      });

      it('returns null from get for an unknown key', async () => {
        expect(await ledger.get('nope')).toBeNull();
      });
    });

    describe('owner', () => {
      it('stores the owner of the request that takes the claim: fresh, takeover or retry', async () => {
        const a = await claimOne(req('k1', { owner: 'host-a 101 t0' }), T0);
        expect(a.entry.owner).toBe('host-a 101 t0');
        expect((await ledger.get('k1'))!.owner).toBe('host-a 101 t0');
        const held = await claimOne(req('k1', { owner: 'host-b 202 t1' }), T0 + 1);
        expect(held).toMatchObject({ outcome: 'in_progress', entry: { owner: 'host-a 101 t0' } });
        const b = await claimOne(req('k1', { owner: 'host-b 202 t1' }), T0 + LEASE);
        expect(b).toMatchObject({ outcome: 'claimed', token: 2, entry: { owner: 'host-b 202 t1' } });
        expect(await ledger.fail([{ key: 'k1', token: 2, error: 'x' }], T0 + LEASE + 1)).toEqual([true]);
        expect((await ledger.get('k1'))!.owner).toBe('host-b 202 t1');
        const c = await claimOne(req('k1', { owner: 'host-c 303 t2', retryFailed: true }), T0 + LEASE + 2);
        expect(c).toMatchObject({ outcome: 'claimed', token: 3, entry: { owner: 'host-c 303 t2' } });
        const d = await claimOne(req('k1'), T0 + 2 * LEASE + 2);
        expect(d).toMatchObject({ outcome: 'claimed', token: 4, entry: { owner: null } });
        expect((await ledger.list())[0]!.owner).toBeNull();
      });

      it('stores the owner of a claim that starts a key over after its retention', async () => {
        const { token } = await claimOne(req('k1', { owner: 'old' }), T0);
        await ledger.complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: 1000 }], T0 + 1);
        const again = await claimOne(req('k1', { owner: 'new' }), T0 + 2000);
        expect(again).toMatchObject({ outcome: 'claimed', entry: { owner: 'new', attempts: 1 } });
        expect((await ledger.get('k1'))!.owner).toBe('new');
      });

      it('keeps the owner of the first request of a key repeated in one batch', async () => {
        const results = await ledger.claim([req('dup', { owner: 'first' }), req('dup', { owner: 'second' })], T0);
        expect(results.map((r) => [r.outcome, r.entry.owner])).toEqual([['claimed', 'first'], ['in_progress', 'first']]);
      });
    });

    describe('fencing', () => {
      it('refuses complete, fail, release and renew with a stale token; the successor result stands', async () => {
        const a = await claimOne(req('k1'), T0);
        const b = await claimOne(req('k1'), T0 + LEASE + 1);
        expect(b.token).toBe(2);
        const later = T0 + LEASE + 2;
        expect(await ledger.complete([{ key: 'k1', token: a.token!, result: 'from A' }], later)).toEqual([false]);
        expect(await ledger.fail([{ key: 'k1', token: a.token!, error: 'from A' }], later)).toEqual([false]);
        expect(await ledger.renew([{ key: 'k1', token: a.token! }], LEASE, later)).toEqual([false]);
        expect(await ledger.release([{ key: 'k1', token: a.token! }], later)).toEqual([false]);
        expect(await ledger.get('k1')).toMatchObject({ status: 'in_progress', token: 2, leaseUntil: T0 + LEASE + 1 + LEASE });
        expect(await ledger.complete([{ key: 'k1', token: b.token!, result: 'from B' }], later + 1)).toEqual([true]);
        expect(await ledger.complete([{ key: 'k1', token: a.token!, result: 'from A' }], later + 2)).toEqual([false]);
        expect(await ledger.get('k1')).toMatchObject({ status: 'completed', result: 'from B', token: 2 });
      });

      it('refuses to complete or fail a key that is no longer in progress, even with its token', async () => {
        const { token } = await claimOne(req('k1'), T0);
        expect(await ledger.complete([{ key: 'k1', token: token!, result: 1 }], T0 + 1)).toEqual([true]);
        expect(await ledger.complete([{ key: 'k1', token: token!, result: 2 }], T0 + 2)).toEqual([false]);
        expect(await ledger.fail([{ key: 'k1', token: token!, error: 'late' }], T0 + 2)).toEqual([false]);
        expect(await ledger.get('k1')).toMatchObject({ status: 'completed', result: 1, error: null });
      });

      it('refuses every fenced write to an unknown key', async () => {
        expect(await ledger.complete([{ key: 'ghost', token: 1, result: null }], T0)).toEqual([false]);
        expect(await ledger.fail([{ key: 'ghost', token: 1, error: null }], T0)).toEqual([false]);
        expect(await ledger.release([{ key: 'ghost', token: 1 }], T0)).toEqual([false]);
        expect(await ledger.renew([{ key: 'ghost', token: 1 }], LEASE, T0)).toEqual([false]);
        expect(await ledger.get('ghost')).toBeNull();
      });

      it('answers a mixed batch item by item, in order', async () => {
        const claimed = await ledger.claim([req('a'), req('b'), req('c')], T0);
        const [a, b, c] = claimed.map((r) => r.token!);
        expect(await ledger.complete([
          { key: 'a', token: a!, result: 'A' }, { key: 'b', token: b! + 1, result: 'B' }, { key: 'c', token: c!, result: 'C' },
        ], T0 + 1)).toEqual([true, false, true]);
        expect(await ledger.fail([{ key: 'b', token: 99, error: 'x' }, { key: 'b', token: b!, error: 'y' }], T0 + 2)).toEqual([false, true]);
        expect((await ledger.get('b'))!.error).toBe('y');
      });

      it('makes a released key claimable at once with the next token', async () => {
        const { token } = await claimOne(req('k1'), T0);
        expect(await ledger.release([{ key: 'k1', token: token! }], T0 + 10)).toEqual([true]);
        expect((await ledger.get('k1'))!.status).toBe('in_progress');
        const next = await claimOne(req('k1'), T0 + 10);
        expect(next).toMatchObject({ outcome: 'claimed', token: 2 });
        expect(next.entry.attempts).toBe(2);
      });

      it('extends a live lease on renew', async () => {
        const { token } = await claimOne(req('k1'), T0);
        expect(await ledger.renew([{ key: 'k1', token: token! }], 2 * LEASE, T0 + LEASE - 1)).toEqual([true]);
        const entry = await ledger.get('k1');
        expect(entry).toMatchObject({ leaseUntil: T0 + LEASE - 1 + 2 * LEASE, token: 1, status: 'in_progress' });
        expect((await claimOne(req('k1'), T0 + LEASE + 1)).outcome).toBe('in_progress');
        expect((await claimOne(req('k1'), T0 + 3 * LEASE)).outcome).toBe('claimed');
      });
      it('refuses to renew a lease that already ran out', async () => {
        const { token } = await claimOne(req('k1'), T0);
        expect(await ledger.renew([{ key: 'k1', token: token! }], LEASE, T0 + LEASE + 1)).toEqual([false]);
        expect((await ledger.get('k1'))!.leaseUntil).toBe(T0 + LEASE);
      });

      it('answers empty batches with empty results', async () => {
        expect(await ledger.claim([], T0)).toEqual([]);
        expect(await ledger.complete([], T0)).toEqual([]);
        expect(await ledger.fail([], T0)).toEqual([]);
        expect(await ledger.release([], T0)).toEqual([]);
        expect(await ledger.renew([], LEASE, T0)).toEqual([]);
        expect(await ledger.windowAcquire([], T0)).toEqual([]);
        await expect(ledger.windowSettle([], T0)).resolves.toBeUndefined();
        expect(await ledger.list()).toEqual([]);
      });
    });

    describe('marks', () => {
      it('returns a mark stored by complete with a later claim', async () => {
        const first = await claimOne(req('k1', { markId: 'contact:zd-42' }), T0);
        expect(first.mark).toBeUndefined();
        await ledger.complete([{ key: 'k1', token: first.token!, result: 'ok', mark: { id: 'contact:zd-42', value: 'hash-1' } }], T0 + 1);
        const second = await claimOne(req('k2', { markId: 'contact:zd-42' }), T0 + 2);
        expect(second).toMatchObject({ outcome: 'claimed', mark: 'hash-1' });
        await ledger.complete([{ key: 'k2', token: second.token!, result: 'ok', mark: { id: 'contact:zd-42', value: 'hash-2' } }], T0 + 3);
        expect((await claimOne(req('k3', { markId: 'contact:zd-42' }), T0 + 4)).mark).toBe('hash-2');
        expect((await claimOne(req('k1', { markId: 'contact:zd-42' }), T0 + 4))).toMatchObject({ outcome: 'completed', mark: 'hash-2' });
        expect((await claimOne(req('k4'), T0 + 4)).mark).toBeUndefined();
      });

      it('stores the mark of an accepted fail, not that of a fenced-out one', async () => {
        const a = await claimOne(req('k1'), T0);
        await claimOne(req('k1'), T0 + LEASE);
        expect(await ledger.fail([{ key: 'k1', token: a.token!, error: 'A', mark: { id: 'm', value: 'from A' } }], T0 + LEASE + 1)).toEqual([false]);
        expect((await claimOne(req('k2', { markId: 'm' }), T0 + LEASE + 2)).mark).toBeUndefined();
        expect(await ledger.fail([{ key: 'k1', token: 2, error: 'B', mark: { id: 'm', value: 'possibly written' } }], T0 + LEASE + 3)).toEqual([true]);
        expect((await claimOne(req('k3', { markId: 'm' }), T0 + LEASE + 4)).mark).toBe('possibly written');
      });

      it('does not store the mark of a fenced-out complete', async () => {
        const a = await claimOne(req('k1'), T0);
        await claimOne(req('k1'), T0 + LEASE + 1);
        await ledger.complete([{ key: 'k1', token: a.token!, result: 'A', mark: { id: 'm', value: 'from A' } }], T0 + LEASE + 2);
        expect((await claimOne(req('k2', { markId: 'm' }), T0 + LEASE + 3)).mark).toBeUndefined();
      });
    });

    describe('retention and prune', () => {
      it('sets expiresAt from retentionMs and prunes the entry once it passed', async () => {
        const { token } = await claimOne(req('k1'), T0);
        await ledger.complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: 60_000 }], T0 + 100);
        expect((await ledger.get('k1'))!.expiresAt).toBe(T0 + 100 + 60_000);
        expect(await ledger.prune(T0 + 60_000)).toBe(0);
        expect((await claimOne(req('k1'), T0 + 60_000)).outcome).toBe('completed');
        expect(await ledger.prune(T0 + 100 + 60_001)).toBe(1);
        expect(await ledger.get('k1')).toBeNull();
        const again = await claimOne(req('k1'), T0 + 100 + 60_002);
        // the key is new again, but its token never goes backwards: a stale token 1 stays refused
        expect(again).toMatchObject({ outcome: 'claimed', token: 2, entry: { attempts: 1 } });
      });

      it('keeps an entry completed without retention', async () => {
        const { token } = await claimOne(req('k1'), T0);
        await ledger.complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: null }], T0 + 1);
        expect((await ledger.get('k1'))!.expiresAt).toBeNull();
        expect(await ledger.prune(T0 + 1e12)).toBe(0);
        expect((await ledger.get('k1'))!.status).toBe('completed');
      });

      it('treats a completed key past its retention as new before prune runs', async () => {
        const first = await claimOne(req('k1'), T0);
        await ledger.complete([{ key: 'k1', token: first.token!, result: 'ok', retentionMs: 1000 }], T0 + 1);
        const again = await claimOne(req('k1', { fingerprint: 'fp-next' }), T0 + 5000);
        expect(again.outcome).toBe('claimed');
        expect(again.token!).toBeGreaterThan(first.token!);
        expect(again.entry).toMatchObject({ status: 'in_progress', fingerprint: 'fp-next', attempts: 1, result: null, expiresAt: null, createdAt: T0 + 5000 });
      });

      it('prunes completed and failed entries last updated before olderThan, never in-progress ones', async () => {
        const claimed = await ledger.claim([req('old-done'), req('old-failed'), req('old-running'), req('new-done')], T0);
        const tok = Object.fromEntries(claimed.map((r) => [r.key, r.token!]));
        await ledger.complete([{ key: 'old-done', token: tok['old-done']!, result: 1 }], T0 + 10);
        await ledger.fail([{ key: 'old-failed', token: tok['old-failed']!, error: 'x' }], T0 + 10);
        await ledger.complete([{ key: 'new-done', token: tok['new-done']!, result: 2 }], T0 + 1000);
        expect(await ledger.prune(T0 + 2000, T0 + 500)).toBe(2);
        expect((await ledger.list()).map((e) => e.key)).toEqual(['new-done', 'old-running']);
      });
    });

    describe('tokens never go backwards', () => {
      /** Tokens 1 -> 2 (takeover) -> completed with a retention of 1 s, ending at the returned time. */
      const claimTwiceAndComplete = async (): Promise<number> => {
        expect((await claimOne(req('k1'), T0)).token).toBe(1);
        expect((await claimOne(req('k1'), T0 + LEASE)).token).toBe(2);
        expect(await ledger.complete([{ key: 'k1', token: 2, result: 'B', retentionMs: 1000 }], T0 + LEASE + 1)).toEqual([true]);
        return T0 + LEASE + 1 + 1000;
      };
      const expectStaleRefused = async (tokens: number[], now: number) => {
        for (const token of tokens) {
          expect(await ledger.complete([{ key: 'k1', token, result: 'stale' }], now)).toEqual([false]);
          expect(await ledger.fail([{ key: 'k1', token, error: 'stale' }], now)).toEqual([false]);
          expect(await ledger.renew([{ key: 'k1', token }], LEASE, now)).toEqual([false]);
          expect(await ledger.release([{ key: 'k1', token }], now)).toEqual([false]);
        }
      };

      it('gives the next claim after retention expiry a higher token and refuses the stale ones', async () => {
        const expired = await claimTwiceAndComplete();
        const next = await claimOne(req('k1'), expired);
        expect(next).toMatchObject({ outcome: 'claimed', entry: { attempts: 1, result: null } });
        expect(next.token!).toBeGreaterThan(2);
        await expectStaleRefused([1, 2], expired + 1);
        expect(await ledger.get('k1')).toMatchObject({ status: 'in_progress', token: next.token });
        expect(await ledger.complete([{ key: 'k1', token: next.token!, result: 'C' }], expired + 2)).toEqual([true]);
      });

      it('gives the next claim after prune a higher token and refuses the stale ones', async () => {
        const expired = await claimTwiceAndComplete();
        expect(await ledger.prune(expired)).toBe(1);
        expect(await ledger.get('k1')).toBeNull();
        const next = await claimOne(req('k1'), expired + 1);
        expect(next).toMatchObject({ outcome: 'claimed', entry: { attempts: 1 } });
        expect(next.token!).toBeGreaterThan(2);
        await expectStaleRefused([1, 2], expired + 2);
        expect(await ledger.complete([{ key: 'k1', token: next.token!, result: 'C' }], expired + 3)).toEqual([true]);
        expect(await ledger.get('k1')).toMatchObject({ status: 'completed', result: 'C', token: next.token });
      });

      it('keeps counting after a failed entry was pruned by age', async () => {
        await claimOne(req('k1'), T0);
        await claimOne(req('k1'), T0 + LEASE);
        expect(await ledger.fail([{ key: 'k1', token: 2, error: 'x' }], T0 + LEASE + 1)).toEqual([true]);
        expect(await ledger.prune(T0 + LEASE + 2, T0 + LEASE + 2)).toBe(1);
        const next = await claimOne(req('k1'), T0 + LEASE + 3);
        expect(next.token!).toBeGreaterThan(2);
        await expectStaleRefused([1, 2], T0 + LEASE + 4);
      });
    });

    describe('list', () => {
      const seed = async () => {
        const keys = ['e', 'a', 'd', 'c', 'b', 'f'];
        const claimed = await ledger.claim(keys.map((k) => req(k)), T0);
        const tok = Object.fromEntries(claimed.map((r) => [r.key, r.token!]));
        await ledger.complete(['a', 'c', 'e'].map((k) => ({ key: k, token: tok[k]!, result: k })), T0 + 1);
        await ledger.fail([{ key: 'd', token: tok['d']!, error: 'd' }], T0 + 1);
      };

      it('lists every entry in key order', async () => {
        await seed();
        expect((await ledger.list()).map((e) => e.key)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
      });

      it('filters by status', async () => {
        await seed();
        expect((await ledger.list({ status: 'completed' })).map((e) => e.key)).toEqual(['a', 'c', 'e']);
        expect((await ledger.list({ status: 'failed' })).map((e) => [e.key, e.error])).toEqual([['d', 'd']]);
        expect((await ledger.list({ status: 'in_progress' })).map((e) => e.key)).toEqual(['b', 'f']);
      });

      it('pages with limit and after, in key order', async () => {
        await seed();
        expect((await ledger.list({ limit: 4 })).map((e) => e.key)).toEqual(['a', 'b', 'c', 'd']);
        expect((await ledger.list({ limit: 4, after: 'd' })).map((e) => e.key)).toEqual(['e', 'f']);
        expect((await ledger.list({ after: 'bb' })).map((e) => e.key)).toEqual(['c', 'd', 'e', 'f']);
        expect((await ledger.list({ status: 'completed', after: 'a', limit: 1 })).map((e) => e.key)).toEqual(['c']);
        expect(await ledger.list({ after: 'f' })).toEqual([]);
      });

      it('pages through many entries without gaps or repeats', async () => {
        const keys = Array.from({ length: 250 }, (_, i) => `p-${String(i).padStart(4, '0')}`);
        await ledger.claim(keys.map((k) => req(k)), T0);
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await ledger.list({ limit: 64, after });
          if (page.length === 0) break;
          seen.push(...page.map((e) => e.key));
          after = page[page.length - 1]!.key;
        }
        expect(seen).toEqual(keys);
      });
    });

    describe('dedupe window', () => {
      it('acquires an absent slot as pending', async () => {
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0)).toEqual([
          { acquired: true, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE },
        ]);
      });

      it('refuses another owner while the slot is pending or confirmed, and names the holder', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 1)).toEqual([
          { acquired: false, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE },
        ]);
        await ledger.windowSettle([{ id: 'w', owner: 'k1', ttlMs: 600_000 }], T0 + 2);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + LEASE + 10)).toEqual([
          { acquired: false, owner: 'k1', confirmed: true, expiresAt: T0 + 2 + 600_000 },
        ]);
      });

      it('acquires again for the same owner', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
        const [slot] = await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + 5);
        expect(slot).toMatchObject({ acquired: true, owner: 'k1', confirmed: false });
      });

      it('confirms with a ttl counted from now', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
        await ledger.windowSettle([{ id: 'w', owner: 'k1', ttlMs: 600_000 }], T0 + 1000);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + 2000)).toEqual([
          { acquired: true, owner: 'k1', confirmed: true, expiresAt: T0 + 1000 + 600_000 },
        ]);
      });

      it('releases on settle with null, only for the owner', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
        await ledger.windowSettle([{ id: 'w', owner: 'k2', ttlMs: null }, { id: 'w', owner: 'k2', ttlMs: 600_000 }], T0 + 1);
        const [held] = await ledger.windowAcquire([{ id: 'w', owner: 'k3', ttlMs: LEASE }], T0 + 2);
        expect(held).toMatchObject({ acquired: false, owner: 'k1', confirmed: false });
        await ledger.windowSettle([{ id: 'w', owner: 'k1', ttlMs: null }], T0 + 3);
        const [taken] = await ledger.windowAcquire([{ id: 'w', owner: 'k3', ttlMs: LEASE }], T0 + 4);
        expect(taken).toEqual({ acquired: true, owner: 'k3', confirmed: false, expiresAt: T0 + 4 + LEASE });
      });

      it('hands an expired slot to a new owner', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: 1000 }], T0);
        await ledger.windowSettle([{ id: 'w', owner: 'k1', ttlMs: 5000 }], T0 + 10);
        const [slot] = await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: 1000 }], T0 + 10 + 5001);
        expect(slot).toEqual({ acquired: true, owner: 'k2', confirmed: false, expiresAt: T0 + 10 + 5001 + 1000 });
      });

      it('extends a pending hold to now + ttlMs when its owner acquires it again', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + LEASE - 1)).toEqual([
          { acquired: true, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE - 1 + LEASE },
        ]);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + LEASE + 1)).toEqual([
          { acquired: false, owner: 'k1', confirmed: false, expiresAt: T0 + LEASE - 1 + LEASE },
        ]);
      });

      it('leaves a confirmed hold as it is when its owner acquires it again', async () => {
        await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0);
        await ledger.windowSettle([{ id: 'w', owner: 'k1', ttlMs: 600_000 }], T0 + 1);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: LEASE }], T0 + 500_000)).toEqual([
          { acquired: true, owner: 'k1', confirmed: true, expiresAt: T0 + 1 + 600_000 },
        ]);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 600_000)).toEqual([
          { acquired: false, owner: 'k1', confirmed: true, expiresAt: T0 + 1 + 600_000 },
        ]);
      });

      it('probes with ttlMs 0: reports the holder and stores nothing', async () => {
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k1', ttlMs: 0 }], T0)).toEqual([
          { acquired: true, owner: 'k1', confirmed: false, expiresAt: T0 },
        ]);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: LEASE }], T0 + 1)).toEqual([
          { acquired: true, owner: 'k2', confirmed: false, expiresAt: T0 + 1 + LEASE },
        ]);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k3', ttlMs: 0 }], T0 + 2)).toEqual([
          { acquired: false, owner: 'k2', confirmed: false, expiresAt: T0 + 1 + LEASE },
        ]);
        await ledger.windowSettle([{ id: 'w', owner: 'k2', ttlMs: 600_000 }], T0 + 3);
        expect(await ledger.windowAcquire([{ id: 'w', owner: 'k2', ttlMs: 0 }, { id: 'w', owner: 'k3', ttlMs: 0 }], T0 + 4)).toEqual([
          { acquired: true, owner: 'k2', confirmed: true, expiresAt: T0 + 3 + 600_000 },
          { acquired: false, owner: 'k2', confirmed: true, expiresAt: T0 + 3 + 600_000 },
        ]);
        await ledger.windowAcquire([{ id: 'gone', owner: 'k1', ttlMs: 1000 }], T0);
        expect(await ledger.windowAcquire([{ id: 'gone', owner: 'k2', ttlMs: 0 }], T0 + 1000)).toEqual([
          { acquired: true, owner: 'k2', confirmed: false, expiresAt: T0 + 1000 },
        ]);
        expect(await ledger.windowAcquire([{ id: 'gone', owner: 'k3', ttlMs: LEASE }], T0 + 1001)).toMatchObject([{ acquired: true, owner: 'k3' }]);
      });

      it('answers a batch of slots in input order', async () => {
        await ledger.windowAcquire([{ id: 'w2', owner: 'x', ttlMs: LEASE }], T0);
        const slots = await ledger.windowAcquire([
          { id: 'w1', owner: 'a', ttlMs: LEASE }, { id: 'w2', owner: 'b', ttlMs: LEASE }, { id: 'w3', owner: 'c', ttlMs: LEASE },
        ], T0 + 1);
        expect(slots.map((s) => [s.acquired, s.owner])).toEqual([[true, 'a'], [false, 'x'], [true, 'c']]);
      });

      it('gives one slot to exactly one of 50 concurrent owners', async () => {
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
          ledger.windowAcquire([{ id: 'hot', owner: `o${i}`, ttlMs: LEASE }], T0)));
        const winners = results.filter((r) => r[0]!.acquired);
        expect(winners).toHaveLength(1);
        const owner = winners[0]![0]!.owner;
        expect(results.every((r) => r[0]!.owner === owner)).toBe(true);
      });
    });

    describe('clock and durability', () => {
      it(opts.clock ? 'reads its own clock: close to this machine, never going backwards' : 'has no clock of its own', async () => {
        if (!opts.clock) {
          expect(ledger.clock).toBeUndefined();
          return;
        }
        const first = await ledger.clock!();
        const second = await ledger.clock!();
        expect(Number.isInteger(first)).toBe(true);
        expect(Math.abs(first - Date.now())).toBeLessThan(5000);
        expect(second).toBeGreaterThanOrEqual(first);
      });

      it(`answers isDurable ${opts.durable}`, async () => {
        expect(await ledger.isDurable?.()).toBe(opts.durable);
      });
    });

    if (opts.readOnly) {
      const readOnly = opts.readOnly;
      describe('opened with createSchema: false', () => {
        const writes = (l: LedgerBackend): [string, () => Promise<unknown>][] => [
          ['claim', () => l.claim([req('k1')], T0)],
          ['complete', () => l.complete([{ key: 'k1', token: 1, result: 'ok' }], T0)],
          ['fail', () => l.fail([{ key: 'k1', token: 1, error: 'x' }], T0)],
          ['release', () => l.release([{ key: 'k1', token: 1 }], T0)],
          ['renew', () => l.renew([{ key: 'k1', token: 1 }], LEASE, T0)],
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
          await ledger.complete([{ key: 'k1', token: token!, result: { id: 7 } }], T0 + 1);
          const ro = await readOnly.openLast();
          try {
            expect(await ro.get('k1')).toEqual(await ledger.get('k1'));
            expect((await ro.list({ status: 'completed' })).map((e) => [e.key, e.owner])).toEqual([['k1', 'w1']]);
            await expect(ro.claim([req('k2')], T0 + 2)).rejects.toThrow(LedgerError);
            expect(await ledger.get('k2')).toBeNull();
          } finally {
            await ro.close();
          }
        });
      });
    }

    describe('stored JSON', () => {
      const values: [string, Json][] = [
        ['a nested object', { id: '0031x000', props: { email: 'a@b.co', tags: ['x', 'y'], score: 12.5, ok: true, none: null }, list: [[1], [{ deep: { er: -3 } }]] }],
        ['unicode text', { note: 'Grüße, 東京 🚀 — “quotes” \\ back\\slash\n\ttab', rtl: 'שלום', zeroWidth: 'a\u200bb' }],
        ['a bare string', 'plain'],
        ['a number', -1234567.891],
        ['null', null],
        ['an array', [1, 'two', false, null, { three: 3 }]],
      ];

      it.each(values)('round-trips %s as a result', async (_label, value) => {
        const { token } = await claimOne(req('k1'), T0);
        await ledger.complete([{ key: 'k1', token: token!, result: value }], T0 + 1);
        expect((await ledger.get('k1'))!.result).toEqual(value);
        expect((await claimOne(req('k1'), T0 + 2)).entry.result).toEqual(value);
      });

      it.each(values)('round-trips %s as an error', async (_label, value) => {
        const { token } = await claimOne(req('k1'), T0);
        await ledger.fail([{ key: 'k1', token: token!, error: value }], T0 + 1);
        expect((await ledger.get('k1'))!.error).toEqual(value);
        expect((await ledger.list({ status: 'failed' }))[0]!.error).toEqual(value);
      });

      it('keeps keys with unusual characters apart', async () => {
        const keys = ['a:b', 'a b', 'a\u00e9', 'a/b?c=d&e', 'ключ', '🔑', "it's", 'x'.repeat(400)];
        const results = await ledger.claim(keys.map((k) => req(k)), T0);
        expect(results.map((r) => [r.key, r.outcome])).toEqual(keys.map((k) => [k, 'claimed']));
        for (const k of keys) expect((await ledger.get(k))!.key).toBe(k);
      });
    });
  });
}

export interface MultiProcessSpec {
  backend: 'sqlite' | 'postgres' | 'redis';
  /** Export of the compiled backend module that builds the ledger, e.g. `sqliteLedger`. */
  factory: string;
  /** JSON-serialisable factory options naming a fresh, empty store; shared by the children and `open`. */
  options: () => Record<string, unknown>;
  /** Opens the same store in this process to check the result. */
  open: (options: Record<string, unknown>) => Promise<LedgerBackend>;
  skip?: boolean;
}

const CHILD = fileURLToPath(new URL('../helpers/ledger-claim-child.mjs', import.meta.url));

interface ChildReport { outcomes: string[]; tokens: number[] }

/** Runs `count` concurrent claims of `key` in each of `processes` workers, started together. */
async function claimFromProcesses(moduleUrl: string, factory: string, options: Record<string, unknown>, key: string, processes: number, count: number): Promise<ChildReport[]> {
  const children = Array.from({ length: processes }, () => spawn(process.execPath, [
    CHILD, moduleUrl, factory, JSON.stringify(options), key, String(count), String(T0),
  ], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const stderr = children.map(() => [] as string[]);
  children.forEach((c, i) => c.stderr!.on('data', (d: Buffer) => stderr[i]!.push(d.toString())));
  const lines = children.map((c) => createInterface({ input: c.stdout! })[Symbol.asyncIterator]());
  const exited = children.map((c, i) => new Promise<void>((resolve, reject) => {
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child ${i} exited ${code}: ${stderr[i]!.join('')}`))));
  }));
  const next = async (i: number) => {
    const line = await Promise.race([lines[i]!.next(), exited[i]!.then(() => ({ done: true, value: undefined }))]);
    if (line.done) throw new Error(`child ${i} ended early: ${stderr[i]!.join('')}`);
    return line.value as string;
  };
  try {
    for (let i = 0; i < processes; i++) expect(await next(i)).toBe('ready');
    for (const c of children) c.stdin!.write('go\n');
    const reports = await Promise.all(children.map(async (_, i) => JSON.parse(await next(i)) as ChildReport));
    await Promise.all(exited);
    return reports;
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

/** Many processes claiming one key: exactly one winner across all of them. */
export function describeMultiProcessClaims(name: string, spec: MultiProcessSpec): void {
  describe.skipIf(spec.skip === true)(`ledger conformance across processes: ${name}`, () => {
    afterAll(removeCompiledLedgers);

    it('gives exactly one of 200 concurrent claims from 4 processes', { timeout: 180_000 }, async () => {
      const moduleUrl = await compiledLedgerModule(spec.backend);
      const options = spec.options();
      const reports = await claimFromProcesses(moduleUrl, spec.factory, options, 'multi-hot', 4, 50);
      const outcomes = reports.flatMap((r) => r.outcomes);
      expect(outcomes).toHaveLength(200);
      expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'in_progress')).toHaveLength(199);
      expect(reports.flatMap((r) => r.tokens)).toEqual([1]);
      const ledger = await spec.open(options);
      try {
        expect(await ledger.get('multi-hot')).toMatchObject({ status: 'in_progress', token: 1, attempts: 1, leaseUntil: T0 + 600_000 });
      } finally {
        await ledger.close();
      }
    });
  });
}
