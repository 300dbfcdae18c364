/**
 * A small Bulk API 2.0 ingest client over the adapter's own request path (rate budget, request
 * counts, usage figures, classified and secret-free errors): create a job, upload its CSV once,
 * close it, poll it with backoff, read its result sets and match every row back by external id
 * (Salesforce does not keep the upload order), abort or delete it. A job is known by its id alone:
 * a client that did not create it (a process started again) polls it and reads the same results.
 *
 * Wire facts (Salesforce's Bulk API 2.0 guide [V]): `POST /jobs/ingest`, one `PUT
 * /jobs/ingest/{id}/batches` per job (a second upload is refused), `PATCH { state }`,
 * `GET /jobs/ingest/{id}`, `.../successfulResults/` (`sf__Id`, `sf__Created`, then the uploaded
 * columns), `.../failedResults/` (`sf__Id`, `sf__Error`, columns), `.../unprocessedrecords/`.
 * One upload holds at most 150 MB after Salesforce's base64 conversion, which adds about 50%:
 * the guide asks for uploads of at most 100 MB.
 */
import { CrmError, CrmErrorKind, ValidationError } from '../../src/errors.js';
import { parseCsvTable, csvLine, type CsvValue, type CsvTable } from './salesforce-csv.js';
import { bulkQuotaFailure, missingReference, recordError, type SalesforceRecordError } from './salesforce-errors.js';
import { apiBase } from './salesforce-requests.js';
import type { SalesforceBulkOptions, SalesforceHttpRequest } from './salesforce-options.js';

export type { SalesforceBulkOptions };

const VENDOR = 'salesforce';

/** The adapter's request path; `text: true` returns the body as text (CSV) instead of parsing it. */
export type BulkSend = <R>(req: SalesforceHttpRequest, options?: { text?: boolean }) => Promise<R>;

/** An ingest job as Salesforce describes it (the fields this client reads; the rest pass through). */
export interface BulkJobInfo {
  id: string;
  object: string;
  operation: string;
  state: 'Open' | 'UploadComplete' | 'InProgress' | 'JobComplete' | 'Failed' | 'Aborted';
  externalIdFieldName?: string;
  numberRecordsProcessed?: number;
  numberRecordsFailed?: number;
  /** Why a Failed job failed. */
  errorMessage?: string;
  [field: string]: unknown;
}

/** The end of one uploaded row, matched by its external id. */
export type BulkRowOutcome =
  | { status: 'created' | 'updated'; jobId: string; id: string }
  | {
      status: 'failed';
      jobId: string;
      /** Salesforce's `sf__Error` as it came. */
      sfError: string;
      /** The error classified (code, the field named where Salesforce or the row names one, retryable by its code). */
      error: CrmError;
    }
  /** Not processed: the job was aborted, failed whole or timed out before this row; `reason` is the job's error message when it has one. */
  | { status: 'unprocessed'; jobId: string; reason?: string };

/** One job's three result sets, parsed. */
export interface BulkResults {
  successful: CsvTable;
  failed: CsvTable;
  unprocessed: CsvTable;
}

export interface BulkUpsertInput {
  /** The sObject (`Contact`). */
  object: string;
  /** Its External ID field (`AI_External_Id__c`); every row holds a distinct non-empty value in it. */
  externalIdFieldName: string;
  /**
   * One object per record: CSV column -> value. Columns are field API names or relationship columns
   * naming a parent by its external id (`Account.AI_External_Id__c`; polymorphic `Contact:Who.AI_External_Id__c`).
   * `null` clears a field (`#N/A`); a missing, undefined or empty value leaves it as it is.
   */
  rows: ReadonlyArray<Readonly<Record<string, CsvValue>>>;
  /**
   * Called with each job and the external ids it will carry once the job exists and before its data
   * is uploaded (a failure stops the upsert there): where a caller records the job id, so that a run
   * stopped at any later point can resume the job instead of uploading the rows again.
   */
  onJob?: (job: BulkJobInfo, externalIds: readonly string[]) => void | Promise<void>;
  /** Called after each job's upload was answered and before the job is closed (processing starts). */
  onUploaded?: (job: BulkJobInfo, externalIds: readonly string[]) => void | Promise<void>;
  /** Called after each job-info read. */
  onPoll?: (job: BulkJobInfo) => void;
}

export interface BulkUpsertResult {
  /** Each job at its end, in the order they were created. */
  jobs: BulkJobInfo[];
  /** Every row's end, by external id. */
  outcomes: Map<string, BulkRowOutcome>;
}

export interface SalesforceBulk {
  /** `POST /jobs/ingest` (CSV, comma, LF): the job, Open. */
  createJob(spec: { object: string; operation?: 'upsert' | 'insert' | 'update'; externalIdFieldName?: string; lineEnding?: 'LF' | 'CRLF' }): Promise<BulkJobInfo>;
  /** `PUT /jobs/ingest/{id}/batches`: the job's data, once. Not retried (a second upload is refused). */
  upload(jobId: string, csv: string): Promise<void>;
  /** `PATCH { state: 'UploadComplete' }`: processing starts. */
  close(jobId: string): Promise<BulkJobInfo>;
  /** `PATCH { state: 'Aborted' }`: rows not yet processed stay unprocessed. */
  abort(jobId: string): Promise<BulkJobInfo>;
  /** `DELETE /jobs/ingest/{id}`: the job and its results are gone. */
  delete(jobId: string): Promise<void>;
  /** `GET /jobs/ingest/{id}`. */
  info(jobId: string): Promise<BulkJobInfo>;
  /**
   * Poll until the job is JobComplete, Failed or Aborted (an Open job is an error: nobody closed it).
   * `after`, the job as last seen, makes the first poll wait one interval when it was still being processed.
   */
  waitForJob(jobId: string, options?: { after?: BulkJobInfo; onPoll?: (job: BulkJobInfo) => void }): Promise<BulkJobInfo>;
  /** Read the result sets a finished job has rows in (from its counts; all three without them), parsed; empty tables for the others. */
  results(job: BulkJobInfo): Promise<BulkResults>;
  /**
   * Given only a job id: wait for the job, read its results and match each row by the job's
   * external-id field. What a process started again calls with a job id it recorded.
   */
  outcomes(jobId: string, options?: { onPoll?: (job: BulkJobInfo) => void }): Promise<{ job: BulkJobInfo; outcomes: Map<string, BulkRowOutcome> }>;
  /**
   * Upsert rows by external id through as many jobs as `maxUploadBytes` needs, one after another; every row's end.
   * A job Failed because a daily Bulk API allowance ran out (or a job creation refused for it) throws a quota CrmError, and no further job is created.
   */
  upsert(input: BulkUpsertInput): Promise<BulkUpsertResult>;
}

const FINAL = new Set(['JobComplete', 'Failed', 'Aborted']);
const EMPTY: CsvTable = { columns: [], rows: [] };

export function salesforceBulk(send: BulkSend, apiVersion: string, options: SalesforceBulkOptions = {}): SalesforceBulk {
  const o = {
    pollIntervalMs: options.pollIntervalMs ?? 5_000,
    maxPollIntervalMs: options.maxPollIntervalMs ?? 30_000,
    timeoutMs: options.timeoutMs ?? 3_600_000,
    maxUploadBytes: options.maxUploadBytes ?? 100_000_000,
    readRetries: options.readRetries ?? 3,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
  };
  const jobs = `${apiBase(apiVersion)}/jobs/ingest`;
  // A new object each time: jsforce writes Authorization and content-length into the headers it is given.
  const json = () => ({ 'content-type': 'application/json' });

  /** A read, retried while its failure is transient (honouring Retry-After). */
  async function read<R>(req: SalesforceHttpRequest, text = false): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send<R>(req, { text });
      } catch (err) {
        if (!(err instanceof CrmError) || !err.retryable || attempt >= o.readRetries) throw err;
        await o.sleep(err.retryAfterMs ?? o.pollIntervalMs * 2 ** attempt);
      }
    }
  }

  const info = (jobId: string) => read<BulkJobInfo>({ method: 'GET', url: `${jobs}/${encodeURIComponent(jobId)}` });
  const setState = (jobId: string, state: 'UploadComplete' | 'Aborted') =>
    send<BulkJobInfo>({ method: 'PATCH', url: `${jobs}/${encodeURIComponent(jobId)}`, headers: json(), body: JSON.stringify({ state }) });
  const resultSet = async (jobId: string, set: string) => parseCsvTable((await read<string | undefined>({ method: 'GET', url: `${jobs}/${encodeURIComponent(jobId)}/${set}/` }, true)) ?? '');

  const bulk: SalesforceBulk = {
    createJob: ({ object, operation = 'upsert', externalIdFieldName, lineEnding = 'LF' }) =>
      send<BulkJobInfo>({
        method: 'POST',
        url: jobs,
        headers: json(),
        body: JSON.stringify({ object, operation, ...(externalIdFieldName !== undefined ? { externalIdFieldName } : {}), contentType: 'CSV', columnDelimiter: 'COMMA', lineEnding }),
      }),

    async upload(jobId, csv) {
      await send({ method: 'PUT', url: `${jobs}/${encodeURIComponent(jobId)}/batches`, headers: { 'content-type': 'text/csv' }, body: csv });
    },

    close: (jobId) => setState(jobId, 'UploadComplete'),
    abort: (jobId) => setState(jobId, 'Aborted'),
    async delete(jobId) {
      await send({ method: 'DELETE', url: `${jobs}/${encodeURIComponent(jobId)}` });
    },
    info,

    async waitForJob(jobId, { after, onPoll } = {}) {
      let wait = o.pollIntervalMs;
      let waited = 0;
      const pause = async () => {
        await o.sleep(wait);
        waited += wait;
        wait = Math.min(o.maxPollIntervalMs, Math.round(wait * 1.5));
      };
      if (after && !FINAL.has(after.state) && after.state !== 'Open') await pause();
      for (;;) {
        const job = await info(jobId);
        onPoll?.(job);
        if (FINAL.has(job.state)) return job;
        if (job.state === 'Open') throw new CrmError(`Bulk API job ${jobId} is still Open: it was never closed (UploadComplete), so Salesforce is not processing it`, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: 'BULK_JOB_OPEN' });
        if (waited + wait > o.timeoutMs) {
          throw new CrmError(`Bulk API job ${jobId} is still ${job.state} after ${Math.round(waited / 1000)} s of polling; Salesforce goes on processing it: read its results later by its id`, {
            vendor: VENDOR,
            kind: CrmErrorKind.transient,
            vendorCode: 'BULK_JOB_TIMEOUT',
          });
        }
        await pause();
      }
    },

    async results(job) {
      const { numberRecordsProcessed: processed, numberRecordsFailed: failed } = job;
      // Without both counts nothing can be skipped.
      const counted = typeof processed === 'number' && typeof failed === 'number';
      return {
        successful: !counted || processed > failed ? await resultSet(job.id, 'successfulResults') : EMPTY,
        failed: !counted || failed > 0 ? await resultSet(job.id, 'failedResults') : EMPTY,
        // A JobComplete job processed every row it was given.
        unprocessed: job.state !== 'JobComplete' ? await resultSet(job.id, 'unprocessedrecords') : EMPTY,
      };
    },

    async outcomes(jobId, { onPoll } = {}) {
      const job = await bulk.waitForJob(jobId, { onPoll });
      const key = job.externalIdFieldName;
      if (!key) throw new CrmError(`Bulk API job ${jobId} is an ${job.operation} job without an external-id field: its rows cannot be matched by external id`, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: 'BULK_JOB_NOT_UPSERT' });
      return { job, outcomes: matchResults(job, key, await bulk.results(job)) };
    },

    async upsert({ object, externalIdFieldName, rows, onJob, onUploaded, onPoll }) {
      const columns = columnsOf(rows, externalIdFieldName);
      const externalIds = checkedIds(rows, externalIdFieldName);
      const header = `${csvLine(columns)}\n`;
      const rowLines = rows.map((r) => `${csvLine(columns.map((c) => r[c]))}\n`);
      const result: BulkUpsertResult = { jobs: [], outcomes: new Map() };
      for (const chunk of chunks(header, rowLines, o.maxUploadBytes, externalIds)) {
        const ids = chunk.map((i) => externalIds[i]!);
        const created = await bulk.createJob({ object, operation: 'upsert', externalIdFieldName });
        try {
          await onJob?.(created, ids);
          await bulk.upload(created.id, header + chunk.map((i) => rowLines[i]!).join(''));
          await onUploaded?.(created, ids);
        } catch (err) {
          // Never closed, the job processes nothing: abort it so that it does not linger Open (best effort).
          await bulk.abort(created.id).catch(() => undefined);
          throw err;
        }
        const closed = await bulk.close(created.id);
        const job = await bulk.waitForJob(created.id, { after: closed, onPoll });
        // A daily allowance ran out: stop here (no further job), as a quota error the caller pauses on.
        // A caller that recorded the job (onJob) follows it later for the rows it did process.
        const spent = bulkQuotaFailure(job);
        if (spent) throw spent;
        result.jobs.push(job);
        const matched = matchResults(job, externalIdFieldName, await bulk.results(job));
        for (const id of ids) result.outcomes.set(id, matched.get(id) ?? { status: 'unprocessed', jobId: job.id, reason: job.errorMessage ?? 'Salesforce returned no result for this row' });
      }
      return result;
    },
  };
  return bulk;
}

/** The external-id column first, then every other column in the order rows first name it. */
function columnsOf(rows: ReadonlyArray<Readonly<Record<string, CsvValue>>>, key: string): string[] {
  const seen = new Set<string>([key]);
  for (const r of rows) for (const c of Object.keys(r)) seen.add(c);
  return [...seen];
}

/** Each row's external id; every one present, text, distinct (a value twice in one job fails both rows). */
function checkedIds(rows: ReadonlyArray<Readonly<Record<string, CsvValue>>>, key: string): string[] {
  const seen = new Map<string, number>();
  const issues: Array<{ path: string; message: string }> = [];
  const ids = rows.map((r, i) => {
    const v = r[key];
    const id = typeof v === 'string' || typeof v === 'number' ? String(v) : '';
    if (id === '') issues.push({ path: `rows[${i}].${key}`, message: 'is empty: a bulk upsert matches every row by its external id' });
    else if (seen.has(id)) issues.push({ path: `rows[${i}].${key}`, message: `repeats rows[${seen.get(id)!}] (${JSON.stringify(id)}): one job takes each external id once` });
    else seen.set(id, i);
    return id;
  });
  if (issues.length > 0) throw new ValidationError(issues.slice(0, 20));
  return ids;
}

/**
 * Row indexes grouped into uploads of at most `max` bytes with the header. A row that alone
 * exceeds it cannot be sent: refused before anything is.
 */
function chunks(header: string, rowLines: readonly string[], max: number, ids: readonly string[]): number[][] {
  const headerBytes = Buffer.byteLength(header, 'utf8');
  const out: number[][] = [];
  let current: number[] = [];
  let size = headerBytes;
  rowLines.forEach((line, i) => {
    const bytes = Buffer.byteLength(line, 'utf8');
    if (headerBytes + bytes > max) throw new ValidationError([{ path: `rows[${i}]`, message: `row ${JSON.stringify(ids[i])} is ${bytes} bytes of CSV: with the header it exceeds the ${max}-byte upload limit` }]);
    if (size + bytes > max && current.length > 0) {
      out.push(current);
      current = [];
      size = headerBytes;
    }
    current.push(i);
    size += bytes;
  });
  if (current.length > 0) out.push(current);
  return out;
}

/** `CODE:message:FIELDS --` (`CODE:message:--` when no field is named). */
const SF_ERROR = /^([A-Z0-9_]+):([\s\S]*):([^:]*)--$/;

/** One `sf__Error` cell as a collection error: code, message and the fields it names. */
export function parseSfError(cell: string): SalesforceRecordError {
  const m = SF_ERROR.exec(cell.trim());
  if (!m) return { statusCode: 'UNKNOWN', message: cell, fields: [] };
  const fields = m[3]!.trim().split(',').map((f) => f.trim()).filter(Boolean);
  return { statusCode: m[1]!, message: m[2]!, fields };
}

/**
 * A failed row's error: classified as a collection error is (recordError: a refused value names its
 * field and value; UNABLE_TO_LOCK_ROW is retryable), and a parent named by external id that matches
 * no record names its relationship column.
 */
function rowError(object: string, row: Readonly<Record<string, string>>, sfError: string): CrmError {
  const e = parseSfError(sfError);
  const missing = missingReference([e]);
  if (missing) {
    const column = Object.keys(row).find((c) => c.endsWith(`.${missing.field}`) && row[c] === missing.value);
    if (column) {
      return new CrmError(`${object}.${column} = ${JSON.stringify(missing.value)}: no ${missing.sobject} has ${missing.field} ${JSON.stringify(missing.value)} (${e.statusCode}: ${e.message})`, {
        vendor: VENDOR,
        kind: CrmErrorKind.permanent,
        vendorCode: e.statusCode,
        field: column,
      });
    }
  }
  const error = recordError([e], { sobject: object, record: row });
  const field = e.fields?.[0];
  if (error.field !== undefined || field === undefined) return error;
  return new CrmError(`${e.statusCode}: ${e.message} [${e.fields!.join(', ')}]`, { vendor: VENDOR, kind: error.kind, vendorCode: error.vendorCode, field });
}

/** Every row of a finished job's results, by the value of its `key` column. */
function matchResults(job: BulkJobInfo, key: string, results: BulkResults): Map<string, BulkRowOutcome> {
  const out = new Map<string, BulkRowOutcome>();
  for (const r of results.successful.rows) {
    const id = r[key];
    if (id !== undefined) out.set(id, { status: r.sf__Created === 'true' ? 'created' : 'updated', jobId: job.id, id: r.sf__Id ?? '' });
  }
  for (const r of results.failed.rows) {
    const id = r[key];
    const { sf__Id: _id, sf__Error: sfError = '', ...row } = r;
    if (id !== undefined) out.set(id, { status: 'failed', jobId: job.id, sfError, error: rowError(job.object, row, sfError) });
  }
  for (const r of results.unprocessed.rows) {
    const id = r[key];
    if (id !== undefined && !out.has(id)) out.set(id, { status: 'unprocessed', jobId: job.id, ...(job.errorMessage ? { reason: job.errorMessage } : {}) });
  }
  return out;
}
