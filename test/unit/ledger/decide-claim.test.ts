import { describe, expect, it } from 'vitest';
import { CLAIM_TABLE } from '../../../src/ledger/conformance/claim-table.js';
import { ClaimAction, decideClaim, takenEntry } from '../../../src/ledger/decide-claim.js';
import type { LedgerEntry } from '../../../src/ledger/types.js';

const T0 = Date.UTC(2026, 0, 1);

describe('decideClaim', () => {
  it.each(CLAIM_TABLE.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    expect(decideClaim(row.entry, row.request, row.now, row.floor)).toEqual(row.expected);
  });

  it('covers every action and every answer', () => {
    const seen = new Set(CLAIM_TABLE.map((r) => (r.expected.action === ClaimAction.answer ? r.expected.outcome : r.expected.action)));
    expect([...seen].sort()).toEqual(['completed', 'conflict', 'failed', 'fresh', 'in_progress', 'retry_failed', 'take_over']);
  });

  it('starts a fresh entry above both its own old token and the floor', () => {
    const old: LedgerEntry = {
      key: 'k', fingerprint: 'f', status: 'completed', token: 9, leaseUntil: null, attempts: 4, result: 1, error: null,
      createdAt: T0, updatedAt: T0, owner: null, expiresAt: T0 + 10,
    };
    expect(decideClaim(old, { key: 'k', fingerprint: 'f', leaseMs: 1 }, T0 + 10, 3)).toEqual({ action: ClaimAction.fresh, token: 10, attempts: 1 });
    expect(decideClaim(old, { key: 'k', fingerprint: 'f', leaseMs: 1 }, T0 + 10, 20)).toEqual({ action: ClaimAction.fresh, token: 21, attempts: 1 });
  });
});

describe('takenEntry', () => {
  const failed: LedgerEntry = {
    key: 'k', fingerprint: 'f', status: 'failed', token: 2, leaseUntil: null, attempts: 2, result: null, error: { code: 'CRM' },
    createdAt: T0, updatedAt: T0 + 5, owner: 'a', expiresAt: null,
  };

  it('keeps the error, result and createdAt of a retried entry and takes the new owner and lease', () => {
    const request = { key: 'k', fingerprint: 'f', leaseMs: 1000, retryFailed: true, owner: 'b' };
    expect(takenEntry(failed, request, T0 + 9, { action: ClaimAction.retryFailed, token: 3, attempts: 3 })).toEqual({
      ...failed, status: 'in_progress', token: 3, attempts: 3, leaseUntil: T0 + 1009, updatedAt: T0 + 9, owner: 'b', expiresAt: null,
    });
  });

  it('starts a fresh entry empty, with the request fingerprint and no owner when none is given', () => {
    expect(takenEntry(failed, { key: 'k', fingerprint: 'g', leaseMs: 1000 }, T0 + 9, { action: ClaimAction.fresh, token: 3, attempts: 1 })).toEqual({
      key: 'k', fingerprint: 'g', status: 'in_progress', token: 3, leaseUntil: T0 + 1009, attempts: 1, result: null, error: null,
      createdAt: T0 + 9, updatedAt: T0 + 9, owner: null, expiresAt: null,
    });
  });
});
