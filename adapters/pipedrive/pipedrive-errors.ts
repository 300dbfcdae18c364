/**
 * Pipedrive's answers classified once, at the adapter boundary, into CrmError: what the engine
 * retries (429 inside the burst window, 5xx, resets, an HTML 403 from the edge), what stops a run
 * (the daily budget, a refused token) and what no retry can fix (a refused value, named by field
 * where Pipedrive names it). Error bodies are `{ success: false, error, error_info?, code? | errorCode? }`.
 */
import { CrmError, CrmErrorKind } from '../../src/errors.js';
import { bodySnippet } from '../kit/body-snippet.js';

const VENDOR = 'pipedrive';

/** An answer that is not a 2xx, or a request that got no answer, as the HTTP client saw it. */
export class PipedriveHttpError extends Error {
  constructor(
    message: string,
    /** `GET /api/v2/persons/{id}`: the request line without query, values or the token. */
    readonly request: string,
    readonly status: number | undefined,
    readonly headers: Readonly<Record<string, string>>,
    /** The parsed JSON body, or the raw text when it was not JSON. */
    readonly body: unknown,
    /** True for requests that change data (POST, PATCH, PUT, DELETE). */
    readonly write: boolean,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'PipedriveHttpError';
  }
}

/** The error body Pipedrive answers with (v1 and v2 alike). */
export interface PipedriveErrorBody {
  success?: false;
  error?: string;
  error_info?: string;
  code?: string;
  errorCode?: number | string;
}

const errorBody = (body: unknown): PipedriveErrorBody | undefined => (body && typeof body === 'object' && !Array.isArray(body) ? (body as PipedriveErrorBody) : undefined);

/** Pipedrive's words for a failure, or a short excerpt of a body that is not its JSON (an edge's HTML page). */
export function describeBody(body: unknown): string {
  const b = errorBody(body);
  if (b && typeof b.error === 'string') return [b.error, b.error_info].filter((s) => typeof s === 'string' && s !== '').join(': ');
  return typeof body === 'string' && body !== '' ? bodySnippet(body) : 'no body';
}

const isHtml = (e: PipedriveHttpError) => typeof e.body === 'string' && /<(!doctype|html|body|title)\b/i.test(e.body);

/** Milliseconds to wait from Retry-After (seconds or a date) or `x-ratelimit-reset` (seconds until the window resets). */
export function retryAfterMs(headers: Readonly<Record<string, string>>, now = Date.now()): number | undefined {
  const ra = headers['retry-after'];
  if (ra !== undefined && ra !== '') {
    const s = Number(ra);
    if (Number.isFinite(s) && s >= 0) return Math.ceil(s * 1000);
    const at = Date.parse(ra);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  const reset = Number(headers['x-ratelimit-reset']);
  return Number.isFinite(reset) && reset >= 0 ? Math.ceil(reset * 1000) : undefined;
}

/** A 429 of the daily token budget (all the company's users and apps share it) rather than the 2-second burst window. */
function isDailyBudget(e: PipedriveHttpError): boolean {
  if (e.headers['x-daily-requests-left'] === '0') return true;
  const text = describeBody(e.body);
  return /daily/i.test(text);
}

/** The custom field key or standard field a 400 names (`custom_fields.<key>`, `"email" ...`), mapped back to the configured name. */
export function refusedField(text: string, names: ReadonlyMap<string, string> = new Map()): string | undefined {
  const custom = /custom_fields\.([0-9a-f]{40}|[A-Za-z0-9_]+)/.exec(text)?.[1] ?? /\b([0-9a-f]{40})\b/.exec(text)?.[1];
  if (custom) return names.get(custom) ?? custom;
  for (const [wire, name] of names) if (new RegExp(`\\b${wire.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(text)) return name;
  return undefined;
}

export interface PipedriveClassifyContext {
  /** Wire field (custom key or standard key) -> configured name, to name a refused field as the config does. */
  fieldNames?: ReadonlyMap<string, string>;
}

/** Anything the client threw, as a classified, secret-free CrmError (the token never reaches it: it travels only in a header). */
export function classifyPipedriveError(err: unknown, context: PipedriveClassifyContext = {}): CrmError {
  if (err instanceof CrmError) return err;
  if (!(err instanceof PipedriveHttpError)) {
    const message = err instanceof Error ? err.message : String(err);
    return new CrmError(`Pipedrive request failed: ${message}`, { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true, cause: err });
  }
  const status = err.status;
  const said = describeBody(err.body);
  const code = errorBody(err.body)?.code ?? (errorBody(err.body)?.errorCode !== undefined ? String(errorBody(err.body)!.errorCode) : undefined);
  const base = { vendor: VENDOR, status, ...(code ? { vendorCode: code } : {}), cause: err };
  if (status === undefined) {
    // No answer: a write may have committed before the connection dropped.
    return new CrmError(`${err.request}: no answer from Pipedrive (${err.message})`, { ...base, kind: CrmErrorKind.transient, ambiguous: err.write });
  }
  if (status === 429) {
    const wait = retryAfterMs(err.headers);
    if (isDailyBudget(err)) {
      return new CrmError(`${err.request}: Pipedrive's daily request budget is spent (${said}); the run stops until it resets${wait !== undefined ? ` in about ${Math.ceil(wait / 60_000)} min` : ''}`, { ...base, kind: CrmErrorKind.quota, vendorCode: 'DAILY_BUDGET', ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
    }
    return new CrmError(`${err.request}: Pipedrive rate limit (429: ${said})`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: wait ?? 2_000 });
  }
  if (status >= 500) {
    return new CrmError(`${err.request}: Pipedrive answered ${status} (${said})`, { ...base, kind: CrmErrorKind.transient, ambiguous: err.write });
  }
  if (status === 403 && isHtml(err)) {
    // The edge (Cloudflare) blocks a client that kept sending after 429s: not a permission, and
    // the request never reached Pipedrive. Wait and retry; never take it for an answer.
    return new CrmError(`${err.request}: blocked by Pipedrive's edge (403 ${said}); retry later`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: retryAfterMs(err.headers) ?? 60_000 });
  }
  if (status === 401) return new CrmError(`${err.request}: Pipedrive refused the API token (401: ${said})`, { ...base, kind: CrmErrorKind.auth });
  if (status === 403) return new CrmError(`${err.request}: the API token's user may not do this (403: ${said})`, { ...base, kind: CrmErrorKind.auth });
  if (status === 404 || status === 410) {
    return new CrmError(`${err.request}: Pipedrive answered ${status} (${said})`, { ...base, kind: CrmErrorKind.permanent, vendorCode: status === 404 ? 'NOT_FOUND' : 'GONE' });
  }
  const field = status === 400 ? refusedField(said, context.fieldNames) : undefined;
  return new CrmError(`${err.request}: Pipedrive refused the request (${status}: ${said})`, { ...base, kind: CrmErrorKind.permanent, ...(field ? { field } : {}) });
}

/** Whether an error says the record addressed is not there (404/410): deleted, merged away, or never was. */
export const isGone = (err: unknown): boolean => err instanceof CrmError && (err.status === 404 || err.status === 410);

/** What the adapter reports when a create may have committed and no lookup found the record yet. */
export function createUnknown(what: string, cause?: unknown): CrmError {
  return new CrmError(`${what}: the create may have reached Pipedrive and no lookup has found it yet; not sent again (retry later: the record is looked up first)`, {
    vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'CREATE_UNCONFIRMED', ...(cause ? { cause } : {}),
  });
}

/** Two or more records hold one external id: the adapter never picks one. */
export function duplicateHolders(entity: string, idField: string, externalId: string, ids: readonly string[]): CrmError {
  return new CrmError(`${ids.length} ${entity}s hold ${idField}=${JSON.stringify(externalId)} (ids ${ids.join(', ')}): merge them in Pipedrive or clear the field on all but one, then retry`, {
    vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: 'DUPLICATE_EXTERNAL_ID',
  });
}
