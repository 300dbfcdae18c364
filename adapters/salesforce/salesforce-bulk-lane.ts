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
import type { BulkJobRef, BulkLane, BulkRowResult, RecordWrite } from '../../src/adapter.js';
import type { CrmError } from '../../src/errors.js';
import { linkNotFound } from './salesforce-errors.js';
import type { BulkJobInfo, BulkRowOutcome, SalesforceBulk } from './salesforce-bulk.js';
import type { SalesforceObjectConfig } from './salesforce-config.js';
import type { CsvValue } from './salesforce-csv.js';
import type { BulkProgress } from './salesforce-options.js';
import { relationshipName, type LinkTargets } from './salesforce-requests.js';

type RecordConfig = Extract<SalesforceObjectConfig, { kind: 'record' }>;

export const DEFAULT_BULK_MIN_RECORDS = 2_000;

export interface SalesforceBulkLaneInput {
  bulk: SalesforceBulk;
  objects: Readonly<Record<string, SalesforceObjectConfig>>;
  targets: LinkTargets;
  minRecords?: number;
  onProgress?: (progress: BulkProgress) => void;
  /** Why a write cannot be sent at all (no external id, a link the config does not allow), as for Collections. */
  refuse: (object: string, spec: RecordConfig, write: RecordWrite) => CrmError | undefined;
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

const toResult = (o: BulkRowOutcome): BulkRowResult =>
  o.status === 'failed' ? { ok: false, error: o.error } : o.status === 'unprocessed' ? { ok: false, unprocessed: true, reason: o.reason ?? 'the job ended before this row was processed' } : { ok: true, recordId: o.id, created: o.status === 'created' };

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
  const progress = (object: string, uploaded: number) => (job: BulkJobInfo) =>
    input.onProgress?.({ object, jobId: job.id, state: job.state, uploaded, processed: job.numberRecordsProcessed ?? 0, failed: job.numberRecordsFailed ?? 0 });

  return {
    minRecords: input.minRecords ?? DEFAULT_BULK_MIN_RECORDS,
    accepts: (object) => {
      const spec = record(object);
      return spec !== undefined && spec.onMissing !== 'skip';
    },

    async upsert(object, writes, hooks) {
      const spec = record(object)!;
      const out = new Map<string, BulkRowResult>();
      const sent: RecordWrite[] = [];
      for (const w of writes) {
        const refused = input.refuse(object, spec, w);
        if (refused) out.set(w.externalId, { ok: false, error: refused });
        else sent.push(w);
      }
      if (sent.length === 0) return out;
      let uploaded = 0;
      const ref = (job: BulkJobInfo, done: boolean): BulkJobRef => ({ id: job.id, uploaded: done });
      const result = await bulk.upsert({
        object: spec.sobject,
        externalIdFieldName: spec.externalIdField,
        rows: sent.map((w) => bulkRow(spec, w, targets)),
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
      const byId = new Map(sent.map((w) => [w.externalId, w]));
      for (const [id, o] of result.outcomes) out.set(id, o.status === 'failed' ? { ok: false, error: asLinkError(spec, byId.get(id), o.error, targets) } : toResult(o));
      return out;
    },

    async follow(object, job) {
      const info = await bulk.info(job.id);
      // Never closed by its holder: closed now only when its upload was answered; otherwise it holds
      // nothing certain, and aborted it processes nothing.
      if (info.state === 'Open' && !job.uploaded) {
        await bulk.abort(job.id);
        return new Map();
      }
      if (info.state === 'Open') await bulk.close(job.id);
      const { outcomes } = await bulk.outcomes(job.id, { onPoll: progress(object, 0) });
      return new Map([...outcomes].map(([id, o]) => [id, toResult(o)]));
    },
  };
}
