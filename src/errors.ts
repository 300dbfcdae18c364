/**
 * One base class, a closed set of subclasses, each with a stable `code`.
 * Messages are prefixed `[crm-upsert]` (and `[vendor]` for CRM errors) and never carry secrets:
 * everything that may echo a request goes through `redact()` first, and a cause is kept only as
 * a sanitized copy (`sanitizeCause`), so `util.inspect(err)` prints no secret down the chain.
 */

import type { ValidationIssue } from '../schemas/issues.js';

export const ErrorCode = {
  config: 'CONFIG',
  validation: 'VALIDATION',
  keyConflict: 'KEY_CONFLICT',
  ledger: 'LEDGER',
  crm: 'CRM',
  /**
   * An upsert of a record this ledger wrote before, gone from the CRM since (deleted or merged
   * away), on an object configured `onMissing: 'skip'`: nothing was written. A `CrmError` with this
   * code (and `vendorCode`), never retryable; its message names the record's previous CRM id.
   */
  recordGone: 'RECORD_GONE',
  /** A `handle` event some of whose actions did not complete (it runs again on its next delivery). */
  actionsIncomplete: 'ACTIONS_INCOMPLETE',
  /** Something thrown that is not one of ours, as `serializeError` describes it. */
  unknown: 'UNKNOWN',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class CrmSyncError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options: { cause?: unknown; vendor?: string } = {}) {
    const prefix = options.vendor ? `[crm-upsert] [${options.vendor}]` : '[crm-upsert]';
    super(`${prefix} ${redact(message)}`, options.cause === undefined ? undefined : { cause: sanitizeCause(options.cause) });
    this.name = new.target.name;
    this.code = code;
  }

  /** A plain, secret-free object for ledger rows and reports. */
  toJSON(): SerializedError {
    return { name: this.name, code: this.code, message: this.message };
  }
}

export interface SerializedError {
  name: string;
  code: ErrorCode;
  message: string;
  retryable?: boolean;
  status?: number;
  path?: string;
  /** The vendor's (or the engine's) code for a CRM error, such as `PARENT_NOT_FOUND`. */
  vendorCode?: string;
}

export class ConfigError extends CrmSyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCode.config, message, options);
  }
}

export type { ValidationIssue } from '../schemas/issues.js';

export class ValidationError extends CrmSyncError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[], options: { cause?: unknown } = {}) {
    super(ErrorCode.validation, issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; '), options);
    // Issues may quote the input (a thrown getter's message, a value): never a secret.
    this.issues = issues.map((i) => ({ path: i.path, message: redact(i.message) }));
  }
  override toJSON(): SerializedError {
    return { ...super.toJSON(), path: this.issues[0]?.path };
  }
}

export class KeyConflictError extends CrmSyncError {
  readonly existing: unknown;
  constructor(key: string, existing: unknown) {
    super(ErrorCode.keyConflict, `key ${key} is already recorded for a different action identity`);
    this.existing = existing;
  }
}

export class LedgerError extends CrmSyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCode.ledger, message, options);
  }
}

/** How the engine should treat a CRM failure. */
export const CrmErrorKind = {
  /** 429 inside a short window: wait `retryAfterMs`, then retry. */
  rateLimited: 'rate_limited',
  /** 5xx, timeouts, resets: retry with backoff; the write may or may not have committed. */
  transient: 'transient',
  /** A daily or org-wide allocation is spent: stop, do not retry until it resets. */
  quota: 'quota',
  /** 401/403: the token or its scopes are wrong. */
  auth: 'auth',
  /** Validation, conflict, not found: retrying the same request cannot succeed. */
  permanent: 'permanent',
} as const;
export type CrmErrorKind = (typeof CrmErrorKind)[keyof typeof CrmErrorKind];

export interface CrmErrorOptions {
  vendor: string;
  kind: CrmErrorKind;
  status?: number;
  /** Milliseconds to wait before retrying (Retry-After, or the vendor's policy window). */
  retryAfterMs?: number;
  /** The request may have been committed before the failure was seen (lost response, reset after send, 5xx). */
  ambiguous?: boolean;
  /** A whole-batch 4xx likely caused by one input: the engine splits the batch to isolate it. */
  splittable?: boolean;
  /** The vendor's own error code (`VALIDATION_ERROR`, `DUPLICATE_VALUE`, ...). */
  vendorCode?: string;
  correlationId?: string;
  /** The CRM field whose value the CRM refused (an allowlisted name): serialized as `path: fields.<field>`, as a rejected value's is. */
  field?: string;
  /** The error's code: `CRM`, or `RECORD_GONE` for a record left gone by `onMissing: 'skip'` (`recordGoneError`). Default `CRM`. */
  code?: typeof ErrorCode.crm | typeof ErrorCode.recordGone;
  cause?: unknown;
}

export class CrmError extends CrmSyncError {
  readonly vendor: string;
  readonly kind: CrmErrorKind;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly ambiguous: boolean;
  readonly splittable: boolean;
  readonly vendorCode?: string;
  readonly correlationId?: string;
  readonly field?: string;

  constructor(message: string, options: CrmErrorOptions) {
    super(options.code ?? ErrorCode.crm, message, { cause: options.cause, vendor: options.vendor });
    this.vendor = options.vendor;
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.ambiguous = options.ambiguous ?? false;
    this.splittable = options.splittable ?? false;
    this.vendorCode = options.vendorCode;
    this.correlationId = options.correlationId;
    this.field = options.field;
  }

  get retryable(): boolean {
    return this.kind === CrmErrorKind.rateLimited || this.kind === CrmErrorKind.transient;
  }

  override toJSON(): SerializedError {
    return { ...super.toJSON(), retryable: this.retryable, status: this.status, ...(this.vendorCode ? { vendorCode: this.vendorCode } : {}), ...(this.field ? { path: `fields.${this.field}` } : {}) };
  }
}

/**
 * The failure of an upsert that found the record this ledger wrote gone from the CRM, on an object
 * configured `onMissing: 'skip'` (code and vendorCode `RECORD_GONE`, permanent: retrying the same
 * write cannot bring the record back). `record` names it (`contact "zd-7"`), `previousId` is the CRM id
 * the ledger held for it.
 */
export function recordGoneError(vendor: string, record: string, previousId: string, detail?: string): CrmError {
  return new CrmError(
    `${record} is gone from the CRM (RECORD_GONE): it had id ${previousId} when this ledger last wrote it and was deleted or merged away since${detail ? ` (${detail})` : ''}; onMissing 'skip' does not create it again`,
    { vendor, kind: CrmErrorKind.permanent, vendorCode: ErrorCode.recordGone, code: ErrorCode.recordGone },
  );
}

const registeredSecrets = new Set<string>();

/** Register a secret (token, password) so that `redact()` removes it wherever it appears. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 4) registeredSecrets.add(secret);
}

/**
 * After `accessToken:` or `Authorization:` a value of lowercase letters alone is a word of the
 * message that follows (`accessToken: secrets never go in the config file`), not a credential:
 * tokens carry digits, capitals or symbols.
 */
const NOT_A_WORD = String.raw`(?![a-z]+(?:[\s"',}&]|$))`;
/** `word` matched in any case, in a pattern without the `i` flag (NOT_A_WORD must stay case-sensitive). */
const anyCase = (word: string) => [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join('');

const secretPatterns: RegExp[] = [
  // First: whatever follows `Bearer` is a credential, lowercase or not.
  /\bbearer\s+[A-Za-z0-9._~+/=-]+/gi,
  new RegExp(String.raw`(${anyCase('authorization')}["']?\s*[:=]\s*["']?)${NOT_A_WORD}[^\s"',}]+`, 'g'),
  new RegExp(String.raw`(${anyCase('access')}_?${anyCase('token')}["']?\s*[:=]\s*["']?)${NOT_A_WORD}[^\s"',}&]+`, 'g'),
  /(password["']?\s*[:=]\s*["']?)[^\s"',}&]+/gi,
  // A URL's password: the `@` after it stays, so the host still reads as the host.
  /(\/\/[^:/@\s]+:)[^@\s/]+(?=@)/g,
  /(\/\/:)[^@\s/]+(?=@)/g,
  // Token shapes: HubSpot private app tokens, Salesforce session ids.
  /\bpat-[a-z]{2}\d-[A-Za-z0-9-]+/g,
  /\b00D[A-Za-z0-9]{12,15}![A-Za-z0-9._-]+/g,
];

/** Remove tokens, Authorization headers, passwords and registered secrets from a text. */
export function redact(text: string): string {
  let out = text;
  for (const secret of registeredSecrets) out = out.split(secret).join('[redacted]');
  for (const pattern of secretPatterns) {
    out = out.replace(pattern, (_m, p1?: string) => `${typeof p1 === 'string' ? p1 : ''}[redacted]`);
  }
  return out;
}

/**
 * An error's (or a text's) message for a line of its own: redacted, and without the library's
 * `[crm-upsert] ` prefix (the CLI prints its own `crm-upsert:`; a line never says both).
 */
export function plainMessage(err: unknown): string {
  return redact((err instanceof Error ? err.message : String(err)).replace(/^\[crm-upsert\] /, ''));
}

/** A secret-free, JSON-safe description of any thrown value. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof CrmSyncError) return err.toJSON();
  if (err instanceof Error) return { name: err.name, code: ErrorCode.unknown, message: redact(err.message) };
  return { name: 'Error', code: ErrorCode.unknown, message: redact(String(err)) };
}

/** Properties of a foreign error worth keeping: what it is and what the vendor said, not what was sent. */
const KEPT_PROPS = [
  'code', 'status', 'statusCode', 'errorCode', 'errno', 'syscall', 'address', 'port',
  'severity', 'detail', 'hint', 'category', 'subCategory', 'correlationId', 'policyName', 'errorType',
] as const;
/** Response bodies (HubSpot `body`, jsforce `data`), kept as a short redacted summary. */
const SUMMARIZED_PROPS = ['body', 'data'] as const;
const MAX_SUMMARY = 500;
const MAX_CAUSE_DEPTH = 8;

/** Read a property without trusting it: a getter may throw. */
function readProp(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function summarize(value: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    text = '[unserializable]';
  }
  if (text === undefined) return undefined;
  const red = redact(text);
  return red.length > MAX_SUMMARY ? `${red.slice(0, MAX_SUMMARY)}... (${red.length} characters)` : red;
}

/** An error message without an echoed header block (HubSpot's ApiException appends the response headers). */
const sanitizeMessage = (message: string) => redact(message.replace(/\nHeaders: [\s\S]*$/, '\nHeaders: [omitted]'));

/**
 * A copy of a thrown value that is safe to print and keep: an Error with the original's name,
 * redacted message, stack frames, codes and status, a short redacted summary of a response body,
 * and its own sanitized cause (recursively, cycle-safe). Never request or response headers, a
 * client's config, or a command's arguments (ioredis keeps AUTH's password there). A CrmSyncError
 * is already sanitized and is kept as is.
 */
export function sanitizeCause(cause: unknown, seen: WeakMap<object, unknown> = new WeakMap(), depth = 0): unknown {
  if (cause === null || cause === undefined || typeof cause === 'number' || typeof cause === 'boolean' || typeof cause === 'bigint') return cause;
  if (typeof cause === 'string') return redact(cause);
  if (typeof cause !== 'object' && typeof cause !== 'function') return redact(String(cause));
  if (cause instanceof CrmSyncError) return cause;
  if (seen.has(cause)) return seen.get(cause);
  if (depth >= MAX_CAUSE_DEPTH) return '[cause chain truncated]';

  const isError = cause instanceof Error;
  const rawName = readProp(cause, 'name');
  const name = typeof rawName === 'string' ? redact(rawName) : isError ? 'Error' : 'Object';
  const rawMessage = readProp(cause, 'message');
  const message = sanitizeMessage(typeof rawMessage === 'string' ? rawMessage : isError ? '' : (summarize(cause) ?? ''));
  const copy = new Error(message);
  seen.set(cause, copy);
  Object.defineProperty(copy, 'name', { value: name, enumerable: false, writable: true, configurable: true });
  const rawStack = readProp(cause, 'stack');
  const frames = typeof rawStack === 'string' ? rawStack.split('\n').filter((l) => /^\s+at /.test(l)).map(redact) : [];
  Object.defineProperty(copy, 'stack', { value: [`${name}: ${message}`, ...frames].join('\n'), enumerable: false, writable: true, configurable: true });

  const target = copy as unknown as Record<string, unknown>;
  for (const key of KEPT_PROPS) {
    const v = readProp(cause, key);
    if (typeof v === 'number' || typeof v === 'boolean') target[key] = v;
    else if (typeof v === 'string') target[key] = redact(v).slice(0, MAX_SUMMARY);
  }
  for (const key of SUMMARIZED_PROPS) {
    const v = readProp(cause, key);
    if (v !== undefined && v !== null) target[key] = summarize(v);
  }
  const errors = readProp(cause, 'errors');
  if (Array.isArray(errors) && isError) target.errors = errors.slice(0, 5).map((e) => sanitizeCause(e, seen, depth + 1));
  const inner = readProp(cause, 'cause');
  if (inner !== undefined) {
    Object.defineProperty(copy, 'cause', { value: sanitizeCause(inner, seen, depth + 1), enumerable: false, writable: true, configurable: true });
  }
  return copy;
}
