/**
 * The verifier contract: a pure function over one HTTP request (method, URL, headers, raw body
 * bytes, the current time) that says whether it is authentic and, if so, which events it carries.
 * Verifiers never throw on bad input; they answer with the HTTP status to send.
 */

/** Request headers: a fetch `Headers`, or a plain object such as Node's `req.headers` (any case). */
export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** One HTTP request as a verifier sees it. */
export interface WebhookRequest {
  /** HTTP method, e.g. `POST`. */
  method: string;
  /** The full URL the sender called (scheme, host, path, query), as received. */
  url: string;
  headers: HeaderBag;
  /** The raw body bytes, exactly as received (never re-serialized JSON). */
  body: Uint8Array;
}

/** A verified event, ready to enqueue. */
export interface VerifiedEvent {
  /** The id from the verified envelope; with the source name it keys the event. */
  eventId: string;
  /** When the event happened, when the envelope says so (ISO 8601). */
  occurredAt?: string;
  /** The event's JSON. */
  payload: unknown;
}

/** Statuses a verifier refuses with: 400 (malformed body) or 401 (signature, timestamp). */
export const RefusalStatus = { badRequest: 400, unauthorized: 401 } as const;
export type RefusalStatus = (typeof RefusalStatus)[keyof typeof RefusalStatus];

export type VerifyResult =
  | { ok: true; events: VerifiedEvent[] }
  | { ok: false; status: RefusalStatus; reason: string };

/** A configured verifier: the request and the current time (epoch ms) in, a verdict out. */
export type Verifier = (request: WebhookRequest, now?: number) => VerifyResult;

/** Default tolerance of a signed timestamp, either side of now: 5 minutes. */
export const DEFAULT_TOLERANCE_MS = 5 * 60_000;

export const unauthorized = (reason: string): VerifyResult => ({ ok: false, status: RefusalStatus.unauthorized, reason });
export const badRequest = (reason: string): VerifyResult => ({ ok: false, status: RefusalStatus.badRequest, reason });
