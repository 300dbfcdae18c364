/**
 * Entries: claiming, owners, retention and prune, listing.
 */
import type { LedgerBackend } from '../types.js';
import { isLedgerBackend } from '../index.js';
import { FP, LEASE, T0, req, type SuiteContext } from './harness.js';

export function entriesSuite(name: string, { t: { describe, it, expect }, ledger, claimOne }: SuiteContext): void {
  describe('claim', () => {
    it('implements every method of the contract', () => {
      expect(isLedgerBackend(ledger())).toBe(true);
      expect(ledger().name).toBe(name);
    });

    it('claims an absent key with token 1 and a lease', async () => {
      const r = await claimOne(req('k1'), T0);
      expect(r).toMatchObject({ key: 'k1', outcome: 'claimed', token: 1 });
      expect(r.entry).toEqual({
        key: 'k1', fingerprint: FP, status: 'in_progress', token: 1, leaseUntil: T0 + LEASE, attempts: 1,
        result: null, error: null, createdAt: T0, updatedAt: T0, expiresAt: null, owner: null,
      });
      expect(await ledger().get('k1')).toEqual(r.entry);
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
      expect(await ledger().complete([{ key: 'k1', token: token!, result: { id: '101', created: true } }], T0 + 5)).toEqual([true]);
      const entry = await ledger().get('k1');
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
      await ledger().complete([{ key: 'k1', token: 2, result: 'ok', retentionMs: 1000 }], T0 + LEASE);
      expect(await ledger().prune(T0 + LEASE + 999)).toBe(0);
      expect(await ledger().prune(T0 + LEASE + 1000)).toBe(1);
    });

    it('reports a failed key as failed unless retryFailed is set', async () => {
      const { token } = await claimOne(req('k1'), T0);
      expect(await ledger().fail([{ key: 'k1', token: token!, error: { code: 'CRM', message: 'boom' } }], T0 + 1)).toEqual([true]);
      const failed = await claimOne(req('k1'), T0 + 2);
      expect(failed.outcome).toBe('failed');
      expect(failed.entry).toMatchObject({ status: 'failed', error: { code: 'CRM', message: 'boom' }, leaseUntil: null, updatedAt: T0 + 1 });
      const retried = await claimOne(req('k1', { retryFailed: true }), T0 + 3);
      expect(retried).toMatchObject({ outcome: 'claimed', token: 2 });
      expect(retried.entry).toMatchObject({ status: 'in_progress', attempts: 2, leaseUntil: T0 + 3 + LEASE });
      // The engine reads the failure it takes over (was the write possibly sent?): it must survive the claim.
      expect(retried.entry.error).toEqual({ code: 'CRM', message: 'boom' });
    });

    const settles: [string, (l: LedgerBackend, token: number) => Promise<unknown>][] = [
      ['in_progress', async () => undefined],
      ['completed', (l, token) => l.complete([{ key: 'k1', token, result: 'ok' }], T0 + 1)],
      ['failed', (l, token) => l.fail([{ key: 'k1', token, error: 'bad' }], T0 + 1)],
    ];
    for (const [status, settle] of settles) it(`reports a conflict for a different fingerprint when the key is ${status}`, async () => {
      const { token } = await claimOne(req('k1'), T0);
      await settle(ledger(), token!);
      const r = await claimOne(req('k1', { fingerprint: 'fp-other', retryFailed: true }), T0 + 2);
      expect(r.outcome).toBe('conflict');
      expect(r.token).toBeUndefined();
      expect(r.entry).toMatchObject({ key: 'k1', fingerprint: FP, status, token: 1 });
    });

    it('reports a conflict instead of taking over an expired lease with a different fingerprint', async () => {
      await claimOne(req('k1'), T0);
      const r = await claimOne(req('k1', { fingerprint: 'fp-other' }), T0 + 10 * LEASE);
      expect(r.outcome).toBe('conflict');
      expect(await ledger().get('k1')).toMatchObject({ fingerprint: FP, token: 1 });
    });

    it('returns 500 results in input order for a batch of 500', async () => {
      const keys = Array.from({ length: 500 }, (_, i) => `batch-${String((i * 7919) % 500).padStart(3, '0')}`);
      const results = await ledger().claim(keys.map((k) => req(k)), T0);
      expect(results.map((r) => r.key)).toEqual(keys);
      expect(results.every((r) => r.outcome === 'claimed' && r.token === 1)).toBe(true);
      const done = await ledger().complete(results.map((r) => ({ key: r.key, token: r.token!, result: { k: r.key } })), T0 + 1);
      expect(done).toEqual(keys.map(() => true));
      const replay = await ledger().claim(keys.map((k) => req(k)), T0 + 2);
      expect(replay.map((r) => [r.key, r.outcome, r.entry.result])).toEqual(keys.map((k) => [k, 'completed', { k }]));
    });

    it('claims a key that appears several times in one batch exactly once', async () => {
      const results = await ledger().claim([req('dup'), req('other'), req('dup'), req('dup')], T0);
      expect(results.map((r) => r.key)).toEqual(['dup', 'other', 'dup', 'dup']);
      const dups = results.filter((r) => r.key === 'dup');
      expect(dups.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
      expect(dups.filter((r) => r.outcome === 'in_progress')).toHaveLength(2);
      expect(dups.every((r) => r.entry.token === 1)).toBe(true);
      expect(results[1]!.outcome).toBe('claimed');
    });

    it('gives exactly one of 50 concurrent claims of one key', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, () => ledger().claim([req('hot')], T0)));
      const outcomes = results.map((r) => r[0]!.outcome);
      expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'in_progress')).toHaveLength(49);
      expect(await ledger().get('hot')).toMatchObject({ token: 1, attempts: 1 });
    });

    it('returns null from get for an unknown key', async () => {
      expect(await ledger().get('nope')).toBeNull();
    });
  });

  describe('owner', () => {
    it('stores the owner of the request that takes the claim: fresh, takeover or retry', async () => {
      const a = await claimOne(req('k1', { owner: 'host-a 101 t0' }), T0);
      expect(a.entry.owner).toBe('host-a 101 t0');
      expect((await ledger().get('k1'))!.owner).toBe('host-a 101 t0');
      const held = await claimOne(req('k1', { owner: 'host-b 202 t1' }), T0 + 1);
      expect(held).toMatchObject({ outcome: 'in_progress', entry: { owner: 'host-a 101 t0' } });
      const b = await claimOne(req('k1', { owner: 'host-b 202 t1' }), T0 + LEASE);
      expect(b).toMatchObject({ outcome: 'claimed', token: 2, entry: { owner: 'host-b 202 t1' } });
      expect(await ledger().fail([{ key: 'k1', token: 2, error: 'x' }], T0 + LEASE + 1)).toEqual([true]);
      expect((await ledger().get('k1'))!.owner).toBe('host-b 202 t1');
      const c = await claimOne(req('k1', { owner: 'host-c 303 t2', retryFailed: true }), T0 + LEASE + 2);
      expect(c).toMatchObject({ outcome: 'claimed', token: 3, entry: { owner: 'host-c 303 t2' } });
      const d = await claimOne(req('k1'), T0 + 2 * LEASE + 2);
      expect(d).toMatchObject({ outcome: 'claimed', token: 4, entry: { owner: null } });
      expect((await ledger().list())[0]!.owner).toBeNull();
    });

    it('stores the owner of a claim that starts a key over after its retention', async () => {
      const { token } = await claimOne(req('k1', { owner: 'old' }), T0);
      await ledger().complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: 1000 }], T0 + 1);
      const again = await claimOne(req('k1', { owner: 'new' }), T0 + 2000);
      expect(again).toMatchObject({ outcome: 'claimed', entry: { owner: 'new', attempts: 1 } });
      expect((await ledger().get('k1'))!.owner).toBe('new');
    });

    it('keeps the owner of the first request of a key repeated in one batch', async () => {
      const results = await ledger().claim([req('dup', { owner: 'first' }), req('dup', { owner: 'second' })], T0);
      expect(results.map((r) => [r.outcome, r.entry.owner])).toEqual([['claimed', 'first'], ['in_progress', 'first']]);
    });
  });

  describe('retention and prune', () => {
    it('sets expiresAt from retentionMs and prunes the entry once it passed', async () => {
      const { token } = await claimOne(req('k1'), T0);
      await ledger().complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: 60_000 }], T0 + 100);
      expect((await ledger().get('k1'))!.expiresAt).toBe(T0 + 100 + 60_000);
      expect(await ledger().prune(T0 + 60_000)).toBe(0);
      expect((await claimOne(req('k1'), T0 + 60_000)).outcome).toBe('completed');
      expect(await ledger().prune(T0 + 100 + 60_001)).toBe(1);
      expect(await ledger().get('k1')).toBeNull();
      const again = await claimOne(req('k1'), T0 + 100 + 60_002);
      // the key is new again, but its token never goes backwards: a stale token 1 stays refused
      expect(again).toMatchObject({ outcome: 'claimed', token: 2, entry: { attempts: 1 } });
    });

    it('keeps an entry completed without retention', async () => {
      const { token } = await claimOne(req('k1'), T0);
      await ledger().complete([{ key: 'k1', token: token!, result: 'ok', retentionMs: null }], T0 + 1);
      expect((await ledger().get('k1'))!.expiresAt).toBeNull();
      expect(await ledger().prune(T0 + 1e12)).toBe(0);
      expect((await ledger().get('k1'))!.status).toBe('completed');
    });

    it('treats a completed key past its retention as new before prune runs', async () => {
      const first = await claimOne(req('k1'), T0);
      await ledger().complete([{ key: 'k1', token: first.token!, result: 'ok', retentionMs: 1000 }], T0 + 1);
      const again = await claimOne(req('k1', { fingerprint: 'fp-next' }), T0 + 5000);
      expect(again.outcome).toBe('claimed');
      expect(again.token!).toBeGreaterThan(first.token!);
      expect(again.entry).toMatchObject({ status: 'in_progress', fingerprint: 'fp-next', attempts: 1, result: null, expiresAt: null, createdAt: T0 + 5000 });
    });

    it('prunes completed and failed entries last updated before olderThan, never in-progress ones', async () => {
      const claimed = await ledger().claim([req('old-done'), req('old-failed'), req('old-running'), req('new-done')], T0);
      const tok = Object.fromEntries(claimed.map((r) => [r.key, r.token!]));
      await ledger().complete([{ key: 'old-done', token: tok['old-done']!, result: 1 }], T0 + 10);
      await ledger().fail([{ key: 'old-failed', token: tok['old-failed']!, error: 'x' }], T0 + 10);
      await ledger().complete([{ key: 'new-done', token: tok['new-done']!, result: 2 }], T0 + 1000);
      expect(await ledger().prune(T0 + 2000, T0 + 500)).toBe(2);
      expect((await ledger().list()).map((e) => e.key)).toEqual(['new-done', 'old-running']);
    });
  });

  describe('list', () => {
    const seed = async () => {
      const keys = ['e', 'a', 'd', 'c', 'b', 'f'];
      const claimed = await ledger().claim(keys.map((k) => req(k)), T0);
      const tok = Object.fromEntries(claimed.map((r) => [r.key, r.token!]));
      await ledger().complete(['a', 'c', 'e'].map((k) => ({ key: k, token: tok[k]!, result: k })), T0 + 1);
      await ledger().fail([{ key: 'd', token: tok['d']!, error: 'd' }], T0 + 1);
    };

    it('lists every entry in key order', async () => {
      await seed();
      expect((await ledger().list()).map((e) => e.key)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    });

    it('filters by status', async () => {
      await seed();
      expect((await ledger().list({ status: 'completed' })).map((e) => e.key)).toEqual(['a', 'c', 'e']);
      expect((await ledger().list({ status: 'failed' })).map((e) => [e.key, e.error])).toEqual([['d', 'd']]);
      expect((await ledger().list({ status: 'in_progress' })).map((e) => e.key)).toEqual(['b', 'f']);
    });

    it('pages with limit and after, in key order', async () => {
      await seed();
      expect((await ledger().list({ limit: 4 })).map((e) => e.key)).toEqual(['a', 'b', 'c', 'd']);
      expect((await ledger().list({ limit: 4, after: 'd' })).map((e) => e.key)).toEqual(['e', 'f']);
      expect((await ledger().list({ after: 'bb' })).map((e) => e.key)).toEqual(['c', 'd', 'e', 'f']);
      expect((await ledger().list({ status: 'completed', after: 'a', limit: 1 })).map((e) => e.key)).toEqual(['c']);
      expect(await ledger().list({ after: 'f' })).toEqual([]);
    });

    it('pages through many entries without gaps or repeats', async () => {
      const keys = Array.from({ length: 250 }, (_, i) => `p-${String(i).padStart(4, '0')}`);
      await ledger().claim(keys.map((k) => req(k)), T0);
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await ledger().list({ limit: 64, after });
        if (page.length === 0) break;
        seen.push(...page.map((e) => e.key));
        after = page[page.length - 1]!.key;
      }
      expect(seen).toEqual(keys);
    });
  });
}
