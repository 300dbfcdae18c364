/**
 * HubSpot error classification: everything @hubspot/api-client (13.x, node-fetch) can throw,
 * turned once into a CrmError the engine's retry layer reads. Messages carry HubSpot's own
 * message and correlationId, never the token (CrmError redacts registered secrets).
 *
 * HubSpot writes `message` in the portal's language (a Portuguese INVALID_EMAIL is on record), so
 * nothing here is decided by its words: by the status, `category`, `policyName`, `errors[].code`
 * and `context`, and by the `error` / `name` of the JSON list some messages carry. Words are only
 * shown to the user.
 */
import { CrmError, CrmErrorKind, CrmSyncError } from '../../src/errors.js';
import { bodySnippet } from '../kit/body-snippet.js';

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
  /** Set by `readableResponses`: the body was not the JSON its status promised. */
  unreadable?: boolean;
}

/** What the adapter knows about the failed call, so a whole-batch error can be placed. */
export interface HubSpotClassifyContext {
  /** The property names each input of a failed write sent (an upsert's idProperty included). */
  sentProperties?: readonly (readonly string[])[];
  /** The idProperty of a failed batch upsert. */
  idProperty?: string;
}

/**
 * The body of an HTTP response the SDK could not parse (a proxy's HTML page, served with a
 * JSON content type or none): thrown by `readableResponses` in place of the SDK's SyntaxError,
 * with the status kept. Shaped like the SDK's ApiException.
 */
export class HubSpotUnreadableResponse extends Error {
  readonly unreadable = true;
  constructor(readonly code: number, readonly body: string, readonly headers: Record<string, string>) {
    super(`HTTP ${code} with a body that is not JSON`);
    this.name = 'HubSpotUnreadableResponse';
  }

  /** The response's Content-Type, if it had one. */
  get contentType(): string | undefined {
    const key = Object.keys(this.headers).find((k) => k.toLowerCase() === 'content-type');
    return key === undefined ? undefined : this.headers[key];
  }
}

/** What a raw `apiRequest` resolves to (the client's RawResponse). */
interface RawAnswer {
  status: number;
  headers: { forEach(callback: (value: string, name: string) => void): void };
  text(): Promise<string>;
}

/** A non-2xx answer of a raw `apiRequest`, shaped like the SDK's ApiException so it is classified the same way. */
export class HubSpotHttpError extends Error {
  constructor(readonly code: number, readonly body: unknown, readonly headers: Record<string, string>, what: string) {
    super(`HTTP ${code} from ${what}`);
    this.name = 'HubSpotHttpError';
  }
}

/**
 * The parsed JSON body of a raw `apiRequest` answer (undefined when empty). A body that is not
 * JSON throws HubSpotUnreadableResponse; a non-2xx status, HubSpotHttpError naming `what`.
 */
export async function readJsonAnswer(res: RawAnswer, what: string): Promise<unknown> {
  const text = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  let body: unknown;
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    throw new HubSpotUnreadableResponse(res.status, text, headers);
  }
  if (res.status < 200 || res.status > 299) throw new HubSpotHttpError(res.status, body ?? text, headers, what);
  return body;
}

interface ResponseContextLike {
  httpStatusCode: number;
  headers: Record<string, string>;
  body: { binary(): Promise<Buffer>; text(): Promise<string> };
}

/**
 * Per-call options for @hubspot/api-client: a response middleware that reads the body once and
 * throws `HubSpotUnreadableResponse` (status kept) when it is not JSON. Without it the SDK throws
 * a bare SyntaxError (`Unexpected token '<'`) that carries no status. The SDK applies its
 * configured middleware only with per-call options, so the adapter passes these on every call.
 */
export const readableResponses = {
  middlewareMergeStrategy: 'append',
  middleware: [
    {
      pre: <T>(context: T): Promise<T> => Promise.resolve(context),
      async post(context: ResponseContextLike): Promise<ResponseContextLike> {
        const data = await context.body.binary();
        context.body = { binary: () => Promise.resolve(data), text: () => Promise.resolve(data.toString('utf8')) };
        const text = data.toString('utf8');
        if (text.trim() === '') return context;
        try {
          JSON.parse(text);
          return context;
        } catch {
          throw new HubSpotUnreadableResponse(context.httpStatusCode, text, context.headers);
        }
      },
    },
  ],
} as const;

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
    return { message: bodySnippet(body) };
  }
  return {};
}

const setupHint = 'the HubSpot portal does not match the configuration: run `crm-upsert check-setup` to see what to fix';

/** One property value HubSpot refused: the property, HubSpot's code and words, and the value when known. */
export interface RefusedValue {
  name: string;
  code: string;
  message: string;
  value?: string;
}

// The refused value as HubSpot's English wordings quote it, for a detail without `propertyValue`.
// Naming only: a message in another language leaves the value unnamed, and nothing is classified by it.
const VALUE_IN_MESSAGE: RegExp[] = [
  /^(.*) was not one of the allowed options/s, /^(.*) was not a valid (?:number|date|long)/s, /^(.*) is at .* UTC, not midnight!$/s,
  /^"(.*)" includes leading or trailing whitespace/s, /^Email address (.*) is invalid/s, /^(.*) is not a valid pipeline stage ID/s,
];

interface PropertyErrorEntry { name?: unknown; error?: unknown; message?: unknown; propertyValue?: unknown }

/**
 * The JSON list of property errors inside a message (`Property values were not valid: [...]` in
 * English), found by its brackets whatever language the words before it are in; undefined when
 * the message holds no such list.
 */
function propertyErrorList(message: string | undefined): PropertyErrorEntry[] | undefined {
  if (!message) return undefined;
  const end = message.lastIndexOf(']');
  // Each `[` up to the list's own: a localized lead-in could hold one too. Bounded: messages are short.
  for (let at = message.indexOf('['), tries = 0; at >= 0 && at < end && tries < 20; at = message.indexOf('[', at + 1), tries++) {
    try {
      const parsed: unknown = JSON.parse(message.slice(at, end + 1));
      if (Array.isArray(parsed) && parsed.some((e: PropertyErrorEntry) => typeof e?.error === 'string' && typeof e.name === 'string')) return parsed as PropertyErrorEntry[];
    } catch {
      // not the list: try the next bracket
    }
  }
  return undefined;
}

/** The property errors listed as JSON inside a VALIDATION_ERROR's message, in any language. */
export function refusedValuesIn(message: string | undefined): RefusedValue[] {
  return (propertyErrorList(message) ?? []).flatMap((e) => {
    if (typeof e?.name !== 'string' || typeof e.error !== 'string' || e.error === 'PROPERTY_DOESNT_EXIST') return [];
    const text = typeof e.message === 'string' ? e.message : e.error;
    const quoted = VALUE_IN_MESSAGE.map((re) => re.exec(text)?.[1]).find((v) => v !== undefined);
    const value = typeof e.propertyValue === 'string' ? e.propertyValue : quoted;
    return [{ name: e.name, code: e.error, message: text, ...(value !== undefined ? { value } : {}) }];
  });
}

/** A detail's property names: `context.propertyName`, as HubSpot sends beside a refused value. */
const propertyNamesOf = (e: NonNullable<HubSpotErrorBody['errors']>[number]): string[] => {
  const names = (e as { context?: { propertyName?: unknown } }).context?.propertyName;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
};

/** The refused values of a body: its message's JSON list, else its `errors` (`code` and `context.propertyName`). */
function refusedValuesOfBody(b: HubSpotErrorBody): RefusedValue[] {
  const listed = refusedValuesIn(b.message);
  if (listed.length > 0) return listed;
  return (b.errors ?? []).flatMap((e) =>
    e.code && e.code !== 'PROPERTY_DOESNT_EXIST' ? propertyNamesOf(e).map((name) => ({ name, code: e.code!, message: e.message ?? e.code! })) : [],
  );
}

/** What the definitions file would have caught, had it been current. */
export const STALE_DEFINITIONS = 'the field definitions may be stale: run `crm-upsert schema pull`';

/** The pipeline property beside each stage property. */
const PIPELINE_OF_STAGE: Record<string, string> = { dealstage: 'pipeline', hs_pipeline_stage: 'hs_pipeline' };

// Refusals a newer pull can turn into a refusal before any request: a changed option list or
// type, a property made read-only. Not INVALID_EMAIL (a contact's email is checked as an address
// with or without a file: HubSpot's own check is stricter than any file) nor a stage outside the
// record's pipeline (the file cannot know which pipeline a deal already is in).
const STALE_CODES = new Set(['INVALID_OPTION', 'INVALID_INTEGER', 'INVALID_LONG', 'INVALID_DATE', 'INVALID_DATETIME', 'LEADING_TRAILING_WHITESPACE', 'READ_ONLY_VALUE']);

const outsidePipeline = (r: RefusedValue) => r.code === 'INVALID_OPTION' && PIPELINE_OF_STAGE[r.name] !== undefined && /is not a valid pipeline stage ID/i.test(r.message);

/** What to do about these refused values: `; <hint>`, or '' when neither a pull nor the pipeline would help. */
export function refusalHint(refused: readonly RefusedValue[]): string {
  const stage = refused.find(outsidePipeline);
  if (stage) return `; a stage must be one of the record's pipeline's stages: send ${PIPELINE_OF_STAGE[stage.name]} with ${stage.name}, or a stage of the pipeline the record is in`;
  return refused.some((r) => STALE_CODES.has(r.code)) ? `; ${STALE_DEFINITIONS}` : '';
}

/** `lifecyclestage = "client" (INVALID_OPTION: client was not one of the allowed options: [...])`, each refused value. */
export const describeRefused = (refused: readonly RefusedValue[]) =>
  refused.map((r) => `${r.name}${r.value !== undefined ? ` = ${JSON.stringify(r.value)}` : ''} (${r.code}: ${r.message})`).join('; ');

// The values a classified whole-call error refused, for the adapter to find the inputs that sent them.
const refusedOf = new WeakMap<CrmError, RefusedValue[]>();

/** The property values HubSpot named in this classified error ([] for any other error). */
export const refusedValuesOf = (err: unknown): RefusedValue[] => (err instanceof CrmError ? (refusedOf.get(err) ?? []) : []);

/** One input's share of a refused batch: its own refused values, named, and where to look. */
/** The field a refusal names, when it names one field. */
const fieldOf = (refused: readonly RefusedValue[]) => (new Set(refused.map((r) => r.name)).size === 1 ? { field: refused[0]!.name } : {});

export function refusedInputError(refused: readonly RefusedValue[], from: CrmError): CrmError {
  return new CrmError(`HubSpot refused ${describeRefused(refused)}${from.correlationId ? ` (correlationId ${from.correlationId})` : ''}${refusalHint(refused)}`, {
    vendor: VENDOR, kind: CrmErrorKind.permanent, status: from.status, vendorCode: refused[0]?.code, correlationId: from.correlationId, ...fieldOf(refused),
  });
}

/** The property names a PROPERTY_DOESNT_EXIST error names (in its message's JSON list or its `errors`). */
function missingProperties(b: HubSpotErrorBody): string[] {
  const names = new Set<string>();
  for (const e of propertyErrorList(b.message) ?? []) if (e?.error === 'PROPERTY_DOESNT_EXIST' && typeof e.name === 'string') names.add(e.name);
  for (const e of b.errors ?? []) if (e.code === 'PROPERTY_DOESNT_EXIST') for (const name of propertyNamesOf(e)) names.add(name);
  return [...names];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * HubSpot's refusal of an idProperty without unique values ("Unable to perform update/upsert by
 * non-unique email property" in English) carries nothing but its words. Told apart without them:
 * a whole-batch VALIDATION_ERROR of an upsert that lists no property errors and quotes the
 * idProperty's name, an identifier no translation changes.
 */
function nonUniqueIdProperty(b: HubSpotErrorBody, context: HubSpotClassifyContext): boolean {
  const id = context.idProperty;
  if (!id || b.category !== 'VALIDATION_ERROR' || !b.message) return false;
  if (propertyErrorList(b.message) || (b.errors ?? []).some((e) => propertyNamesOf(e).length > 0)) return false;
  return new RegExp(`(^|[^\\w])${escapeRegExp(id)}($|[^\\w])`).test(b.message);
}

/**
 * A whole-batch 400 that every input would hit again, so splitting cannot help: the idProperty
 * is not unique, or a property the portal lacks is sent by every input. Returns what is wrong.
 */
function setupProblem(b: HubSpotErrorBody, context: HubSpotClassifyContext): string | undefined {
  if (nonUniqueIdProperty(b, context)) return b.message;
  // One input is just that input's problem, in HubSpot's own words.
  const sent = context.sentProperties;
  if (!sent || sent.length < 2) return undefined;
  const everywhere = missingProperties(b).filter((name) => sent.every((props) => props.includes(name)));
  if (everywhere.length === 0) return undefined;
  return `${everywhere.map((n) => `property "${n}"`).join(', ')} ${everywhere.length === 1 ? 'does' : 'do'} not exist (PROPERTY_DOESNT_EXIST), and every input sends it`;
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

function fromApiException(err: ApiExceptionLike, context: HubSpotClassifyContext): CrmError {
  const status = err.code;
  const b = bodyOf(err.body);
  const base = { vendor: VENDOR, status, vendorCode: b.category ?? b.policyName, correlationId: b.correlationId, cause: err };
  const text = describe(status, b);
  if (err.unreadable && (status >= 500 || (status >= 200 && status < 300))) {
    const typed = err instanceof HubSpotUnreadableResponse ? err.contentType !== undefined : true;
    const what = typed ? 'with a body that is not JSON' : 'without a Content-Type';
    return new CrmError(`HubSpot (or a proxy in front of it) answered HTTP ${status} ${what} (${b.message ?? 'empty'}); the write may have been committed`, {
      ...base, kind: CrmErrorKind.transient, ambiguous: true, vendorCode: typed ? 'UNREADABLE_RESPONSE' : 'NO_CONTENT_TYPE',
    });
  }
  if (status === 429) {
    if (b.policyName === 'DAILY') {
      return new CrmError(
        `HubSpot daily API limit reached (${text}). No retry until the daily limit resets (midnight in the account's time zone); ` +
          'the failed actions stay in the ledger as failed and can be retried then with `crm-upsert retry-failed`.',
        { ...base, kind: CrmErrorKind.quota, vendorCode: 'DAILY' },
      );
    }
    // The search limit's 429 is the one that names no policy ("You have reached your secondly limit.").
    if (b.policyName === 'SECONDLY' || b.policyName === undefined) {
      const what = b.policyName === 'SECONDLY' ? 'per-second rate limit' : 'search rate limit';
      return new CrmError(`HubSpot ${what} (${text})`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: retryAfterMs(err.headers) ?? 1_000, vendorCode: 'SECONDLY' });
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
  const setup = status === 400 ? setupProblem(b, context) : undefined;
  if (setup) {
    const label = [`HTTP ${status}`, b.category].filter(Boolean).join(' ');
    return new CrmError(`HubSpot rejected the whole batch (${label}: ${setup}${b.correlationId ? `, correlationId ${b.correlationId}` : ''}): ${setupHint}`, {
      ...base, kind: CrmErrorKind.permanent, splittable: false,
    });
  }
  if (status === 400 && b.category === 'VALIDATION_ERROR') {
    const refused = refusedValuesOfBody(b);
    if (refused.length > 0) {
      // The adapter places it on the inputs that sent these values; failing that, the engine splits.
      const error = new CrmError(`HubSpot rejected the request (HTTP 400 VALIDATION_ERROR): refused ${describeRefused(refused)}${b.correlationId ? ` (correlationId ${b.correlationId})` : ''}${refusalHint(refused)}`, {
        ...base, kind: CrmErrorKind.permanent, splittable: true, vendorCode: refused[0]!.code, ...fieldOf(refused),
      });
      refusedOf.set(error, refused);
      return error;
    }
    // A whole-batch 400 is usually one bad input: let the engine split the batch to isolate it.
    return new CrmError(`HubSpot rejected the request (${text})`, { ...base, kind: CrmErrorKind.permanent, splittable: true });
  }
  if (status === 409) {
    // A batch fails whole on a unique-value conflict, naming only the first: split to isolate it.
    return new CrmError(`HubSpot rejected the request (${text})`, { ...base, kind: CrmErrorKind.permanent, splittable: true });
  }
  return new CrmError(`HubSpot rejected the request (${text})`, { ...base, kind: CrmErrorKind.permanent });
}

/**
 * Classify anything the HubSpot client (or this adapter) threw. Idempotent for CrmError.
 * `context` (what the failed write sent) tells a setup error from one bad input.
 */
export function classifyHubSpotError(err: unknown, context: HubSpotClassifyContext = {}): CrmError {
  if (err instanceof CrmError) return err;
  if (isApiException(err)) {
    const error = fromApiException(err, context);
    // A whole-request refusal can name gone ids too (a 400 "One or more associations are invalid").
    const gone = error.kind === CrmErrorKind.permanent ? goneIds(bodyOf(err.body)) : new Set<string>();
    if (gone.size > 0) goneOf.set(error, gone);
    return error;
  }
  if (err instanceof CrmSyncError) return new CrmError(err.message.replace(/^\[crm-upsert\]\s*/, ''), { vendor: VENDOR, kind: CrmErrorKind.permanent, cause: err });
  const e = err instanceof Error ? (err as Error & { code?: unknown; type?: unknown; errno?: unknown }) : undefined;
  const message = e?.message ?? String(err);
  if (/Cannot parse content\. No Content-Type defined/i.test(message)) {
    return new CrmError(
      'HubSpot (or a proxy in front of it) answered without a Content-Type, so the client could not read the response; the write may have been committed',
      { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'NO_CONTENT_TYPE', cause: err },
    );
  }
  // The SDK's own failure to parse a body (a client without `readableResponses`): no status to keep.
  if (err instanceof SyntaxError || /is not supported by ObjectSerializer\.parse/.test(message)) {
    return new CrmError(`HubSpot (or a proxy in front of it) answered with a body the client could not parse (${bodySnippet(message)}); the write may have been committed`, {
      vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'UNREADABLE_RESPONSE', cause: err,
    });
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

// The record ids a classified per-input error says are gone, for the adapter to read them again.
const goneOf = new WeakMap<CrmError, ReadonlySet<string>>();

/**
 * The HubSpot ids a classified error says do not exist (deleted, merged away, never there): those
 * an association refusal lists in INVALID_OBJECT_IDS (`CONTACT=12 is not valid`, read by its
 * `TYPE=id`, not by the words after it, which HubSpot localizes), and those an OBJECT_NOT_FOUND
 * names in `ids` / `objectId`. Empty for any other error.
 */
export const goneIdsOf = (err: unknown): ReadonlySet<string> => (err instanceof CrmError ? (goneOf.get(err) ?? new Set()) : new Set());

function goneIds(e: HubSpotErrorBody): Set<string> {
  const ids = new Set<string>();
  for (const s of e.context?.INVALID_OBJECT_IDS ?? []) {
    const id = /=(\S+)/.exec(s)?.[1];
    if (id) ids.add(id);
  }
  // A record without associations is an OBJECT_NOT_FOUND too: it exists.
  if (e.category === 'OBJECT_NOT_FOUND' && !String(e.subCategory ?? '').includes('NO_ASSOCIATIONS_FOUND')) {
    for (const id of [...(e.context?.ids ?? []), ...(e.context?.objectId ?? [])]) ids.add(String(id));
  }
  return ids;
}

/** One per-input error from a 207 response (StandardError), as a CrmError. */
export function classifyHubSpotItemError(e: HubSpotErrorBody): CrmError {
  const error = classifyItem(e);
  const gone = goneIds(e);
  if (gone.size > 0) goneOf.set(error, gone);
  return error;
}

function classifyItem(e: HubSpotErrorBody): CrmError {
  const numeric = Number(e.status);
  const base = { vendor: VENDOR, vendorCode: e.category, correlationId: e.correlationId };
  const text = describe(undefined, e);
  if (e.category === 'RATE_LIMITS') return new CrmError(`HubSpot rate limit: ${text}`, { ...base, kind: CrmErrorKind.rateLimited, retryAfterMs: TEN_SECONDS });
  if ((Number.isFinite(numeric) && numeric >= 500) || /^(INTERNAL_ERROR|SERVICE_UNAVAILABLE|TIMEOUT)$/.test(e.category ?? '')) {
    return new CrmError(`HubSpot server error for this input: ${text}`, { ...base, kind: CrmErrorKind.transient, ambiguous: true });
  }
  const refused = refusedValuesOfBody(e);
  if (refused.length > 0) {
    return new CrmError(`HubSpot refused ${describeRefused(refused)}${e.correlationId ? ` (correlationId ${e.correlationId})` : ''}${refusalHint(refused)}`, { ...base, kind: CrmErrorKind.permanent, vendorCode: refused[0]!.code, ...fieldOf(refused) });
  }
  return new CrmError(`HubSpot rejected this input: ${text}`, { ...base, kind: CrmErrorKind.permanent });
}
