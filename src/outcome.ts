/** What happened to one action: the result every entry point returns. */
import { redact, type SerializedError } from './errors.js';

export const OutcomeStatus = {
  created: 'created',
  updated: 'updated',
  unchanged: 'unchanged',
  superseded: 'superseded',
  replayed: 'replayed',
  inFlight: 'in_flight',
  suppressed: 'suppressed',
  rejected: 'rejected',
  failed: 'failed',
} as const;
export type OutcomeStatus = (typeof OutcomeStatus)[keyof typeof OutcomeStatus];

export interface Outcome {
  /** The action's idempotency key ('' when the action was too malformed to derive one). */
  key: string;
  status: OutcomeStatus;
  recordId?: string;
  /**
   * Set on a `created` upsert of a record this ledger had written before under another CRM id:
   * the record was deleted in the CRM since (by hand, an erasure, a merge) and this write created
   * it again. `previousId`: the CRM id the ledger held for it.
   */
  recreated?: { previousId: string };
  /**
   * Fields of this action left to a newer value (order over time): a newer event already set them
   * through this ledger, or a newer action of the same call set them to another value. On
   * `superseded` every field of the action; on `updated` / `created` the ones not sent.
   */
  superseded?: string[];
  /** With `superseded`: the event time (ISO) of the newest value that stands in their place. */
  newerAt?: string;
  /**
   * `arrival` on an upsert without `occurredAt` (accepted with `requireOccurredAt: false`): it was
   * ordered against other events by when it arrived, as it carries no event time of its own.
   */
  orderedBy?: 'arrival';
  /**
   * Why it was rejected or failed, or why a create is `in_flight` when the record it attaches to is
   * being written by another worker (`vendorCode` PARENT_IN_FLIGHT): secret-free, with the field
   * path for validation errors.
   */
  error?: SerializedError;
  /** CRM write attempts made for it in this call (0 for replays, suppressions, unchanged, rejections). */
  attempts: number;
  /**
   * With field definitions: the values brought to the CRM's form before the write (what the model
   * sent, what was written), text redacted like the rest. Absent when nothing changed.
   */
  normalized?: { field: string; from: unknown; to: string | number | boolean | null }[];
}

/** A normalization change as an outcome reports it: secrets in its text redacted. */
export function redactedChange(n: { field: string; from: unknown; to: string | number | boolean | null }): { field: string; from: unknown; to: string | number | boolean | null } {
  const clean = (v: unknown) => (typeof v === 'string' ? redact(v) : v);
  return { field: n.field, from: clean(n.from), to: clean(n.to) as string | number | boolean | null };
}
