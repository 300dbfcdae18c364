/**
 * Bulk API 2.0 ingest jobs in fakeSalesforce: create, upload (once), close, abort, delete, job
 * info, and the three result sets, with Salesforce's shapes and states. Rows are written through
 * the org's own record rules (the ones the Collections upsert applies: External ID matching,
 * required fields, restricted picklists, references by external id, validation rules), so a row
 * written here is visible to queries and to later Collections writes.
 *
 * Sources. [V] Salesforce's Bulk API 2.0 guide: the resources, the request and job-info fields,
 * the states, the CSV rules ("Valid CSV Record Rows": quoting, `#N/A` for null, empty values
 * ignored), the result columns (`sf__Id`, `sf__Created`; `sf__Id`, `sf__Error`) and that result
 * rows do not keep the upload order. [V, third-party records of real responses] the create-job
 * refusals `INVALIDJOB` "InvalidJob : Unable to find object: X" and "InvalidJob : Field name
 * provided, F does not match an External ID for X", `API_ERROR` "Invalid value: 'v' supplied for
 * property: 'operation'", a second upload's `BULK_API_ERROR` "Found multipe contents for job..."
 * (Salesforce's spelling), a job failed whole with errorMessage "InvalidBatch : Field name not
 * found : F", and `sf__Error` cells like `INVALID_CROSS_REFERENCE_KEY:invalid cross reference id:--`.
 * The guide's list of Bulk API exception codes names InvalidJob, InvalidJobState, InvalidBatch
 * and ClientInputError [V]; how InvalidJobState travels is inferred from INVALIDJOB [I].
 *
 * Daily allowances. [V] Salesforce's "Bulk API and Bulk API 2.0 Limits and Allocations" and the
 * Bulk API 2.0 guide ("Understanding Bulk API 2.0 Ingest", "Limits and Allocations"): ingest jobs
 * take at most 150,000,000 records per rolling 24 hours and 15,000 batches (shared with Bulk API
 * 1.0); Salesforce splits a job's data into one batch per 10,000 records, the job's empty parent
 * batch not counted; a limit exceeded while a job is processed leaves the rest of its data
 * unprocessed and the job Failed. The exception code ExceededQuota, "The job or batch you tried to
 * create exceeds the allowed number for the past 24-hour period", is in the guide's list [V]. [I]:
 * that a batch is processed only when the allowance covers it whole, the job's errorMessage, and
 * that job creation is refused once an allowance is spent, with that code sent as INVALIDJOB is
 * (`EXCEEDEDQUOTA`, "ExceededQuota : ...", HTTP 400). The fake has no clock: tests roll the
 * window by `setBulkUsage`.
 * [I] marks what could not be checked; each says so where it is raised.
 */
import { csvCell, CsvSyntaxError, CSV_NULL, parseCsv } from '../salesforce-csv.js';
import { lookupFieldOf } from './salesforce-fake-references.js';
import { seededRandom, type FakeRequest, type FakeResponse } from '../../testing/fake-http.js';

/** `RelationshipName.Field`, or for a polymorphic lookup `ObjectType:RelationshipName.Field`. */
const RELATIONSHIP_COLUMN = /^(?:([A-Za-z0-9_]+):)?([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)$/;

/** The states of an ingest job [V]. */
export const BulkJobState = {
  open: 'Open',
  uploadComplete: 'UploadComplete',
  inProgress: 'InProgress',
  jobComplete: 'JobComplete',
  failed: 'Failed',
  aborted: 'Aborted',
} as const;
export type BulkJobState = (typeof BulkJobState)[keyof typeof BulkJobState];

export type BulkOperation = 'insert' | 'update' | 'upsert';

export interface FakeBulkOptions {
  /**
   * Job-info reads (`GET /jobs/ingest/{id}`) after UploadComplete until the job is done: each
   * processes its share of the rows; before the last the job answers InProgress, on the last
   * JobComplete. Default 2.
   */
  pollsToComplete?: number;
  /** Largest upload body in bytes (UTF-8); larger is refused with 413. Default 150,000,000 [V: "150 MB"]. */
  maxUploadBytes?: number;
  /** Seed of the order of result rows (deterministic, never the upload order). Default 1. */
  seed?: number;
  /** Records ingest jobs may process per rolling 24 hours. Default 150,000,000 [V]. */
  dailyRecords?: number;
  /** Internal batches (one per 10,000 records of a job) per rolling 24 hours, shared with Bulk API 1.0. Default 15,000 [V]. */
  dailyBatches?: number;
}

/** What the jobs used of the daily allowances, and the allowances. */
export interface FakeBulkUsage {
  records: number;
  batches: number;
  dailyRecords: number;
  dailyBatches: number;
}

/** Records in one internal batch of an ingest job [V]. */
export const BULK_BATCH_RECORDS = 10_000;

interface RowFailure {
  statusCode: string;
  message: string;
  fields: string[];
}

/** What the jobs need from the org. */
export interface BulkOrg {
  hasSObject(sobject: string): boolean;
  field(sobject: string, name: string): { externalId: boolean; type: string; referenceTo: readonly string[] } | undefined;
  /**
   * Write one row by the org's record rules: upsert matches on `matchField` (the external id, or
   * `Id` for update), insert creates. `fields` name parents as Collections does
   * (`Account: { attributes: { type: 'Account' }, AI_External_Id__c: 'acme' }`).
   */
  write(sobject: string, operation: BulkOperation, matchField: string, matchValue: string, fields: Record<string, unknown>): { ok: true; id: string; created: boolean } | { ok: false; error: RowFailure; id?: string };
}

/** A job as a test sees it. */
export interface FakeBulkJob {
  id: string;
  object: string;
  operation: BulkOperation;
  externalIdFieldName?: string;
  state: BulkJobState;
  /** Rows uploaded (0 before the upload). */
  rows: number;
  numberRecordsProcessed: number;
  numberRecordsFailed: number;
  errorMessage?: string;
}

interface Job {
  info: {
    id: string;
    operation: BulkOperation;
    object: string;
    createdById: string;
    createdDate: string;
    systemModstamp: string;
    state: BulkJobState;
    externalIdFieldName?: string;
    concurrencyMode: 'Parallel';
    contentType: 'CSV';
    apiVersion: number;
    contentUrl: string;
    lineEnding: 'LF' | 'CRLF';
    columnDelimiter: 'COMMA';
  };
  errorMessage?: string;
  uploaded: boolean;
  columns: string[];
  rows: string[][];
  /** Rows processed so far, in processing order, with their result. */
  done: Array<{ row: number; ok: boolean; id: string; created?: boolean; error?: string }>;
  polls: number;
  /** Rows written in processing order (so the result order is not the upload order). */
  order: number[];
  /** Set when the daily allowance did not cover all of the job: it fails with this once the rows it covered are processed. */
  stopMessage?: string;
}

const USER_ID = '005000000000001AAA';
const wire = (status: number, errorCode: string, message: string): FakeResponse => ({ status, body: [{ errorCode, message }] });
const NOT_FOUND = () => wire(404, 'NOT_FOUND', 'The requested resource does not exist');
const OPERATIONS = new Set(['insert', 'update', 'upsert']);
const quoted = (v: string) => `"${v.replaceAll('"', '""')}"`;
const csvResponse = (text: string): FakeResponse => ({ status: 200, headers: { 'content-type': 'text/csv' }, rawBody: text });

/**
 * `sf__Error` as Bulk API writes it: `CODE:message:FIELD --`, `CODE:message:--` without fields
 * [V for the fieldless form; I: several fields joined by commas].
 */
export const sfError = (e: RowFailure) => `${e.statusCode}:${e.message}:${e.fields.length > 0 ? `${e.fields.join(',')} ` : ''}--`;

export class FakeBulkJobs {
  private readonly jobs = new Map<string, Job>();
  private nextJob = 1;
  private readonly pollsToComplete: number;
  private readonly maxUploadBytes: number;
  private readonly seed: number;
  private readonly usage: FakeBulkUsage;

  constructor(private readonly org: BulkOrg, options: FakeBulkOptions = {}) {
    this.pollsToComplete = Math.max(1, options.pollsToComplete ?? 2);
    this.maxUploadBytes = options.maxUploadBytes ?? 150_000_000;
    this.seed = options.seed ?? 1;
    this.usage = { records: 0, batches: 0, dailyRecords: options.dailyRecords ?? 150_000_000, dailyBatches: options.dailyBatches ?? 15_000 };
  }

  /** What the jobs used of the daily allowances in the current window, and the allowances. */
  bulkUsage(): FakeBulkUsage {
    return { ...this.usage };
  }

  /**
   * Set what is used of the allowances (and, given, the allowances): `{ records: 0, batches: 0 }`
   * is the rolling window moving past the jobs that used them; batches also stand for Bulk API 1.0's.
   */
  setBulkUsage(used: { records?: number; batches?: number }, limits: { dailyRecords?: number; dailyBatches?: number } = {}): void {
    Object.assign(this.usage, used, limits);
  }

  /** The jobs created, oldest first (deleted ones are gone). */
  list(): FakeBulkJob[] {
    return [...this.jobs.values()].map((j) => ({
      id: j.info.id,
      object: j.info.object,
      operation: j.info.operation,
      ...(j.info.externalIdFieldName !== undefined ? { externalIdFieldName: j.info.externalIdFieldName } : {}),
      state: j.info.state,
      rows: j.rows.length,
      numberRecordsProcessed: j.done.length,
      numberRecordsFailed: j.done.filter((d) => !d.ok).length,
      ...(j.errorMessage !== undefined ? { errorMessage: j.errorMessage } : {}),
    }));
  }

  /** `parts` is the path after `/jobs/ingest`, trailing slash removed. */
  route(version: string, parts: string[], req: FakeRequest): FakeResponse {
    if (parts.length === 0 && req.method === 'POST') return this.create(version, req.body);
    const job = parts[0] === undefined ? undefined : this.jobs.get(parts[0]);
    if (!job) return NOT_FOUND();
    if (parts.length === 1) {
      if (req.method === 'GET') return this.poll(job);
      if (req.method === 'PATCH') return this.patch(job, req.body);
      if (req.method === 'DELETE') return this.delete(job);
    }
    if (parts.length === 2 && parts[1] === 'batches' && req.method === 'PUT') return this.upload(job, req);
    if (parts.length === 2 && req.method === 'GET') {
      if (parts[1] === 'successfulResults') return this.results(job, 'successful');
      if (parts[1] === 'failedResults') return this.results(job, 'failed');
      if (parts[1] === 'unprocessedrecords') return this.results(job, 'unprocessed');
    }
    return NOT_FOUND();
  }

  private create(version: string, body: unknown): FakeResponse {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const object = typeof b.object === 'string' ? b.object : '';
    // delete and hardDelete are real operations this fake does not model; other delimiters too.
    const checks: Array<[string, ReadonlySet<string>, unknown]> = [
      ['operation', OPERATIONS, b.operation ?? ''],
      ['contentType', new Set(['CSV']), b.contentType ?? 'CSV'],
      ['lineEnding', new Set(['LF', 'CRLF']), b.lineEnding ?? 'LF'],
      ['columnDelimiter', new Set(['COMMA']), b.columnDelimiter ?? 'COMMA'],
    ];
    for (const [property, allowed, v] of checks) if (!allowed.has(String(v))) return wire(400, 'API_ERROR', `Invalid value: '${String(v)}' supplied for property: '${property}'`);
    if (!this.org.hasSObject(object)) return wire(400, 'INVALIDJOB', `InvalidJob : Unable to find object: ${object}`);
    // [I] the wire form, the status and the wording (the code and its meaning are the guide's).
    const spent = this.spent();
    if (spent) return wire(400, 'EXCEEDEDQUOTA', `ExceededQuota : The job you tried to create exceeds the allowed number of ${spent} for the past 24-hour period`);
    const operation = b.operation as BulkOperation;
    const ext = typeof b.externalIdFieldName === 'string' ? b.externalIdFieldName : '';
    if (operation === 'upsert' && this.org.field(object, ext)?.externalId !== true && ext !== 'Id') {
      return wire(400, 'INVALIDJOB', `InvalidJob : Field name provided, ${ext} does not match an External ID for ${object}`);
    }
    const id = `750${String(this.nextJob++).padStart(12, '0')}AAA`;
    const now = new Date().toISOString().replace('Z', '+0000');
    const job: Job = {
      info: {
        id,
        operation,
        object,
        createdById: USER_ID,
        createdDate: now,
        systemModstamp: now,
        state: BulkJobState.open,
        ...(operation === 'upsert' ? { externalIdFieldName: ext } : {}),
        concurrencyMode: 'Parallel',
        contentType: 'CSV',
        apiVersion: Number(version),
        contentUrl: `services/data/v${version}/jobs/ingest/${id}/batches`,
        lineEnding: b.lineEnding === 'CRLF' ? 'CRLF' : 'LF',
        columnDelimiter: 'COMMA',
      },
      uploaded: false,
      columns: [],
      rows: [],
      done: [],
      polls: 0,
      order: [],
    };
    this.jobs.set(id, job);
    // [I] the status of a created job: 200 (jsforce reads any 2xx).
    return { status: 200, body: job.info };
  }

  private upload(job: Job, req: FakeRequest): FakeResponse {
    if (job.uploaded) {
      // [V third-party record; I: the status]
      return wire(400, 'BULK_API_ERROR', `Found multipe contents for job: <${job.info.id.slice(0, 15)}>, please 'Close' / 'Abort' / 'Delete' the current Job then create a new Job and make sure you only do 'PUT' once on a given Job.`);
    }
    // [V] the guide's InvalidJobState exception; [I] its wire form (as INVALIDJOB is sent), the wording, the status.
    if (job.info.state !== BulkJobState.open) return wire(400, 'INVALIDJOBSTATE', `InvalidJobState : Job ${job.info.id} is not Open (state ${job.info.state}): data can only be uploaded to an Open job`);
    const text = req.raw ?? (typeof req.body === 'string' ? req.body : '');
    // [I: Salesforce's answer to an oversized upload]
    if (Buffer.byteLength(text, 'utf8') > this.maxUploadBytes) return wire(413, 'API_ERROR', `The upload is larger than the ${this.maxUploadBytes} bytes one upload may hold`);
    job.uploaded = true;
    const failed = this.read(job, text);
    if (failed) job.errorMessage = failed;
    return { status: 201 };
  }

  /** Parse the upload; an error message when the whole job will fail with it. */
  private read(job: Job, text: string): string | undefined {
    const firstBreak = text.search(/\r?\n/);
    const crlf = firstBreak >= 0 && text[firstBreak] === '\r';
    // [I: wording widely reported] a line ending other than the job's fails the job.
    if (firstBreak >= 0 && crlf !== (job.info.lineEnding === 'CRLF')) return `ClientInputError : LineEnding is invalid on user data. Current LineEnding setting is ${job.info.lineEnding}`;
    let cells: string[][];
    try {
      cells = parseCsv(text);
    } catch (err) {
      // [I: the wording]
      return `InvalidBatch : Failed to parse CSV: ${(err as CsvSyntaxError).message}`;
    }
    const [columns = [], ...rows] = cells;
    if (columns.length === 0 || columns.every((c) => c === '')) return 'InvalidBatch : Failed to parse CSV header';
    job.columns = columns;
    job.rows = rows;
    for (const column of columns) {
      const refused = this.columnRefused(job.info.object, column);
      if (refused) return refused;
    }
    const short = rows.findIndex((r) => r.length !== columns.length);
    // [I: the wording]
    if (short >= 0) return `InvalidBatch : Failed to parse CSV: row ${short + 2} has ${rows[short]!.length} values where the header names ${columns.length} columns`;
    return undefined;
  }

  /**
   * Why a header column fails the job, if it does. A column is a plain field of the object, or a
   * relationship column `RelationshipName.Field` naming the parent by a field of it, or for a
   * polymorphic lookup `ObjectType:RelationshipName.Field` [V: "Relationship Fields in a Header Row
   * (2.0)": the syntax, its sample `Lead:Who.Email`, and "You get an error if you omit this syntax for
   * a polymorphic field. You also get an error if you include this syntax for a field that is not
   * polymorphic."]. The wordings of those two errors are [I], from reports of real jobs.
   */
  private columnRefused(sobject: string, column: string): string | undefined {
    const rel = RELATIONSHIP_COLUMN.exec(column);
    if (!rel) return this.org.field(sobject, column) !== undefined ? undefined : `InvalidBatch : Field name not found : ${column}`;
    const [, type, name, field] = rel as unknown as [string, string | undefined, string, string];
    const lookup = this.org.field(sobject, lookupFieldOf(name));
    if (lookup?.type !== 'reference') return `InvalidBatch : Unable to find relationship: ${name}`;
    const polymorphic = lookup.referenceTo.length > 1;
    if (type !== undefined && !polymorphic) return `InvalidBatch : type is not needed for non polymorphic foreign key references: ${name}`;
    if (type === undefined && polymorphic) return `InvalidBatch : type is needed for polymorphic foreign key references: ${name}`;
    const target = type ?? lookup.referenceTo[0]!;
    if (!lookup.referenceTo.includes(target) || this.org.field(target, field) === undefined) return `InvalidBatch : Field name not found : ${column}`;
    return undefined;
  }

  private patch(job: Job, body: unknown): FakeResponse {
    const state = (body as { state?: unknown } | undefined)?.state;
    const from = job.info.state;
    if (state === BulkJobState.uploadComplete && from === BulkJobState.open) {
      job.info.state = BulkJobState.uploadComplete;
      // [I] closing a job with no data: the fake fails it.
      if (!job.uploaded) job.errorMessage = 'InvalidBatch : No data uploaded for the job';
      job.order = this.shuffled(job.rows.length);
      return { status: 200, body: job.info };
    }
    if (state === BulkJobState.aborted && (from === BulkJobState.open || from === BulkJobState.uploadComplete || from === BulkJobState.inProgress)) {
      job.info.state = BulkJobState.aborted;
      return { status: 200, body: job.info };
    }
    if (state === BulkJobState.uploadComplete || state === BulkJobState.aborted) {
      // [V] the guide's InvalidJobState exception; [I] its wire form, the wording, the status.
      return wire(400, 'INVALIDJOBSTATE', `InvalidJobState : Job ${job.info.id} cannot change from ${from} to ${String(state)}`);
    }
    return wire(400, 'API_ERROR', `Invalid value: '${String(state)}' supplied for property: 'state'`);
  }

  private delete(job: Job): FakeResponse {
    // [V] a job can be deleted once UploadComplete, JobComplete, Aborted or Failed; [I] the refusal's wording.
    if (job.info.state === BulkJobState.open) return wire(400, 'INVALIDJOBSTATE', `InvalidJobState : Job ${job.info.id} is Open: close or abort it before deleting it`);
    this.jobs.delete(job.info.id);
    return { status: 204 };
  }

  /** Which allowance is spent, named as the refusal names it; undefined while both have room. */
  private spent(): string | undefined {
    const u = this.usage;
    if (u.records >= u.dailyRecords) return `${u.dailyRecords} records`;
    if (u.batches >= u.dailyBatches) return `${u.dailyBatches} batches`;
    return undefined;
  }

  /**
   * When processing starts: take the job's internal batches (upload order, 10,000 records each)
   * from the allowances while they cover a batch whole; the rows of the batches not covered are
   * left unprocessed and the job fails once the covered ones are done.
   */
  private allot(job: Job): void {
    const u = this.usage;
    let covered = 0;
    while (covered < job.rows.length) {
      const size = Math.min(BULK_BATCH_RECORDS, job.rows.length - covered);
      if (u.batches + 1 > u.dailyBatches || u.records + size > u.dailyRecords) break;
      u.batches += 1;
      u.records += size;
      covered += size;
    }
    if (covered === job.rows.length) return;
    job.order = job.order.filter((row) => row < covered);
    const which = u.batches + 1 > u.dailyBatches ? `batches (${u.dailyBatches})` : `records (${u.dailyRecords})`;
    // [I] the wording.
    job.stopMessage = `ExceededQuota : The daily allowance of Bulk API ${which} for the past 24-hour period was reached while processing the job; ${job.rows.length - covered} records were not processed`;
  }

  /** Job info; while the job is processed each read moves it on by one share of its rows. */
  private poll(job: Job): FakeResponse {
    if (job.info.state === BulkJobState.uploadComplete || job.info.state === BulkJobState.inProgress) {
      if (job.errorMessage !== undefined) {
        job.info.state = BulkJobState.failed;
      } else {
        if (job.polls === 0) this.allot(job);
        job.polls += 1;
        const until = Math.ceil((job.order.length * Math.min(job.polls, this.pollsToComplete)) / this.pollsToComplete);
        this.process(job, until);
        const done = job.polls >= this.pollsToComplete;
        if (done && job.stopMessage !== undefined) job.errorMessage = job.stopMessage;
        job.info.state = !done ? BulkJobState.inProgress : job.stopMessage !== undefined ? BulkJobState.failed : BulkJobState.jobComplete;
      }
    }
    const failed = job.done.filter((d) => !d.ok).length;
    return {
      status: 200,
      body: {
        ...job.info,
        jobType: 'V2Ingest',
        numberRecordsProcessed: job.done.length,
        numberRecordsFailed: failed,
        retries: 0,
        totalProcessingTime: job.done.length,
        apiActiveProcessingTime: job.done.length,
        apexProcessingTime: 0,
        ...(job.info.state === BulkJobState.failed ? { errorMessage: job.errorMessage } : {}),
      },
    };
  }

  /** Process rows (in the job's shuffled order) until `until` are done. */
  private process(job: Job, until: number): void {
    const { object, operation, externalIdFieldName } = job.info;
    const match = operation === 'upsert' ? externalIdFieldName! : 'Id';
    const at = job.columns.indexOf(match);
    const counts = new Map<string, number>();
    if (at >= 0) for (const r of job.rows) if (r[at]) counts.set(r[at]!, (counts.get(r[at]!) ?? 0) + 1);
    while (job.done.length < until) {
      const index = job.order[job.done.length]!;
      const cells = job.rows[index]!;
      const value = at >= 0 ? (cells[at] ?? '') : '';
      const fail = (e: RowFailure, id = '') => job.done.push({ row: index, ok: false, id, error: sfError(e) });
      if (operation !== 'insert' && value === '') {
        fail({ statusCode: 'MISSING_ARGUMENT', message: `${match} not specified`, fields: [match] });
        continue;
      }
      // [I] a value twice in one job fails every row holding it (as in one Collections request).
      if (operation === 'upsert' && (counts.get(value) ?? 0) > 1) {
        fail({ statusCode: 'DUPLICATE_EXTERNAL_ID', message: `Duplicate external id specified: ${value}`, fields: [match] });
        continue;
      }
      const out = this.org.write(object, operation, match, value, this.rowFields(job, cells, match));
      if (out.ok) job.done.push({ row: index, ok: true, id: out.id, created: out.created });
      else fail(out.error, out.id);
    }
  }

  /** A row's cells as the org's write takes them: empty cells left out, `#N/A` as null, relationship columns as references. */
  private rowFields(job: Job, cells: string[], match: string): Record<string, unknown> {
    const fields: Record<string, unknown> = {};
    job.columns.forEach((column, i) => {
      const v = cells[i] ?? '';
      if (column === match || v === '') return;
      const rel = RELATIONSHIP_COLUMN.exec(column);
      if (!rel) {
        fields[column] = v === CSV_NULL ? null : v;
        return;
      }
      const [, type, name, field] = rel as unknown as [string, string | undefined, string, string];
      if (v === CSV_NULL) {
        fields[lookupFieldOf(name)] = null;
        return;
      }
      const lookup = this.org.field(job.info.object, lookupFieldOf(name))!;
      fields[name] = { attributes: { type: type ?? lookup.referenceTo[0] }, [field]: v };
    });
    return fields;
  }

  private results(job: Job, kind: 'successful' | 'failed' | 'unprocessed'): FakeResponse {
    const final = job.info.state === BulkJobState.jobComplete || job.info.state === BulkJobState.failed || job.info.state === BulkJobState.aborted;
    // [V] results are for a job that is JobComplete or Failed; [I] Aborted jobs answer too, and the refusal's wording.
    if (!final) return wire(400, 'API_ERROR', `Job ${job.info.id} is ${job.info.state}: results are available once it is JobComplete, Failed or Aborted`);
    const header = job.columns.map((c) => csvCell(c)).join(',');
    const line = (cells: readonly string[]) => cells.map(quoted).join(',');
    if (kind === 'unprocessed') {
      const done = new Set(job.done.map((d) => d.row));
      const rest = job.rows.map((r, i) => (done.has(i) ? undefined : r)).filter((r): r is string[] => r !== undefined);
      return csvResponse([header, ...rest.map((r) => r.map((v) => csvCell(v)).join(','))].join('\n') + '\n');
    }
    const ok = kind === 'successful';
    const lines = job.done.filter((d) => d.ok === ok).map((d) => `${line([d.id, ok ? String(d.created) : d.error!])},${line(job.rows[d.row]!)}`);
    const head = `${ok ? '"sf__Id","sf__Created"' : '"sf__Id","sf__Error"'}${header ? `,${header}` : ''}`;
    return csvResponse([head, ...lines].join('\n') + '\n');
  }

  /** A deterministic order of `n` rows that is not the upload order (for n > 1). */
  private shuffled(n: number): number[] {
    const order = Array.from({ length: n }, (_, i) => i);
    const random = seededRandom(this.seed * 7919 + this.nextJob);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    if (n > 1 && order.every((v, i) => v === i)) order.reverse();
    return order;
  }
}
