/**
 * When a claim follows the Bulk job an earlier holder noted on its entry: only a note written after
 * the last recorded failure, by an earlier attempt than this claim's.
 */
import { describe, expect, it } from 'vitest';
import { bulkNote, inheritedJob } from '../../../src/engine/bulk-note.js';
import { encodeActionFailure } from '../../../src/engine/payloads.js';
import type { Json, LedgerEntry } from '../../../src/ledger/types.js';

const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({
  key: 'v1:k', fingerprint: 'fp', status: 'in_progress', token: 2, leaseUntil: 1, attempts: 2, result: null, error: null, createdAt: 0, updatedAt: 0, expiresAt: null, ...over,
});
const failedAt = (attempts: number): Json =>
  encodeActionFailure({ error: { name: 'CrmError', code: 'CRM', message: 'refused' }, retry: { action: { op: 'upsert' } as never, at: 0, attempts, possiblyWritten: false } });

describe('inheritedJob', () => {
  it('follows the job a dead holder (the attempt before) noted, uploaded or not', () => {
    expect(inheritedJob(entry({ attempts: 2, result: bulkNote({ id: '750A', uploaded: true }, 1) }))).toEqual({ id: '750A', uploaded: true });
    expect(inheritedJob(entry({ attempts: 2, result: bulkNote({ id: '750A', uploaded: false }, 1) }))).toEqual({ id: '750A', uploaded: false });
  });

  it('follows it down a chain of holders that died without noting again', () => {
    expect(inheritedJob(entry({ attempts: 4, result: bulkNote({ id: '750A', uploaded: true }, 1) }))).toEqual({ id: '750A', uploaded: true });
  });

  it('does not follow a job whose rows a later failure settled (a retry of that failure sends them again)', () => {
    expect(inheritedJob(entry({ attempts: 2, result: bulkNote({ id: '750A', uploaded: true }, 1), error: failedAt(1) }))).toBeUndefined();
    expect(inheritedJob(entry({ attempts: 5, result: bulkNote({ id: '750A', uploaded: true }, 3), error: failedAt(3) }))).toBeUndefined();
    // A job noted by the retry after the failure is followed again.
    expect(inheritedJob(entry({ attempts: 3, result: bulkNote({ id: '750B', uploaded: true }, 2), error: failedAt(1) }))).toEqual({ id: '750B', uploaded: true });
  });

  it('never follows a note of this same attempt, a settled entry, or anything that is not a note', () => {
    expect(inheritedJob(entry({ attempts: 1, result: bulkNote({ id: '750A', uploaded: true }, 1) }))).toBeUndefined();
    expect(inheritedJob(entry({ status: 'completed', attempts: 2, result: bulkNote({ id: '750A', uploaded: true }, 1) }))).toBeUndefined();
    for (const result of [null, 'x', 3, [], { status: 'created' }, { bulk: { job: '', attempt: 1 } }, { bulk: { job: '750A' } }, { bulk: 'x' }] as Json[]) {
      expect(inheritedJob(entry({ attempts: 2, result }))).toBeUndefined();
    }
  });
});
