/**
 * HubSpot error classification: everything @hubspot/api-client (13.x, node-fetch) can throw,
 * turned once into a CrmError the engine's retry layer reads. Messages carry HubSpot's own
 * message and correlationId, never the token (CrmError redacts registered secrets).
 */
import { CrmError, CrmErrorKind, CrmSyncError } from '../../src/errors.js';

const VENDOR = 'hubspot';
const TEN_SECONDS = 10_000;

/** The scopes a private app needs for the default objects (notes and tasks use the contact scopes). */
export const REQUIRED_SCOPES = [
  'crm.objects.contacts.read',
  'crm.objects.contacts.write',
  'crm.objects.companies.read',
  'crm.objects.companies.write',
  'crm.objects.deals.read',
  'crm.objects.deals.write',
  'crm.schemas.contacts.read',
  'crm.schemas.contacts.write',
] as const;

/** The fields we read from an ApiException body or a 207 StandardError (all optional, parsed leniently). */
export interface HubSpotErrorBody {
  status?: string;
  message?: string;
  correlationId?: string;
  category?: string;
  subCategory?: unknown;
  policyName?: string;
  errorType?: string;
  context?: Record<string, string[] | undefined>;
  errors?: { message?: string; in?: string; _in?: string; code?: string }[];
}

interface ApiExceptionLike {
  code: number;
  body?: unknown;
  headers?: Record<string, string | undefined>;
}

const networkCodes = new Set(['ECONNRESET', 'ETIMEDOUT', 'ESOCKETTIMEDOUT', 'EPIPE', 'ECONNABORTED', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Failures before the request left this machine: nothing can have been committed. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function isApiException(err: unknown): err is ApiExceptionLike {
  return err instanceof Error && typeof (err as Partial<ApiExceptionLike>).code === 'number' && 'body' in err;
}

function bodyOf(body: unknown): HubSpotErrorBody {
  if (body && typeof body === 'object') return body as HubSpotErrorBody;
  if (typeof body === 'string') {
    try {
      const parsed: unknown = JSON.parse(body);
      if (parsed && typeof parsed === 'object') return parsed as HubSpotErrorBody;
    } catch {
      // not JSON: keep the text as the message
    }
    return { message: body.slice(0, 500) };
  }
  return {};
}

function header(headers: Record<string, string | undefined> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const hit = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return hit === undefined ? undefined : headers[hit];
}

/** Retry-After (seconds or an HTTP date) in ms, if the header is usable. */
function retryAfterMs(headers: Record<string, string | undefined> | undefined, now = Date.now()): number | undefined {
  const raw = header(headers, 'retry-after')?.trim();
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function describe(status: number | undefined, b: HubSpotErrorBody): string {
  const label = [status === undefined ? undefined : `HTTP ${status}`, b.category].filter(Boolean).join(' ');
  const details = (b.errors ?? []).map((e) => e.message).filter((m): m is string => !!m && m !== b.message);
  const message = [b.message ?? 'no message', ...details].join('; ');
  return `${label ? `${label}: ` : ''}${message}${b.correlationId ? ` (correlationId ${b.correlationId})` : ''}`;
}

const authHint =
  'Check that HUBSPOT_ACCESS_TOKEN holds a current private-app access token (Settings > Integrations > Private Apps) ' +
  `and that the app has the scopes for every configured object: ${REQUIRED_SCOPES.join(', ')}.`;

function fromApiException(err: ApiExceptionLike): CrmError {
  const status = err.code;
  const b = bodyOf(err.body);
  const base = { vendor: VENDOR, status, vendorCode: b.category ?? b.policyName, correlationId: b.correlationId, cause: err };
  const text = describe(status, b);
  if (status === 429) {
    if (b.policyName === 'DAILY' || /daily limit/i.test(b.message ?? '')) {
      return new CrmError(
        `HubSpot daily API limit reached (${text}). No retry until the daily limit resets (midnight in the account's time zone); ` +
          'the failed actions stay in the ledger as failed and can be retried then with `crm-upsert retry-failed`.',
        { ...base, kind: CrmErrorKind.quota, vendorCode: 'DAILY' },
      );
    }
    if (/secondly limit/i.test(b.message ?? '') && b.policyName === undefined) {
      return new CrmError(`HubSpot search rate limit (${text})`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: retryAfterMs(err.headers) ?? 1_000, vendorCode: 'SECONDLY' });
    }
    const interval = Number(header(err.headers, 'x-hubspot-ratelimit-interval-milliseconds'));
    const wait = retryAfterMs(err.headers) ?? (Number.isFinite(interval) && interval > 0 ? interval : TEN_SECONDS);
    return new CrmError(`HubSpot rate limit (${text})`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: wait, vendorCode: b.policyName ?? 'RATE_LIMIT' });
  }
  if (status === 401 || status === 403) {
    return new CrmError(`HubSpot refused the request (${text}). ${authHint}`, { ...base, kind: CrmErrorKind.auth });
  }
  if (status >= 500 || status === 408 || status === 423) {
    return new CrmError(`HubSpot server error (${text}); the write may have been committed`, { ...base, kind: CrmErrorKind.transient, ambiguous: true });
  }
  if (status === 400 && b.category === 'VALIDATION_ERROR') {
    // A whole-batch 400 is usually one bad input: let the engine split the batch to isolate it.
    return new CrmError(`HubSpot rejected the request (${text})`, { ...base, kind: CrmErrorKind.permanent, splittable: true });
  }
  return new CrmError(`HubSpot rejected the request (${text})`, { ...base, kind: CrmErrorKind.permanent });
}

/** Classify anything the HubSpot client (or this adapter) threw. Idempotent for CrmError. */
export function classifyHubSpotError(err: unknown): CrmError {
  if (err instanceof CrmError) return err;
  if (isApiException(err)) return fromApiException(err);
  if (err instanceof CrmSyncError) return new CrmError(err.message.replace(/^\[crm-upsert\]\s*/, ''), { vendor: VENDOR, kind: CrmErrorKind.permanent, cause: err });
  const e = err instanceof Error ? (err as Error & { code?: unknown; type?: unknown; errno?: unknown }) : undefined;
  const message = e?.message ?? String(err);
  if (/Cannot parse content\. No Content-Type defined/i.test(message)) {
    return new CrmError(
      'HubSpot (or a proxy in front of it) answered without a Content-Type, so the client could not read the response; the write may have been committed',
      { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'NO_CONTENT_TYPE', cause: err },
    );
  }
  const code = typeof e?.code === 'string' ? e.code : typeof e?.errno === 'string' ? e.errno : undefined;
  const network = (code !== undefined && networkCodes.has(code)) || e?.name === 'FetchError' || e?.name === 'AbortError' || /socket hang up|ECONNRESET|ETIMEDOUT|network timeout|fetch failed/i.test(message);
  if (network) {
    const notSent = code !== undefined && notSentCodes.has(code);
    return new CrmError(`network error talking to HubSpot${code ? ` (${code})` : ''}: ${message}${notSent ? '' : '; the write may have been committed'}`, {
      vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: !notSent, vendorCode: code, cause: err,
    });
  }
  return new CrmError(`unexpected error from the HubSpot client: ${message}`, { vendor: VENDOR, kind: CrmErrorKind.permanent, cause: err });
}

/** One per-input error from a 207 response (StandardError), as a CrmError. */
export function classifyHubSpotItemError(e: HubSpotErrorBody): CrmError {
  const numeric = Number(e.status);
  const base = { vendor: VENDOR, vendorCode: e.category, correlationId: e.correlationId };
  const text = describe(undefined, e);
  if (e.category === 'RATE_LIMITS') return new CrmError(`HubSpot rate limit: ${text}`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: TEN_SECONDS });
  if ((Number.isFinite(numeric) && numeric >= 500) || /^(INTERNAL_ERROR|SERVICE_UNAVAILABLE|TIMEOUT)$/.test(e.category ?? '')) {
    return new CrmError(`HubSpot server error for this input: ${text}`, { ...base, kind: CrmErrorKind.transient, ambiguous: true });
  }
  return new CrmError(`HubSpot rejected this input: ${text}`, { ...base, kind: CrmErrorKind.permanent });
}
