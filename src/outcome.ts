/** What happened to one action: the result every entry point returns. */
import type { SerializedError } from './errors.js';

export const OutcomeStatus = {
  created: 'created',
  updated: 'updated',
  unchanged: 'unchanged',
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
   * Why it was rejected or failed, or why a create is `in_flight` when the record it attaches to is
   * being written by another worker (`vendorCode` PARENT_IN_FLIGHT): secret-free, with the field
   * path for validation errors.
   */
  error?: SerializedError;
  /** CRM write attempts made for it in this call (0 for replays, suppressions, unchanged, rejections). */
  attempts: number;
}
