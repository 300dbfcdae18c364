/**
 * The values the engine's stages pass along. A stage takes typed values and returns new ones;
 * nothing is shared between stages but the per-createSync `EngineContext` and the per-call `Call`.
 *
 *   Planned   a valid action with its key (prepare)
 *   Held      a Planned whose key this call claimed: it owns the token (claim)
 *   Decided   an item and its outcome (any stage that settles it)
 */
import type { Normalized } from '../../schemas/values.js';
import type { Action } from '../../schemas/action.js';
import type { BulkJobRef, CrmAdapter, Fields } from '../adapter.js';
import type { DedupeWindow, HeldSlot } from '../dedupe-window.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { LedgerClock } from '../ledger/clock.js';
import type { ClaimHolder, LedgerBackend } from '../ledger/types.js';
import type { Outcome, OutcomeStatus } from '../outcome.js';
import type { RetryOptions } from '../retry.js';
import type { ParentMemo } from './parents.js';
import type { QuotaPause } from './quota.js';

export interface Planned {
  /** Position in the caller's input. */
  readonly index: number;
  readonly action: Action;
  readonly key: string;
  readonly fingerprint: string;
  /** No event id: windowed (creates) and reported `suppressed` rather than `replayed`. */
  readonly keyless: boolean;
  /** Event time, epoch ms: `occurredAt`, else the stored time of a retried entry, else the time applied. */
  readonly at: number;
  readonly op: 'upsert' | 'create';
  readonly object: string;
  /** The dedupe-window slot family (keyless creates only). */
  readonly windowId?: string;
  /** Upserts: the record's "last written" mark id, the hash of these fields, and the record they coalesce on. */
  readonly markId?: string;
  readonly fieldHash?: string;
  readonly coalesceId?: string;
  /** Creates: the "last written" mark id of the parent record, read with the claim. */
  readonly parentMarkId?: string;
  /** The values normalization changed in this input (reported in its outcome). */
  readonly normalized?: readonly Normalized[];
}

export interface Held extends Planned {
  readonly token: number;
  /** Attempts of the entry when claimed (recorded in a failed entry). */
  readonly entryAttempts: number;
  /** Claimed by takeover: a previous attempt may have written before it died. */
  readonly recovered: boolean;
  /**
   * Taken over from a dead process on this host: its last sign of life (ledger ms). A create it
   * sent just before dying may still be on its way to the CRM (recover.ts waits for it).
   */
  readonly deadSeenAt?: number;
  /** The record's "last written" mark when the claim asked for it (read again after waiting for a holder). */
  readonly mark?: string;
  /** Upserts: the claim the record's holder mark named before this one (record-hold.ts). */
  readonly holder?: ClaimHolder;
  /**
   * Creates: the parent's CRM id from its mark, as this ledger's last confirmed write of that
   * record left it. Not verified against the CRM: a record deleted there since is caught when the
   * create is refused (write.ts).
   */
  readonly ledgerParentId?: string;
  /**
   * Upserts, when a newer event already set some of the action's fields through this ledger: the
   * fields still to send (the rest are left to the newer values), and what was left.
   */
  readonly sends?: Readonly<Fields>;
  readonly leftByTime?: LeftToNewer;
  /** The pending dedupe-window slot this item holds. */
  readonly slot?: HeldSlot;
  /**
   * The Bulk job an earlier holder of this claim recorded it in (and did not settle): followed,
   * never uploaded again (bulk.ts).
   */
  readonly bulkJob?: BulkJobRef;
  /**
   * Keyless creates: the keys of dead holders of pending window slots this one passed over
   * (identical creates in the window that may have committed), looked up with its own key.
   */
  readonly deadHolderKeys?: readonly string[];
}

/** Fields an action left to newer values, and the event time (epoch ms) of the newest of those. */
export interface LeftToNewer {
  readonly fields: readonly string[];
  readonly newerAt: number;
}

export interface Decided {
  readonly item: Planned;
  readonly outcome: Outcome;
}

/** Everything that stays the same for the life of one `createSync`. */
export interface EngineContext {
  readonly adapter: CrmAdapter;
  readonly ledger: LedgerBackend;
  readonly clock: LedgerClock;
  readonly now: () => number;
  /** Sleeps a CRM's Retry-After, announcing it as one to wait listeners (`observeWaits`): not for other waits. */
  readonly sleep: (ms: number) => Promise<void>;
  /** A plain wait (the injected `sleep`, not announced as a Retry-After). */
  readonly pause: (ms: number) => Promise<void>;
  readonly leaseMs: number;
  readonly windowMs: number;
  readonly bucketMs: number;
  readonly retentionMs: number | null;
  readonly retryFailed: boolean;
  readonly concurrency: number;
  readonly requireOccurredAt: boolean;
  readonly maxFieldLength?: number;
  readonly maxLinks?: number;
  /** Record object -> its link level: upserts are written lowest level first (link-levels.ts). */
  readonly linkLevels: ReadonlyMap<string, number>;
  /** `event`: field times decide (order.ts); `arrival`: the last write wins (times still recorded). */
  readonly order: 'event' | 'arrival';
  /** Bring values to the CRM's form where that cannot change their meaning (with field definitions). */
  readonly normalize: boolean;
  readonly retry?: RetryOptions;
  readonly window: DedupeWindow;
  readonly quota: QuotaPause;
  /** Parent ids and absences this Sync saw a moment ago (parents.ts). */
  readonly parents: ParentMemo;
  /** Whether every create must be looked up first (`verifyCreates`), decided once. */
  verifiesEveryCreate(): Promise<boolean>;
  /**
   * `verifyCreates: 'auto'`: creates of events before this time (epoch ms), or without an event
   * time, are looked up first, as the ledger cannot remember them (its birth plus a margin for
   * clock skew); -Infinity when no event time calls for a lookup. Decided once.
   */
  verifiesBefore(): Promise<number>;
}

/** One `applyMany` call: the keeper of every claim it holds, and what it decided about lookups. */
export interface Call {
  readonly keeper: LeaseKeeper;
  readonly verifyAll: boolean;
  /** Creates of events before this (epoch ms) or without an event time are looked up first (`verifiesBefore`); absent: none. */
  readonly verifyBefore?: number;
  /** Whether large upserts go through the adapter's bulk lane (bulk.ts). Default `auto`. */
  readonly bulk?: BulkMode;
}

/**
 * `auto`: upserts of an object reaching the lane's `minRecords` in one call go through the
 * adapter's bulk lane; `always`: every upsert of an object it accepts; `never`: none (a job an
 * earlier holder recorded is still followed, never sent again another way while it may run).
 */
export type BulkMode = 'auto' | 'always' | 'never';

export const WRITTEN: ReadonlySet<OutcomeStatus> = new Set<OutcomeStatus>(['created', 'updated', 'unchanged']);
