/**
 * Salesforce failures -> CrmError, classified once at the adapter boundary. Inputs: jsforce's
 * HttpApiError (`errorCode`, `message`, `data`; no status, so the adapter passes the status and
 * headers it saw), node-fetch's FetchError (network), and per-record collection errors, which
 * carry `statusCode` (the docs) or `errorCode` (jsforce's type): both are read.
 */
import { LINK_NOT_FOUND } from '../../src/engine/defer.js';
import { CrmError, CrmErrorKind } from '../../src/errors.js';
import { bodySnippet } from '../kit/body-snippet.js';

const VENDOR = 'salesforce';

export interface ResponseInfo {
  status?: number;
  headers?: Record<string, string>;
}

export interface ClassifyContext {
  /** What the failed HTTP exchange returned, when a response arrived. */
  response?: ResponseInfo;
  /** The last `Sforce-Limit-Info` figures. */
  usage?: { used: number; limit: number };
  /** External ids sent in the failed call (named in a 300 message). */
  externalIds?: readonly string[];
  /** A write carrying several records: a whole-call 400 may be caused by one of them. */
  multiRecordWrite?: boolean;
}

export interface SalesforceRecordError {
  statusCode?: string;
  errorCode?: string;
  message?: string;
  fields?: string[];
}

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ENOTFOUND', 'ENETDOWN', 'ENETUNREACH', 'EHOSTDOWN', 'EHOSTUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED']);
/** Per-record codes that clear up by themselves: another transaction held the row. */
const TRANSIENT_RECORD_CODES = new Set(['UNABLE_TO_LOCK_ROW', 'ALL_OR_NONE_OPERATION_ROLLED_BACK', 'SERVER_UNAVAILABLE']);
/** Whole-request 400s that every record would hit again: splitting cannot help. */
const WHOLE_REQUEST_CODES = new Set(['INVALID_TYPE', 'NOT_FOUND', 'MALFORMED_QUERY', 'INVALID_QUERY_FILTER_OPERATOR', 'API_DISABLED_FOR_ORG', 'INVALID_SESSION_ID', 'INVALID_AUTH_HEADER', 'UNSUPPORTED_API_VERSION']);

const fmt = (n: number) => n.toLocaleString('en-US');
const pct = (n: number) => `${Math.round(n * 100)}%`;

/** The stop the adapter raises itself before a call, once usage reached the configured share. */
export function dailyLimitStop(usage: { used: number; limit: number }, share: number): CrmError {
  return new CrmError(
    `Salesforce API usage ${fmt(usage.used)}/${fmt(usage.limit)} (${pct(usage.used / usage.limit)}) reached the configured stop at ${pct(share)} (dailyLimitShare); the run stops until the rolling 24-hour allocation frees up`,
    { vendor: VENDOR, kind: CrmErrorKind.quota, vendorCode: 'DAILY_LIMIT_SHARE' },
  );
}

/**
 * Salesforce's daily Bulk API allowances (records and batches per rolling 24 hours): the guide's
 * exception code ExceededQuota. A refused job creation sends it as an error code (`EXCEEDEDQUOTA`
 * as INVALIDJOB is sent; `EXCEEDED_QUOTA` read too [I]); a job that ran out of allowance while
 * processed is Failed with an errorMessage starting `ExceededQuota` [I: the wording].
 */
const BULK_QUOTA_CODES = new Set(['EXCEEDEDQUOTA', 'EXCEEDED_QUOTA']);
const BULK_QUOTA_MESSAGE = /^\s*ExceededQuota\b/i;
const bulkQuotaMessage = (said: string) => `Salesforce's daily Bulk API allowance (records or batches per rolling 24 hours) is spent: ${said}; the run stops until the rolling 24-hour allowance frees up`;

/** The quota error of a Bulk job Failed because a daily allowance ran out; undefined for any other end. */
export function bulkQuotaFailure(job: { id: string; state: string; errorMessage?: string }): CrmError | undefined {
  if (job.state !== 'Failed' || job.errorMessage === undefined || !BULK_QUOTA_MESSAGE.test(job.errorMessage)) return undefined;
  return new CrmError(bulkQuotaMessage(`Bulk API job ${job.id} Failed: ${job.errorMessage}`), { vendor: VENDOR, kind: CrmErrorKind.quota, vendorCode: 'EXCEEDEDQUOTA' });
}

/** What was sent for the record an error answers: its sObject and values (to name the refused value). */
export interface SentRecord {
  sobject: string;
  record: Readonly<Record<string, unknown>>;
}

/**
 * Per-record codes that refuse one field's value. Field definitions checked before the write would
 * have caught the value, so when Salesforce still refuses it the definitions do not match the org.
 */
const VALUE_CODES = new Set(['INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', 'STRING_TOO_LONG', 'INVALID_EMAIL_ADDRESS', 'NUMBER_OUTSIDE_VALID_RANGE', 'INVALID_TYPE_ON_FIELD_IN_RECORD']);
export const STALE_DEFINITIONS = 'the field definitions may be stale or missing: run crm-upsert schema pull';

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);
const shown = (value: unknown) => clip(JSON.stringify(value) ?? String(value), 120);

/**
 * One per-record error from a collection upsert result. A refused value (restricted picklist, too
 * long, ...) is named by field, code and the value sent, and says the definitions may be stale.
 */
export function recordError(errors: readonly SalesforceRecordError[] | undefined, sent?: SentRecord): CrmError {
  const first = errors?.[0];
  if (!first) return new CrmError('Salesforce reported a failure for this record without an error', { vendor: VENDOR, kind: CrmErrorKind.permanent });
  const code = first.statusCode ?? first.errorCode ?? 'UNKNOWN';
  const fields = first.fields?.length ? ` [${first.fields.join(', ')}]` : '';
  const more = errors.length > 1 ? ` (+${errors.length - 1} more: ${errors.slice(1).map((e) => e.statusCode ?? e.errorCode).join(', ')})` : '';
  const transient = TRANSIENT_RECORD_CODES.has(code);
  const field = first.fields?.[0];
  if (sent && field !== undefined && VALUE_CODES.has(code)) {
    return new CrmError(`${sent.sobject}.${field} = ${shown(sent.record[field])} refused: ${code}: ${clip(first.message ?? '', 300)}${more}; ${STALE_DEFINITIONS}`, {
      vendor: VENDOR,
      kind: CrmErrorKind.permanent,
      vendorCode: code,
      field,
    });
  }
  return new CrmError(`${code}: ${first.message ?? ''}${fields}${more}`, {
    vendor: VENDOR,
    kind: transient ? CrmErrorKind.transient : CrmErrorKind.permanent,
    vendorCode: code,
  });
}

/**
 * Salesforce's whole-request 400 for a value its JSON parser cannot read as the field's type:
 * `JSON_PARSER_ERROR` "Cannot deserialize instance of date from VALUE_STRING value 12/01/2026 or
 * request may be missing a required field at [line:1, column:88]" (older orgs quote the value:
 * `value "2013-08-12T15:20:00+0000" at [line:1, column:179]`). Nothing in the request was written.
 */
const UNPARSABLE = /Cannot deserialize instance of (\w+) from (\w+) value ([\s\S]*?)(?: or request may be missing a required field)?(?: at \[line:(\d+), column:(\d+)\])?$/;

/**
 * The type and the value (as text) a JSON_PARSER_ERROR names, when it names one, and the column
 * it points at when the body is one line (as the adapter sends it).
 */
export function unparsableValue(error: CrmError): { type: string; value: string; column?: number } | undefined {
  if (error.vendorCode !== 'JSON_PARSER_ERROR') return undefined;
  const m = UNPARSABLE.exec(error.message);
  if (!m) return undefined;
  const raw = m[3]!;
  const value = raw.length > 1 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  return { type: m[1]!, value, ...(m[4] === '1' ? { column: Number(m[5]) } : {}) };
}

const HINTS: Readonly<Record<string, string>> = {
  date: ' (a date is YYYY-MM-DD)',
  datetime: ' (a date-time is ISO 8601, e.g. 2026-12-01T09:30:00Z)',
  double: ' (a number: digits and one decimal point, no currency sign or thousands separator, e.g. 5000.50)',
  int: ' (a whole number, e.g. 250)',
  boolean: ' (true or false)',
};

/** The failure of a record holding the value a JSON_PARSER_ERROR named (the rest of its request is sent again). */
export function unparsableFailure(sobject: string, field: string, value: unknown, type: string, cause: CrmError): CrmError {
  const wire = HINTS[type] ?? '';
  return new CrmError(`${sobject}.${field} = ${shown(value)} refused: JSON_PARSER_ERROR: Salesforce cannot read it as a ${type}${wire}; ${STALE_DEFINITIONS}`, {
    vendor: VENDOR,
    kind: CrmErrorKind.permanent,
    status: cause.status,
    vendorCode: 'JSON_PARSER_ERROR',
    field,
  });
}

function retryAfterMs(headers: Record<string, string> | undefined): number | undefined {
  const raw = headers?.['retry-after'];
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

interface VendorError {
  name?: string;
  message?: string;
  errorCode?: string;
  code?: string;
  data?: unknown;
}

/**
 * A request read as text gets its error body as text too (jsforce then reports `ERROR_HTTP_<status>`
 * with the body as message): Salesforce's JSON error array is read back into the error it names.
 */
export function jsonErrorBody(err: unknown): unknown {
  const e = err as { errorCode?: unknown; message?: unknown; data?: unknown };
  if (typeof e?.errorCode !== 'string' || !e.errorCode.startsWith('ERROR_HTTP_') || typeof e.message !== 'string') return err;
  try {
    const body = JSON.parse(e.message) as unknown;
    const first = (Array.isArray(body) ? body[0] : body) as { errorCode?: unknown; message?: unknown } | undefined;
    if (typeof first?.errorCode !== 'string' || typeof first.message !== 'string') return err;
    return Object.assign(new Error(first.message), { name: first.errorCode, errorCode: first.errorCode, data: body });
  } catch {
    return err;
  }
}

/** Turn anything jsforce or the network threw into a classified, secret-free CrmError. */
export function classifySalesforceError(err: unknown, ctx: ClassifyContext = {}): CrmError {
  if (err instanceof CrmError) return err;
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as VendorError;
  const status = ctx.response?.status;
  let code = e.errorCode;
  let message = e.message ?? String(err);
  if (code === 'MULTIPLE_API_ERRORS' && Array.isArray(e.data) && e.data.length > 0) {
    const first = e.data[0] as SalesforceRecordError;
    code = first.errorCode ?? first.statusCode ?? code;
    message = first.message ?? message;
  }
  // jsforce puts a non-JSON body (an HTML error page) whole into the message: keep an excerpt.
  if (code?.startsWith('ERROR_HTTP_') || message.length > 1000) message = bodySnippet(message, code?.startsWith('ERROR_HTTP_') ? 300 : 1000);
  const base = { vendor: VENDOR, status, vendorCode: code, cause: err };
  const said = code ? `${code}: ${message}` : message;

  if (code === 'REQUEST_LIMIT_EXCEEDED' && status !== 429 && !/concurrent/i.test(message)) {
    const usage = ctx.usage ? ` (usage ${fmt(ctx.usage.used)}/${fmt(ctx.usage.limit)})` : '';
    return new CrmError(`Salesforce daily API request allocation is spent${usage}: ${said}; the run stops until the rolling 24-hour allocation frees up`, { ...base, kind: CrmErrorKind.quota });
  }
  if (BULK_QUOTA_CODES.has(code ?? '') || BULK_QUOTA_MESSAGE.test(message)) {
    return new CrmError(bulkQuotaMessage(said), { ...base, kind: CrmErrorKind.quota });
  }
  if (status === 429 || status === 420 || code === 'REQUEST_LIMIT_EXCEEDED' || code === 'ERROR_HTTP_429') {
    return new CrmError(`Salesforce is limiting requests: ${said}`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: retryAfterMs(ctx.response?.headers) ?? 1_000, ambiguous: true });
  }
  if (status === 401 || code === 'INVALID_SESSION_ID' || code === 'INVALID_AUTH_HEADER') {
    return new CrmError(`Salesforce rejected the access token: ${said}. Hint: the token has expired or was issued for another org, or SF_INSTANCE_URL points to the wrong instance; get a fresh token (e.g. \`sf org display --target-org <alias>\`)`, { ...base, kind: CrmErrorKind.auth });
  }
  if (code === 'INSUFFICIENT_ACCESS' || code === 'API_DISABLED_FOR_ORG' || code === 'INSUFFICIENT_ACCESS_OR_READONLY' || (status === 403 && !code?.startsWith('ERROR_HTTP'))) {
    return new CrmError(`Salesforce refused access: ${said}. Hint: the user needs "API Enabled" and Read/Edit on the objects and fields (see docs/salesforce.md)`, { ...base, kind: CrmErrorKind.auth });
  }
  if (code === 'MULTIPLE_CHOICES' || status === 300) {
    const ids = ctx.externalIds?.length ? ` ${ctx.externalIds.map((v) => JSON.stringify(v)).join(', ')}` : '';
    return new CrmError(`more than one Salesforce record matches external id${ids}; nothing was written. Mark the external-id field Unique and merge the duplicates`, { ...base, status: 300, vendorCode: 'MULTIPLE_CHOICES', kind: CrmErrorKind.permanent });
  }
  if (code === 'NOT_FOUND' || status === 404) {
    return new CrmError(`${said}. Hint: check the sObject name and that the field is marked External ID (and exists for this API version)`, { ...base, kind: CrmErrorKind.permanent });
  }
  if (code === 'UNABLE_TO_LOCK_ROW') {
    return new CrmError(said, { ...base, kind: CrmErrorKind.transient });
  }
  const httpStatus = status ?? Number(/^ERROR_HTTP_(\d{3})$/.exec(code ?? '')?.[1] ?? NaN);
  if (httpStatus >= 500 || code === 'SERVER_UNAVAILABLE' || code === 'UNKNOWN_EXCEPTION') {
    return new CrmError(`Salesforce server error: ${said}`, { ...base, status: httpStatus || status, kind: CrmErrorKind.transient, ambiguous: true });
  }
  const netCode = e.code ?? (e as { cause?: { code?: string } }).cause?.code;
  if (e.name === 'FetchError' || e.name === 'AbortError' || (netCode && NETWORK_CODES.has(netCode))) {
    return new CrmError(`network failure talking to Salesforce (${netCode ?? e.name}): ${message}`, { ...base, vendorCode: netCode ?? e.name, kind: CrmErrorKind.transient, ambiguous: true });
  }
  if (httpStatus === 400 || (code !== undefined && !code.startsWith('ERROR_HTTP'))) {
    const splittable = Boolean(ctx.multiRecordWrite) && !WHOLE_REQUEST_CODES.has(code ?? '');
    return new CrmError(`Salesforce rejected the request: ${said}`, { ...base, status: httpStatus || status, kind: CrmErrorKind.permanent, splittable });
  }
  return new CrmError(`Salesforce call failed: ${said}`, { ...base, kind: CrmErrorKind.permanent });
}

/**
 * Salesforce's per-record answer to an external-id reference that matches no record:
 * `INVALID_FIELD` "Foreign key external ID: acme not found for field AI_External_Id__c in entity
 * Account" (the wording recorded in Apache Camel's salesforce component fixtures; see docs/salesforce.md).
 */
const FOREIGN_KEY_NOT_FOUND = /^Foreign key external ID: ([\s\S]*) not found for field (\S+) in entity (\S+?)\.?$/;

/** The reference a per-record error says was not found: its value, the field matched on and the sObject. */
export function missingReference(errors: readonly SalesforceRecordError[] | undefined): { value: string; field: string; sobject: string } | undefined {
  for (const e of errors ?? []) {
    const m = FOREIGN_KEY_NOT_FOUND.exec(e.message ?? '');
    if (m && (e.statusCode ?? e.errorCode) === 'INVALID_FIELD') return { value: m[1]!, field: m[2]!, sobject: m[3]! };
  }
  return undefined;
}

/**
 * A linked record that does not exist (yet): the write that names it is not (or was not) made.
 * Not retried within the call (the record would not appear by waiting a few seconds); its entry
 * ends `failed`, and a retry once the linked record is written sets the lookup.
 */
export function linkNotFound(link: { object: string; externalId: string }, target: { sobject: string; externalIdField: string }, said?: string): CrmError {
  const detail = said ? ` (Salesforce: ${said})` : '';
  return new CrmError(
    `link ${link.object} ${JSON.stringify(link.externalId)} (${target.sobject}.${target.externalIdField}) does not exist in Salesforce; write it first, then retry (crm-upsert retry-failed)${detail}`,
    { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: LINK_NOT_FOUND },
  );
}
