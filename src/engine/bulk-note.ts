/**
 * The note a Bulk job leaves on the claims of its rows (ledger `note`: an in-progress entry's
 * result), and when a later claim follows it. The note names the job, whether its upload was
 * answered, and the attempt that wrote it. A claim that takes the entry over follows the job when
 * no failure was recorded since that attempt: a holder that died (or gave its claims back while the
 * job ran on) leaves the job to its successor; a failure the ledger recorded after reading the
 * job's results settled it, and a retry of that failure sends the row again.
 */
import type { BulkJobRef } from '../adapter.js';
import type { Json, LedgerEntry } from '../ledger/types.js';
import { decodeActionFailure } from './payloads.js';

export const bulkNote = (job: BulkJobRef, attempt: number): Json => ({ bulk: { job: job.id, uploaded: job.uploaded, attempt } });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The job an earlier holder of this (just claimed) entry recorded and no later failure settled. */
export function inheritedJob(entry: LedgerEntry): BulkJobRef | undefined {
  const note = isObject(entry.result) ? entry.result.bulk : undefined;
  if (!isObject(note) || typeof note.job !== 'string' || note.job === '' || typeof note.attempt !== 'number') return undefined;
  const failedAt = decodeActionFailure(entry.error)?.retry?.attempts ?? 0;
  if (entry.status !== 'in_progress' || note.attempt >= entry.attempts || note.attempt <= failedAt) return undefined;
  return { id: note.job, uploaded: note.uploaded === true };
}
