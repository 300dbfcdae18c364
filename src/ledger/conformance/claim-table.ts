/**
 * The decideClaim table: each row is a state of one key, a claim of it, and what decideClaim
 * says that claim does. The unit test checks decideClaim against the rows; the conformance
 * suite brings every real backend to each row's state through the public API and holds its
 * claim (SQL and Lua included) to the same answer.
 */
import { ClaimAction, decideClaim, takenEntry, type ClaimDecision } from '../decide-claim.js';
import type { ClaimRequest, EntryStore, LedgerEntry } from '../types.js';
import { FP, LEASE, T0, req, type SuiteContext } from './harness.js';

export interface ClaimTableRow {
  name: string;
  /** Brings a fresh, empty ledger to `entry` (and `floor`) through the public API. */
  arrange(ledger: EntryStore): Promise<unknown>;
  /** The entry of key `k` after `arrange` (what `get('k')` returns); null when absent. */
  entry: LedgerEntry | null;
  /** The token floor after `arrange`: above every token of an entry that was pruned. */
  floor: number;
  request: ClaimRequest;
  now: number;
  expected: ClaimDecision;
}

const K = 'k';
const RETAIN = 10 * LEASE;

const entry = (fields: Partial<LedgerEntry> = {}): LedgerEntry => ({
  key: K, fingerprint: FP, status: 'in_progress', token: 1, leaseUntil: T0 + LEASE, attempts: 1,
  result: null, error: null, createdAt: T0, updatedAt: T0, owner: null, expiresAt: null, ...fields,
});
const completed = (fields: Partial<LedgerEntry> = {}) =>
  entry({ status: 'completed', leaseUntil: null, result: { id: '101' }, updatedAt: T0 + 1, ...fields });
const failed = entry({ status: 'failed', leaseUntil: null, error: { code: 'CRM' }, updatedAt: T0 + 1 });

const claimK = async (ledger: EntryStore, now: number, extra: Partial<ClaimRequest> = {}) => {
  const [result] = await ledger.claim([req(K, extra)], now);
  return result!.token!;
};
const completeK = async (ledger: EntryStore, retentionMs: number | null = null) => {
  await ledger.complete([{ key: K, token: await claimK(ledger, T0), result: { id: '101' }, retentionMs }], T0 + 1);
};
const failK = async (ledger: EntryStore) => {
  await ledger.fail([{ key: K, token: await claimK(ledger, T0), error: { code: 'CRM' } }], T0 + 1);
};
/** Another key claimed three times, completed and pruned: the floor is 3 from then on, at `FLOOR_AT`. */
const FLOOR_AT = T0 + 2 * LEASE + 1000;
const raiseFloorTo3 = async (ledger: EntryStore) => {
  for (const now of [T0, T0 + LEASE, T0 + 2 * LEASE]) await ledger.claim([req('other')], now);
  await ledger.complete([{ key: 'other', token: 3, result: 'done', retentionMs: 1000 }], T0 + 2 * LEASE);
  await ledger.prune(FLOOR_AT);
};

const fresh = (token: number): ClaimDecision => ({ action: ClaimAction.fresh, token, attempts: 1 });
const answer = (outcome: Extract<ClaimDecision, { action: 'answer' }>['outcome']): ClaimDecision => ({ action: ClaimAction.answer, outcome });
const other = { fingerprint: 'fp-other' };

export const CLAIM_TABLE: ClaimTableRow[] = [
  { name: 'absent: a fresh entry with token 1', arrange: async () => undefined, entry: null, floor: 0,
    request: req(K), now: T0, expected: fresh(1) },
  { name: 'absent, after a prune raised the token floor: a fresh entry above the floor', arrange: raiseFloorTo3, entry: null, floor: 3,
    request: req(K, { owner: 'host-a 1 t0' }), now: FLOOR_AT, expected: fresh(4) },
  { name: 'in progress, live lease: in_progress', arrange: (l) => claimK(l, T0), entry: entry(), floor: 0,
    request: req(K), now: T0 + LEASE - 1, expected: answer('in_progress') },
  { name: 'in progress, lease ends exactly now: taken over', arrange: (l) => claimK(l, T0), entry: entry(), floor: 0,
    request: req(K), now: T0 + LEASE, expected: { action: ClaimAction.takeOver, token: 2, attempts: 2 } },
  { name: 'in progress, lease long expired: taken over by the new owner', arrange: (l) => claimK(l, T0, { owner: 'host-a 1 t0' }),
    entry: entry({ owner: 'host-a 1 t0' }), floor: 0,
    request: req(K, { owner: 'host-b 2 t1', leaseMs: 1000 }), now: T0 + 10 * LEASE, expected: { action: ClaimAction.takeOver, token: 2, attempts: 2 } },
  { name: 'in progress, released: taken over at once',
    arrange: async (l) => { await l.release([{ key: K, token: await claimK(l, T0) }], T0 + 10); },
    entry: entry({ leaseUntil: T0 + 10, updatedAt: T0 + 10 }), floor: 0,
    request: req(K), now: T0 + 10, expected: { action: ClaimAction.takeOver, token: 2, attempts: 2 } },
  { name: 'failed, without retryFailed: failed', arrange: failK, entry: failed, floor: 0,
    request: req(K), now: T0 + 2, expected: answer('failed') },
  { name: 'failed, with retryFailed: retried, its error kept', arrange: failK, entry: failed, floor: 0,
    request: req(K, { retryFailed: true, owner: 'host-c 3 t2' }), now: T0 + 2, expected: { action: ClaimAction.retryFailed, token: 2, attempts: 2 } },
  { name: 'completed, kept forever: completed, even with retryFailed', arrange: (l) => completeK(l), entry: completed(), floor: 0,
    request: req(K, { retryFailed: true }), now: T0 + 100 * LEASE, expected: answer('completed') },
  { name: 'completed, inside its retention: completed', arrange: (l) => completeK(l, RETAIN),
    entry: completed({ expiresAt: T0 + 1 + RETAIN }), floor: 0,
    request: req(K), now: T0 + RETAIN, expected: answer('completed') },
  { name: 'completed, retention ends exactly now: a fresh entry, the token still counting up', arrange: (l) => completeK(l, RETAIN),
    entry: completed({ expiresAt: T0 + 1 + RETAIN }), floor: 0,
    request: req(K), now: T0 + 1 + RETAIN, expected: fresh(2) },
  { name: 'completed, past its retention, another fingerprint: a fresh entry, no conflict', arrange: (l) => completeK(l, RETAIN),
    entry: completed({ expiresAt: T0 + 1 + RETAIN }), floor: 0,
    request: req(K, other), now: T0 + 2 * RETAIN, expected: fresh(2) },
  { name: 'completed, past its retention, below the token floor: a fresh entry above the floor',
    arrange: async (l) => {
      const token = await claimK(l, T0);
      await raiseFloorTo3(l);
      await l.complete([{ key: K, token, result: { id: '101' }, retentionMs: RETAIN }], FLOOR_AT);
    },
    entry: completed({ updatedAt: FLOOR_AT, expiresAt: FLOOR_AT + RETAIN }), floor: 3,
    request: req(K), now: FLOOR_AT + RETAIN, expected: fresh(4) },
  { name: 'fingerprint mismatch, in progress with a live lease: conflict', arrange: (l) => claimK(l, T0), entry: entry(), floor: 0,
    request: req(K, other), now: T0 + 1, expected: answer('conflict') },
  { name: 'fingerprint mismatch, in progress with an expired lease: conflict, not a takeover', arrange: (l) => claimK(l, T0), entry: entry(), floor: 0,
    request: req(K, other), now: T0 + 10 * LEASE, expected: answer('conflict') },
  { name: 'fingerprint mismatch, failed, with retryFailed: conflict', arrange: failK, entry: failed, floor: 0,
    request: req(K, { ...other, retryFailed: true }), now: T0 + 2, expected: answer('conflict') },
  { name: 'fingerprint mismatch, completed: conflict', arrange: (l) => completeK(l), entry: completed(), floor: 0,
    request: req(K, other), now: T0 + 2, expected: answer('conflict') },
];

/** Every row against the backend: arrange, claim, compare with decideClaim. */
export function claimTableSuite({ t: { describe, it, expect }, ledger }: SuiteContext): void {
  describe('the decideClaim table', () => {
    for (const row of CLAIM_TABLE) {
      it(row.name, async () => {
        await row.arrange(ledger());
        expect(await ledger().get(K)).toEqual(row.entry);
        const decision = decideClaim(row.entry, row.request, row.now, row.floor);
        expect(decision).toEqual(row.expected);

        const [result] = await ledger().claim([row.request], row.now);
        if (decision.action === ClaimAction.answer) {
          expect(result).toEqual({ key: K, outcome: decision.outcome, entry: row.entry });
        } else {
          const after = takenEntry(row.entry, row.request, row.now, decision);
          expect(result).toEqual({ key: K, outcome: 'claimed', token: decision.token, entry: after });
        }
        expect(await ledger().get(K)).toEqual(result!.entry);
      });
    }
  });
}
