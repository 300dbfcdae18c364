/**
 * The CrmAdapter contract: what a CRM must offer the engine (types, docs and one key helper).
 *
 * The engine owns everything that must not vary between CRMs: keys, the ledger, the dedupe
 * window, batching, coalescing, retries (p-retry), splitting a batch to isolate one bad input,
 * and recovering create-only activities after an ambiguous failure. An adapter only maps
 * logical objects to CRM calls, reads every per-record result and classifies errors.
 *
 * To add a third CRM: a factory returning this object, a `classifyError` that turns the
 * client's errors into `CrmError`, and a fake in `<vendor>-fake.ts` built on adapters/testing/fake-http.
 */
import type { CrmError } from './errors.js';

export type FieldValue = string | number | boolean | null;
export type Fields = Record<string, FieldValue>;

import type { ObjectSpec } from '../schemas/objects.js';

export type { ObjectSpec } from '../schemas/objects.js';

export interface AdapterCapabilities {
  /** Largest batch the CRM accepts in one write call (HubSpot 100, Salesforce 200). */
  maxBatch: number;
  /**
   * True when activities are written by an upsert on their key field (Salesforce Task), so
   * retrying an ambiguous create cannot duplicate. False (HubSpot notes): after an ambiguous
   * failure the engine calls `findActivities` before creating again.
   */
  nativeActivityUpsert: boolean;
}

/** A record another record or an activity is associated with: a configured record object and its external id. */
export interface LinkRef {
  object: string;
  externalId: string;
}

/**
 * One record upsert in a batch. `key` is the action's idempotency key. `links`: the records it
 * is associated with (distinct, none to itself; absent when none), each of an object its config
 * allows. Linking only adds: an adapter never removes an association.
 */
export interface RecordWrite {
  key: string;
  object: string;
  externalId: string;
  fields: Fields;
  links?: LinkRef[];
  /**
   * The record's CRM id as this ledger's last confirmed write of it left it (its mark), from any
   * process on that ledger; absent when this ledger never wrote the record, or when its last
   * write may not have reached the CRM. Not verified: the record may have been deleted or merged
   * away in the CRM since. An adapter may address the record by it (a CRM without an upsert on
   * the external id), and must then treat a "gone" answer as the record missing, never as written.
   */
  knownId?: string;
  /**
   * An earlier attempt under this ledger may have created the record without the ledger learning
   * its id (this claim took over a dead holder's, or retries a failure that may have reached the
   * CRM). A CRM whose lookup by external id lags its writes (a search index) should look where it
   * does not lag before creating.
   */
  mayExist?: boolean;
}

/**
 * One activity create in a batch; `key` goes into the object's key property. `links`: the
 * records it is associated with besides `parent` (distinct, never the parent; absent when none).
 */
export interface ActivityWrite {
  key: string;
  object: string;
  parent: LinkRef;
  fields: Fields;
  links?: LinkRef[];
}

/**
 * Scratch space for one batch, kept across its retries. `memo` maps `parentMemoKey(object,
 * externalId)` to the parent's CRM id: the engine seeds it with records it upserted earlier in
 * the same call, and an adapter adds what it resolved, so neither a retry nor a note on a
 * contact written a moment ago reads the parent again. When the CRM answers that the record an id
 * of the memo names is gone (deleted or merged away since), the adapter deletes that entry: the
 * engine forgets the id, sends the refused creates once more (their parents read again), and an
 * adapter may itself resend what is safe to send twice (record links).
 */
export interface BatchContext {
  readonly memo: Map<string, string>;
  /**
   * `parentMemoKey`s of parents looked up and not found for this batch, or known absent to the
   * engine a moment ago: not read again for this batch (its inputs fail as parent-missing). An
   * adapter adds the parents its lookup did not find. Optional: without it every attempt reads them.
   */
  readonly absent?: Set<string>;
  /**
   * Called by the adapter right before each write request leaves (after its rate budget was
   * granted). The engine confirms there that it still holds every claim of the batch; it throws
   * (a `ClaimLostError`) when one was lost meanwhile, and the adapter lets that propagate so
   * nothing is sent under a lost claim.
   */
  readonly beforeSend?: () => Promise<void>;
}

/** Whether `adapter` reads records (offers both `planReads` and `readRecords`): `sync.read` and the MCP `get_` tools need it. */
export const adapterReads = (adapter: CrmAdapter): adapter is CrmAdapter & Required<Pick<CrmAdapter, 'planReads' | 'readRecords'>> =>
  typeof adapter.planReads === 'function' && typeof adapter.readRecords === 'function';

/** The `BatchContext.memo` key of a parent record. */
export const parentMemoKey = (object: string, externalId: string): string => `${object}\u0000${externalId}`;

/**
 * One read of records of one object (`readRecords`). `by`: the CRM field the ids are values of:
 * the object's external-id field when absent, else one of its `lookupBy` fields. `fields`: the
 * CRM fields to answer (the engine asks only for allowlisted and `readFields` ones, and drops
 * anything else an adapter returns). `links`: also answer the records it is associated with,
 * of the objects its config links to.
 */
export interface ReadRequest {
  by?: string;
  fields: readonly string[];
  links: boolean;
}

/** A record a read record is associated with: its logical object, CRM id and external id (absent when that record has none). */
export interface ReadLink {
  object: string;
  recordId: string;
  externalId?: string;
}

/**
 * Per-id answer of a read, in input order; `externalId`: the record's external-id value (absent
 * when it has none, as a record made in the CRM's own screens). `found: false` with `matches` (2 or more): the `by`
 * field is not unique on the CRM and the value names several records: none is answered. `found: false`
 * with `reason`: the id was never sent, because no request to the CRM can carry it (the reason says
 * which limit); the other ids of the read are answered as usual.
 */
export type ReadResult =
  | { found: true; recordId: string; externalId?: string; fields: Fields; links?: ReadLink[] }
  | { found: false; matches?: number; reason?: string };

/** Per-input result, in input order. Every per-record result is read, never assumed. */
export type WriteResult =
  | { ok: true; recordId: string; created: boolean }
  | { ok: false; error: CrmError };

/** A Bulk job the engine recorded with the claims of its rows, followed by whoever takes those claims over. */
export interface BulkJobRef {
  id: string;
  /** The upload of the job's data was answered: the job holds every row it was created for. */
  uploaded: boolean;
}

/**
 * One row's end in a Bulk job, by external id: written, refused (the CRM's per-row error), or
 * `unprocessed`: the job ended (aborted, failed whole, never closed) before this row, which
 * was not written; `reason`, the job's error; `retryable`, whether sending the row again can help
 * (not when the CRM refused the job's data or header as a whole).
 */
export type BulkRowResult = WriteResult | { ok: false; unprocessed: true; reason: string; retryable: boolean };

/** What the engine does around a Bulk job's requests. */
export interface BulkHooks {
  /**
   * Awaited once a job exists and before its data is uploaded, with the external ids of its rows:
   * the engine records the job with their claims. A throw (a claim lost, the ledger down) stops the
   * upsert there: the lane aborts the job (nothing of it is processed) and rethrows.
   */
  onJob(job: BulkJobRef, externalIds: readonly string[]): Promise<void>;
  /** Awaited after the upload was answered and before the job is closed (processing starts). */
  onUploaded(job: BulkJobRef, externalIds: readonly string[]): Promise<void>;
}

/**
 * An asynchronous bulk ingest (Salesforce Bulk API 2.0): upserts of one object by external id in
 * a few large jobs instead of many batch calls. Optional: the engine uses it for a call carrying at
 * least `minRecords` upserts of an object it `accepts` (or every one, when asked to), and to follow
 * a job recorded with claims it takes over; everything else goes through `upsertRecords`.
 */
export interface BulkLane {
  /** Fewest upserts of one object in one call that go through the lane when the choice is automatic. */
  readonly minRecords: number;
  /** Whether upserts of this record object can go through the lane. */
  accepts(object: string): boolean;
  /**
   * Upsert these records (one per external id) in as many jobs as the CRM's limits need, one after
   * another; `hooks` around each. Every write's end by external id; a write that failed before any
   * request (no external id, a link the config does not allow) is answered without being sent.
   * Throws when a job could not be run to its end; what was recorded with `onJob` is followed later.
   */
  upsert(object: string, writes: readonly RecordWrite[], hooks: BulkHooks): Promise<Map<string, BulkRowResult>>;
  /**
   * Whether creates of this activity object can go through the lane: only where they are upserted
   * on their key field (`nativeActivityUpsert`), so a row sent twice is still one activity.
   */
  acceptsActivities?(object: string): boolean;
  /**
   * Upsert these activities on their key field in jobs of their own, their parent and links named
   * by external id: every write's end by `key`, as `upsert` answers records. A parent that does not
   * exist fails its row as parent-missing (PARENT_NOT_FOUND).
   */
  upsertActivities?(object: string, writes: readonly ActivityWrite[], hooks: BulkHooks): Promise<Map<string, BulkRowResult>>;
  /**
   * Follow a job recorded earlier (by a process that may have died at any point): a job still Open
   * is closed when its upload was answered and aborted otherwise (its rows then all unprocessed);
   * then it is awaited and its rows' ends read, by external id (by key for an activities job). A row with no end in a finished
   * job is absent from the map. `writes`: what the engine would send for the rows it follows (as
   * `upsert` is given), so a refused row is named as it would be for them. Throws a CrmError when
   * the job cannot be read.
   */
  follow(object: string, job: BulkJobRef, writes?: readonly (RecordWrite | ActivityWrite)[]): Promise<Map<string, BulkRowResult>>;
}

export interface CrmAdapter {
  /** Vendor name used in messages and the dedupe identity: `hubspot`, `salesforce`. */
  readonly name: string;
  readonly capabilities: AdapterCapabilities;
  /** The logical objects configured, by name. */
  readonly objects: Readonly<Record<string, ObjectSpec>>;

  /**
   * Upsert records of one object by their external id, at most `maxBatch`. Returns one result
   * per input in order. Throws (anything; the engine calls `classifyError`) when the whole call failed.
   */
  upsertRecords(object: string, writes: RecordWrite[], context?: BatchContext): Promise<WriteResult[]>;

  /**
   * Create (or, with `nativeActivityUpsert`, upsert by key) activities of one object, at most
   * `maxBatch`, resolving parents from their external ids in one read per call. A missing
   * parent is a per-input permanent failure naming the parent. Throws for whole-call failures.
   */
  createActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<WriteResult[]>;

  /**
   * Find activities already created for these keys (read-after-write consistent: never the
   * search index alone). Returns key -> CRM record id for the ones that exist.
   */
  findActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<Map<string, string>>;

  /**
   * Split the ids of a read into the groups one `readRecords` call reads with one request per
   * kind of read (HubSpot: 100 ids per batch read; Salesforce: as many as one SOQL query's URL
   * holds). Distinct, non-empty ids in; every id in exactly one group, order kept.
   */
  planReads?(object: string, ids: readonly string[], request: ReadRequest): string[][];

  /**
   * Read one group from `planReads` of a record object by `request.by`: read-after-write
   * consistent (never a search index), one answer per id in order. Throws a classified CrmError
   * when the read failed (the engine retries the group).
   */
  readRecords?(object: string, ids: readonly string[], request: ReadRequest): Promise<ReadResult[]>;

  /** Turn anything the client threw into a classified, secret-free CrmError. */
  classifyError(err: unknown): CrmError;

  /** Large upserts through the CRM's bulk ingest (Salesforce Bulk API 2.0); absent where there is none. */
  readonly bulkLane?: BulkLane;

  /** HTTP requests sent so far (for reports: "the second run made 0 API calls"). */
  apiCalls(): number;

  close?(): Promise<void>;
}
