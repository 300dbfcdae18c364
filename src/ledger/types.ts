/**
 * The ledger backend contract: a small, atomic store of processed keys.
 *
 * Timeline of one key (t = the backend's `now` argument, never its own clock):
 *
 *   claim ──────────────► in_progress (token 1, lease until t0+lease)
 *     │ worker A does the expensive work (it may note what it started: note, token 1)
 *     │      ✗ A crashes (or stalls past its lease)
 *     │                 lease expires ─► claim by B: takeover, token 2, attempts+1, A's note kept
 *     │                                  B completes with token 2 ─► completed (result kept)
 *     └─ A wakes up, completes with token 1 ─► refused (fenced): B's result stands
 *   completed ── retention (expiresAt) ──► prune() deletes it; the key is new again, and its
 *                                          next token is still above every token it ever had
 *   failed ── claim with retryFailed ──► in_progress (token n+1)
 *
 * Tokens never go backwards for a key, not even after retention expiry or prune: a backend keeps
 * a floor above every token of an entry that can vanish, and a fresh entry starts above it, so a
 * stale worker's token can never match a later claim.
 *
 * `now` is the caller's estimate of the ledger's clock: the engine reads `clock()` (when the
 * backend has one) and offsets its own clock by the difference, so leases are measured on one
 * clock however far the workers' clocks drift apart.
 *
 * Every method takes a batch and is one round trip. Claims are atomic per key: of many
 * concurrent claims of one key exactly one gets `claimed`. A key repeated inside one batch is
 * answered as if the items ran in order (a repeated claim gets `in_progress`; a repeated
 * complete/fail/release/renew with the same token gets false). A backend without an atomic
 * conditional write must not implement this interface.
 */

export const EntryStatus = {
  inProgress: 'in_progress',
  completed: 'completed',
  failed: 'failed',
} as const;
export type EntryStatus = (typeof EntryStatus)[keyof typeof EntryStatus];

/** JSON-serialisable value stored with an entry. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface LedgerEntry {
  key: string;
  /** Hash of the action identity (never of model-generated fields). */
  fingerprint: string;
  status: EntryStatus;
  /** Fencing token: increases by one on every successful claim of this key. */
  token: number;
  /** Epoch ms from which (inclusive: `leaseUntil <= now`) an in-progress claim may be taken over. */
  leaseUntil: number | null;
  /** How many times the key was claimed. */
  attempts: number;
  /**
   * Completed: the stored result. In progress: the note its holder left (`note`), kept across a
   * takeover for the next holder to follow up; null when none was left. Failed: what it held when
   * it failed. A fresh entry (new, or past its retention) starts with null.
   */
  result: Json | null;
  error: Json | null;
  createdAt: number;
  updatedAt: number;
  /** Who took the current claim (`ClaimRequest.owner`, e.g. `host pid start`); null when not given. */
  owner?: string | null;
  /**
   * Epoch ms from which (inclusive) the entry is expired: `prune` deletes it, and a claim treats
   * the key as new even before that (a fresh entry, attempts 1, the token still counting up). null = keep.
   */
  expiresAt: number | null;
}

export interface ClaimRequest {
  key: string;
  fingerprint: string;
  leaseMs: number;
  /** Take a `failed` entry (retry-failed), keeping its `error` until completion; otherwise a failed entry is reported, not taken. */
  retryFailed?: boolean;
  /** Also return the mark stored under this id (the engine's "last written fields" hash). */
  markId?: string;
  /** Stored as the entry's `owner` when this request takes the claim (left as it was otherwise). */
  owner?: string;
  /**
   * A mark id naming what this claim is about to write (the engine: the record an upsert writes).
   * When this request takes the claim, that mark is set to this request's key in the same round
   * trip, so `heldBy` finds the claim writing the record; left as it was otherwise.
   */
  holds?: string;
}

export type ClaimOutcome =
  /** The caller owns the key until `leaseUntil`; use `token` to complete or fail it. */
  | 'claimed'
  /** Done before: `entry.result` is the stored result. */
  | 'completed'
  /** Another worker holds a live lease. */
  | 'in_progress'
  /** Failed before and `retryFailed` was not set. */
  | 'failed'
  /** The key exists with a different fingerprint. */
  | 'conflict';

/** The claim a `holds` mark named before another claim took it: its key, status and lease. */
export interface ClaimHolder {
  key: string;
  status: EntryStatus;
  leaseUntil: number | null;
}

export interface ClaimResult {
  key: string;
  outcome: ClaimOutcome;
  /** Set when outcome is `claimed`. */
  token?: number;
  /** The entry as it is after the claim. */
  entry: LedgerEntry;
  /** Set when `markId` was asked and a mark exists. */
  mark?: string;
  /**
   * Set on a `claimed` answer to a request with `holds`, when that mark named another key that
   * has an entry: that key's status and lease as they were when this claim was taken (before this
   * request, or before its batch: a backend that reads the batch's marks up front reports the
   * latter for a mark several requests of the batch name). A live in-progress holder is another
   * claim writing the same record right now: the engine waits for it before judging its write. A
   * backend that cannot read the holder's entry atomically with the claim (Postgres, for a claim
   * taken concurrently) reports it `in_progress` with `leaseUntil: null`: the engine reads it.
   */
  holder?: ClaimHolder;
}

export interface CompleteRequest {
  key: string;
  token: number;
  result: Json;
  /** Keep the entry this long after completion; null/undefined = forever (until pruned by age). */
  retentionMs?: number | null;
  /** Store `value` under mark `id` in the same round trip. */
  mark?: { id: string; value: string };
}

export interface FailRequest {
  key: string;
  token: number;
  error: Json;
  /** Store `value` under mark `id` in the same round trip, when the fail is accepted (invalidates "last written"). */
  mark?: { id: string; value: string };
}

export interface NoteRequest {
  key: string;
  token: number;
  /** Stored as the entry's `result` while it is in progress; JSON text as `complete` stores a result. */
  note: Json;
}

export interface TokenRef {
  key: string;
  token: number;
}

/** Dedupe-window slot: set-if-absent with expiry, held by one owner key. */
export interface WindowAcquireRequest {
  id: string;
  owner: string;
  /** How long a pending (unconfirmed) hold lasts, normally the claim lease. */
  ttlMs: number;
}

export interface WindowSlot {
  acquired: boolean;
  owner: string;
  /** True once the owner's write was confirmed by the CRM. */
  confirmed: boolean;
  expiresAt: number;
}

export interface WindowSettleRequest {
  id: string;
  owner: string;
  /** Confirmed: keep the slot for this long from now. null: release it (the write failed). */
  ttlMs: number | null;
}

export interface ListOptions {
  status?: EntryStatus;
  limit?: number;
  /** Keys strictly after this one (paging, in byte order of the UTF-8 key). */
  after?: string;
}

/** The processed-key half of a backend: one entry per key, claimed, fenced and settled. */
export interface EntryStore {
  claim(requests: ClaimRequest[], now: number): Promise<ClaimResult[]>;
  /** Fenced: an item succeeds only if the entry is in progress with this token. */
  complete(requests: CompleteRequest[], now: number): Promise<boolean[]>;
  /** Fenced like complete. The entry becomes `failed`, retryable with `retryFailed`. */
  fail(requests: FailRequest[], now: number): Promise<boolean[]>;
  /** Fenced: give a claim up without a result (shutdown): `leaseUntil = now`, still in_progress, claimable at once. */
  release(requests: TokenRef[], now: number): Promise<boolean[]>;
  /** Fenced: extend live leases (long jobs, the CLI's job lock). A lease that already ran out is not renewed. */
  renew(requests: TokenRef[], leaseMs: number, now: number): Promise<boolean[]>;
  /**
   * Fenced like complete: on an entry in progress with this token, store `note` as its `result`
   * (the holder's note of work under way: what a holder that takes the claim over must follow up)
   * and set updatedAt; status, token, lease, attempts, error and owner stay as they are. false
   * when the entry is absent, settled or claimed with another token. One round trip; a key
   * repeated in the batch is applied in order (the last accepted note stands). A note JSON cannot
   * encode (undefined, a function, a bigint, a cycle) throws ValidationError and writes nothing.
   * Optional: without it the engine does not start work that a takeover would have to follow
   * (the Salesforce Bulk API lane).
   */
  note?(requests: NoteRequest[], now: number): Promise<boolean[]>;
  get(key: string): Promise<LedgerEntry | null>;
  /**
   * Read-only: the entries of `keys` (null where absent), in the order asked, in one round trip.
   * Takes no lock, writes nothing and renews nothing. The engine answers repeats from it (a key
   * completed with the same fingerprint and not expired is replayed without a claim) and sends
   * every other key to `claim`. Optional: without it every key goes to `claim`, as before.
   */
  getMany?(keys: readonly string[]): Promise<(LedgerEntry | null)[]>;
  /**
   * Read-only, one round trip: for each mark id, the entry of the key that mark names (the last
   * claim taken with `holds` set to it), in the order asked; null where the mark or that entry is
   * absent. Writes nothing. The engine asks it only when the CRM reported an activity's parent
   * missing: a live claim found here means another worker is writing that parent right now.
   * Optional: without it such an activity fails as parent-missing.
   */
  heldBy?(ids: readonly string[]): Promise<(LedgerEntry | null)[]>;
  /**
   * Read-only, one round trip: the value stored under each mark id (null where none), in the order
   * asked. The engine reads a record's mark again after waiting for another claim writing that
   * record. Optional: without it (or without `getMany`), writes to one record from several
   * workers are not put in order.
   */
  readMarks?(ids: readonly string[]): Promise<(string | null)[]>;
  list(options?: ListOptions): Promise<LedgerEntry[]>;
  /** Delete entries whose `expiresAt` passed, and completed/failed entries last updated before `olderThan` (if given). Returns how many. */
  prune(now: number, olderThan?: number): Promise<number>;
}

/** The dedupe-window half of a backend: slots held by one owner key, set-if-absent with expiry. */
export interface WindowStore {
  /**
   * Atomic per slot: acquired if absent, expired, or already held by the same owner. A pending
   * hold of the same owner is extended to `now + ttlMs` (that is how a live holder renews it); a
   * confirmed one is left as it is. `ttlMs` 0 is a probe: it reports the holder and stores nothing.
   */
  windowAcquire(requests: WindowAcquireRequest[], now: number): Promise<WindowSlot[]>;
  /** Owner-fenced: confirm (extend to ttl) or release a slot. */
  windowSettle(requests: WindowSettleRequest[], now: number): Promise<void>;
}

export interface LedgerBackend extends EntryStore, WindowStore {
  /** `memory`, `sqlite`, `postgres`, `redis`. */
  readonly name: string;
  /**
   * The ledger's own clock, epoch ms (Postgres `clock_timestamp()`, Redis `TIME`). Optional: a
   * backend without it shares the machine's clock with its callers (memory, SQLite).
   */
  clock?(): Promise<number>;
  /**
   * True when a completed entry survives a crash, a restart and memory pressure (SQLite, Postgres;
   * Redis only with AOF and no eviction). Optional: absent means not durable, so the engine looks
   * activity keys up before creating them (`verifyCreates: 'auto'`).
   */
  isDurable?(): Promise<boolean>;
  /**
   * When this ledger began remembering, epoch ms (on the ledger's clock where it has one, else
   * the machine's): written once, set-if-absent, and the same answer for every caller and every
   * later open. A ledger that kept no record of it (one opened before birth times were kept, or a
   * Redis whose keys were flushed) records it on its next writable open or ask: that moment counts
   * as its birth. Nothing that happened before it can be in the ledger, so the engine looks up
   * creates of older events before sending them (`verifyCreates: 'auto'`). null: a read-only
   * view of a ledger that has no record of its birth. Optional: a backend without it cannot say
   * what it remembers, and `auto` looks up every create.
   */
  bornAt?(): Promise<number | null>;
  close(): Promise<void>;
}
