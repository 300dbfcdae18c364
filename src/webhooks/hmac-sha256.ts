/**
 * A generic HMAC-SHA256 of the raw body in one header (GitHub's `X-Hub-Signature-256: sha256=<hex>`,
 * Shopify's base64 `X-Shopify-Hmac-Sha256`, ...). The event id is read from the body with a JSON
 * pointer. There is no signed timestamp, so a replay is caught only by the event id.
 */
import { createHmac } from 'node:crypto';
import { badRequest, unauthorized, type Verifier, type VerifyResult, type WebhookRequest } from './types.js';
import { bytesEqual, headerOf, parseJson } from './util.js';
import { eventAtPointers } from './pointer-event.js';

export interface HmacSha256Options {
  /** The shared secret. Several: any one may have signed (rotation). */
  secret: string | readonly string[];
  /** Header carrying the signature. Default `x-signature`. */
  header?: string;
  /** How the digest is written. Default `hex` (either case). */
  encoding?: 'hex' | 'base64';
  /** Text before the digest, e.g. `sha256=` (compared case-insensitively). Default none. */
  prefix?: string;
  /** JSON pointer to the event id in the body, e.g. `/id`. */
  eventIdPointer: string;
  /** JSON pointer to the event time (ISO 8601 or epoch ms). Default none. */
  occurredAtPointer?: string;
}

/** The digest bytes written in a header value, or undefined when it is not well-formed. */
function digestOf(value: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  if (encoding === 'hex') return /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : undefined;
  return /^[A-Za-z0-9+/]{43}=?$/.test(value) ? Buffer.from(value, 'base64') : undefined;
}

/** A verifier for an HMAC-SHA256 body signature in one header. */
export function hmacSha256Verifier(options: HmacSha256Options): Verifier {
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  const header = options.header ?? 'x-signature';
  const encoding = options.encoding ?? 'hex';
  const prefix = (options.prefix ?? '').toLowerCase();
  return (request: WebhookRequest): VerifyResult => {
    const raw = headerOf(request.headers, header)?.trim();
    if (!raw) return unauthorized(`missing ${header}`);
    if (raw.slice(0, prefix.length).toLowerCase() !== prefix) return unauthorized(`${header} does not start with ${options.prefix}`);
    const given = digestOf(raw.slice(prefix.length), encoding);
    if (!given) return unauthorized(`${header} is not a ${encoding} SHA-256 digest`);
    if (!secrets.some((s) => bytesEqual(createHmac('sha256', s).update(request.body).digest(), given))) return unauthorized(`${header} does not match`);
    const parsed = parseJson(request.body);
    if (!parsed) return badRequest('body is not JSON');
    return eventAtPointers(parsed.value, options.eventIdPointer, options.occurredAtPointer);
  };
}
