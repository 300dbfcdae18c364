/**
 * The bulk lane of the Salesforce adapter (`adapter.bulkLane`): record upserts of one object by
 * their external id in Bulk API 2.0 ingest jobs (salesforce-bulk.ts), for the engine's large calls.
 * Each write becomes one CSV row: its fields, each link as a relationship column naming the
 * linked record by its external id (`Account.AI_External_Id__c`: Salesforce resolves it in the
 * same job, as the Collections upsert's inline reference), and the external id. A field set to ''
 * goes out as `#N/A` (null): in a Bulk CSV an empty cell leaves the field as it is, where the same
 * value through Collections empties it.
 *
 * Objects configured `onMissing: 'skip'` stay on Collections: a job's upsert creates whatever is
 * missing, and Bulk API 2.0 has no update-only upsert.
 */
import type { ActivityWrite, BulkHooks, BulkJobRef, BulkLane, BulkRowResult, LinkRef, RecordWrite } from '../../src/adapter.js';
import type { CrmError } from '../../src/errors.js';
import { linkNotFound } from './salesforce-errors.js';
import type { BulkJobInfo, BulkRowOutcome, SalesforceBulk } from './salesforce-bulk.js';
import type { SalesforceObjectConfig } from './salesforce-config.js';
import type { CsvValue } from './salesforce-csv.js';
import type { BulkProgress } from './salesforce-options.js';
import { activityLookups, relationshipName, type LinkTargets } from './salesforce-requests.js';

type RecordConfig = Extract<SalesforceObjectConfig, { kind: 'record' }>;
type ActivityConfig = Extract<SalesforceObjectConfig, { kind: 'activity' }>;

export const DEFAULT_BULK_MIN_RECORDS = 2_000;

export interface SalesforceBulkLaneInput {
  bulk: SalesforceBulk;
  objects: Readonly<Record<string, SalesforceObjectConfig>>;
  targets: LinkTargets;
  minRecords?: number;
  onProgress?: (progress: BulkProgress) => void;
  /** Why a write cannot be sent at all (no external id, a link the config does not allow), as for Collections. */
  refuse: (object: string, spec: RecordConfig, write: RecordWrite) => CrmError | undefined;
  /** The same for an activity (no key, a parent or link the config does not allow). */
  refuseActivity: (object: string, spec: ActivityConfig, write: ActivityWrite) => CrmError | undefined;
  /** A parent that does not exist, as the Collections path names it (PARENT_NOT_FOUND). */
  parentNotFound: (ref: LinkRef) => CrmError;
}

/**
 * Task's WhoId and WhatId each take several sObjects: their columns name the parent's type first
 * (`Contact:Who.AI_External_Id__c`), the form Salesforce's guide gives for polymorphic fields
 * (`ObjectType:RelationshipName.IndexedFieldName`; a type on a lookup that is not polymorphic fails the job).
 */
const POLYMORPHIC = new Set(['WhoId', 'WhatId']);

/** The column naming a lookup's record by its external id. */
function referenceColumn(field: string, target: { sobject: string; externalIdField: string }): string | undefined {
  const name = relationshipName(field);
  if (name === undefined) return undefined;
  return POLYMORPHIC.has(field) ? `${target.sobject}:${name}.${target.externalIdField}` : `${name}.${target.externalIdField}`;
}

/** One activity as a CSV row of a Bulk upsert on its key: its fields, its parent and links as reference columns, the key. */
export function bulkActivityRow(spec: ActivityConfig, write: ActivityWrite, targets: LinkTargets): { row: Record<string, CsvValue>; columns: Map<string, LinkRef> } {
  const row: Record<string, CsvValue> = {};
  const columns = new Map<string, LinkRef>();
  for (const [field, value] of Object.entries(write.fields)) row[field] = value === '' ? null : value;
  for (const [field, ref] of activityLookups(spec, write)) {
    const target = targets[ref.object];
    const column = target === undefined ? undefined : referenceColumn(field, target);
    if (column === undefined) continue;
    row[column] = ref.externalId;
    columns.set(column, ref);
  }
  row[spec.externalIdField] = write.key;
  return { row, columns };
}

/** One write as a CSV row of a Bulk upsert (see the header). */
export function bulkRow(spec: RecordConfig, write: RecordWrite, targets: LinkTargets): Record<string, CsvValue> {
  const row: Record<string, CsvValue> = {};
  for (const [field, value] of Object.entries(write.fields)) row[field] = value === '' ? null : value;
  for (const link of write.links ?? []) {
    const field = spec.links?.[link.object];
    const name = field === undefined ? undefined : relationshipName(field);
    const target = targets[link.object];
    if (name !== undefined && target !== undefined) row[`${name}.${target.externalIdField}`] = link.externalId;
  }
  row[spec.externalIdField] = write.externalId;
  return row;
}

/**
 * Salesforce's exception codes for a job whose input it cannot take as a whole (its guide's
 * "Errors" page: a bad header, bad CSV, a bad job): its rows fail the same way when sent again.
 */
const REFUSED_INPUT = /^(InvalidBatch|InvalidJob|ClientInputError)\b/;

const toResult = (o: BulkRowOutcome): BulkRowResult =>
  o.status === 'failed'
    ? { ok: false, error: o.error }
    : o.status === 'unprocessed'
      ? { ok: false, unprocessed: true, reason: o.reason ?? 'the job ended before this row was processed', retryable: !REFUSED_INPUT.test((o.reason ?? '').trim()) }
      : { ok: true, recordId: o.id, created: o.status === 'created' };

/**
 * A row refused on its relationship column (no parent holds that external id) fails as the same
 * write through Collections does: LINK_NOT_FOUND, naming the link (a retry once it exists writes it).
 */
function asLinkError(spec: RecordConfig, write: RecordWrite | undefined, error: CrmError, targets: LinkTargets): CrmError {
  const column = error.field;
  if (write === undefined || column === undefined || !column.includes('.')) return error;
  const link = (write.links ?? []).find((l) => {
    const field = spec.links?.[l.object];
    const target = targets[l.object];
    return field !== undefined && target !== undefined && `${relationshipName(field)}.${target.externalIdField}` === column;
  });
  return link ? linkNotFound(link, targets[link.object]!, `${error.vendorCode}: ${error.message}`) : error;
}

export function salesforceBulkLane(input: SalesforceBulkLaneInput): BulkLane {
  const { bulk, objects, targets } = input;
  const record = (object: string): RecordConfig | undefined => {
    const spec = objects[object];
    return spec?.kind === 'record' ? spec : undefined;
  };
  const activity = (object: string): ActivityConfig | undefined => {
    const spec = objects[object];
    return spec?.kind === 'activity' ? spec : undefined;
  };
  /** Rows through jobs with the engine's hooks around each, and a progress line; every row's end by its key column. */
  async function run(object: string, sobject: string, keyField: string, rows: Array<Record<string, CsvValue>>, hooks: BulkHooks): Promise<Map<string, BulkRowOutcome>> {
    let uploaded = 0;
    const ref = (job: BulkJobInfo, done: boolean): BulkJobRef => ({ id: job.id, uploaded: done });
    const result = await bulk.upsert({
      object: sobject,
      externalIdFieldName: keyField,
      rows,
      onJob: async (job, ids) => {
        await hooks.onJob(ref(job, false), ids);
        progress(object, 0)(job);
      },
      onUploaded: async (job, ids) => {
        await hooks.onUploaded(ref(job, true), ids);
        uploaded = ids.length;
        progress(object, uploaded)(job);
      },
      onPoll: (job) => progress(object, uploaded)(job),
    });
    return result.outcomes;
  }
  /**
   * A refused reference column named as the same write through Collections names it: a record's
   * link (LINK_NOT_FOUND), an activity's parent (PARENT_NOT_FOUND) or link. Other refusals as they came.
   */
  function explain(object: string, write: RecordWrite | ActivityWrite | undefined, error: CrmError): CrmError {
    const spec = objects[object];
    if (write === undefined || spec === undefined) return error;
    if (spec.kind === 'record') return asLinkError(spec, write as RecordWrite, error, targets);
    const w = write as ActivityWrite;
    const ref = error.field === undefined ? undefined : bulkActivityRow(spec, w, targets).columns.get(error.field);
    if (ref === undefined) return error;
    return ref.object === w.parent.object && ref.externalId === w.parent.externalId ? input.parentNotFound(ref) : linkNotFound(ref, targets[ref.object]!, `${error.vendorCode}: ${error.message}`);
  }
  /** Every row's end by its key (external id, or an activity's key), refusals explained for the writes given. */
  function results(object: string, outcomes: ReadonlyMap<string, BulkRowOutcome>, writes: readonly (RecordWrite | ActivityWrite)[]): Map<string, BulkRowResult> {
    const byId = new Map(writes.map((w) => ['externalId' in w ? w.externalId : w.key, w]));
    return new Map([...outcomes].map(([id, o]) => [id, o.status === 'failed' ? { ok: false as const, error: explain(object, byId.get(id), o.error) } : toResult(o)]));
  }
  /** Writes through jobs by their key column: those that cannot be sent answered at once, every other by its row's end. */
  async function upsertRows<W extends RecordWrite | ActivityWrite>(
    object: string,
    spec: { sobject: string; externalIdField: string },
    writes: readonly W[],
    idOf: (w: W) => string,
    refuse: (w: W) => CrmError | undefined,
    rowOf: (w: W) => Record<string, CsvValue>,
    hooks: BulkHooks,
  ): Promise<Map<string, BulkRowResult>> {
    const out = new Map<string, BulkRowResult>();
    const sent: W[] = [];
    for (const w of writes) {
      const refused = refuse(w);
      if (refused) out.set(idOf(w), { ok: false, error: refused });
      else sent.push(w);
    }
    if (sent.length === 0) return out;
    const outcomes = await run(object, spec.sobject, spec.externalIdField, sent.map(rowOf), hooks);
    for (const [id, r] of results(object, outcomes, sent)) out.set(id, r);
    return out;
  }
  /** `uploaded` undefined: not known (a followed job's info does not say), so left out of the progress. */
  const progress = (object: string, uploaded: number | undefined) => (job: BulkJobInfo) =>
    input.onProgress?.({ object, jobId: job.id, state: job.state, ...(uploaded === undefined ? {} : { uploaded }), processed: job.numberRecordsProcessed ?? 0, failed: job.numberRecordsFailed ?? 0 });

  return {
    minRecords: input.minRecords ?? DEFAULT_BULK_MIN_RECORDS,
    accepts: (object) => {
      const spec = record(object);
      return spec !== undefined && spec.onMissing !== 'skip';
    },

    async upsert(object, writes, hooks) {
      const spec = record(object)!;
      return upsertRows(object, spec, writes, (w) => w.externalId, (w) => input.refuse(object, spec, w), (w) => bulkRow(spec, w, targets), hooks);
    },

    acceptsActivities: (object) => activity(object) !== undefined,

    async upsertActivities(object, writes, hooks) {
      const spec = activity(object)!;
      return upsertRows(object, spec, writes, (w) => w.key, (w) => input.refuseActivity(object, spec, w), (w) => bulkActivityRow(spec, w, targets).row, hooks);
    },

    async follow(object, job, writes = []) {
      const info = await bulk.info(job.id);
      // Never closed by its holder: closed now only when its upload was answered; otherwise it holds
      // nothing certain, and aborted it processes nothing.
      if (info.state === 'Open' && !job.uploaded) {
        await bulk.abort(job.id);
        return new Map();
      }
      if (info.state === 'Open') await bulk.close(job.id);
      const { outcomes } = await bulk.outcomes(job.id, { onPoll: progress(object, undefined) });
      return results(object, outcomes, writes);
    },
  };
}
