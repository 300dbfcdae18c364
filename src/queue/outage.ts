/**
 * A CRM outage seen from a worker: when `afterJobs` event jobs in a row failed only because the
 * CRM did not answer (5xx, timeouts, connection resets or refusals, 429s), the CRM is taken to be
 * down. From then on such a job goes back to wait without spending an attempt, and the queue's
 * job fetching is paused for every worker of the queue: `firstPauseMs`, doubling per pause up to
 * `maxPauseMs`, while the CRM stays down. Only a job that got an answer from the CRM (a record
 * written, a refusal of its own) ends the outage: a chunk job whose failed lines all went
 * unanswered counts as one more unanswered job, and a job that made no request at all (a gate, a
 * replay, values already written) says nothing either way. So a CRM down for an hour costs each
 * job at most the attempts spent before the outage was seen, and fills no failed set, whatever
 * else is on the queue.
 */
import { LINK_NOT_FOUND, PARENT_DEFERRED, PARENT_NOT_FOUND } from '../engine/defer.js';

export interface OutageOptions {
  /** Event jobs in a row that got no answer from the CRM before it counts as down. Default 3. */
  afterJobs?: number;
  /** The first pause of the queue once the CRM is down, ms; each next one doubles. Default 1,000. */
  firstPauseMs?: number;
  /** The longest pause, ms. Default 60,000. */
  maxPauseMs?: number;
}

export const DEFAULT_OUTAGE = { afterJobs: 3, firstPauseMs: 1_000, maxPauseMs: 60_000 } as const;

/** A pause that began: how long, and how many jobs in a row had gone unanswered. */
export interface OutagePause {
  pauseMs: number;
  unansweredJobs: number;
  /** Why the last job failed (secret-free, as kept in BullMQ's failed reason). */
  reason: string;
}

export interface OutageRule {
  /** A job failed with no answer from the CRM: true when it is to go back without spending an attempt. */
  unanswered(reason: string): Promise<boolean>;
  /** A job got an answer from the CRM (completed, or failed for another reason). */
  answered(): void;
}

export function outageRule(options: OutageOptions | false | undefined, pause: (ms: number) => Promise<void>, onPause?: (p: OutagePause) => void, now: () => number = Date.now): OutageRule {
  if (options === false) return { unanswered: async () => false, answered: () => undefined };
  const afterJobs = options?.afterJobs ?? DEFAULT_OUTAGE.afterJobs;
  const firstPauseMs = options?.firstPauseMs ?? DEFAULT_OUTAGE.firstPauseMs;
  const maxPauseMs = Math.max(firstPauseMs, options?.maxPauseMs ?? DEFAULT_OUTAGE.maxPauseMs);
  let streak = 0;
  let pauses = 0;
  let pausedUntil = 0;
  return {
    async unanswered(reason) {
      streak += 1;
      if (streak < afterJobs) return false;
      // Jobs that were already running when the pause began only go back: one pause at a time.
      if (now() >= pausedUntil) {
        const pauseMs = Math.min(maxPauseMs, firstPauseMs * 2 ** pauses);
        pauses += 1;
        pausedUntil = now() + pauseMs;
        onPause?.({ pauseMs, unansweredJobs: streak, reason });
        await pause(pauseMs);
      }
      return true;
    },
    answered() {
      streak = 0;
      pauses = 0;
      pausedUntil = 0;
    },
  };
}

/** What a job's outcomes say of the CRM: it answered, it did not, or nothing (no request was needed). */
export type CrmEvidence = 'answered' | 'unanswered' | 'none';

interface Evidence {
  status: string;
  error?: { retryable?: boolean; vendorCode?: string };
}

/** A write failed for another record's sake (its parent or a linked record absent, or held back): no evidence either way. */
const PARENT_CODES = new Set([PARENT_NOT_FOUND, PARENT_DEFERRED, LINK_NOT_FOUND]);

export function evidenceOf(outcomes: readonly Evidence[]): CrmEvidence {
  let unanswered = false;
  for (const o of outcomes) {
    if (o.status === 'created' || o.status === 'updated') return 'answered';
    if (o.status !== 'failed' || PARENT_CODES.has(o.error?.vendorCode ?? '')) continue;
    if (o.error?.retryable === true) unanswered = true;
    else return 'answered';
  }
  return unanswered ? 'unanswered' : 'none';
}
