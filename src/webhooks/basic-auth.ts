/**
 * HTTP basic authentication (`Authorization: Basic base64(user:password)`), how Pipedrive's
 * webhooks (and other senders without a body signature) authenticate. The event id is read from
 * the body with a JSON pointer. Nothing is signed: use it over HTTPS only; a replay is caught by
 * the event id.
 */
import { createHash } from 'node:crypto';
import { badRequest, unauthorized, type Verifier, type VerifyResult, type WebhookRequest } from './types.js';
import { bytesEqual, headerOf, parseJson } from './util.js';
import { eventAtPointers } from './pointer-event.js';

export interface BasicAuthOptions {
  username: string;
  /** The password. Several: any one is accepted (rotation). */
  password: string | readonly string[];
  /** JSON pointer to the event id in the body. */
  eventIdPointer: string;
  /** JSON pointer to the event time (ISO 8601 or epoch ms). Default none. */
  occurredAtPointer?: string;
}

// Compared as digests: equal lengths, so the comparison's time says nothing about the credentials.
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** A verifier for HTTP basic authentication. */
export function basicAuthVerifier(options: BasicAuthOptions): Verifier {
  const passwords = typeof options.password === 'string' ? [options.password] : [...options.password];
  const expected = passwords.map((p) => digest(`${options.username}:${p}`));
  return (request: WebhookRequest): VerifyResult => {
    const header = headerOf(request.headers, 'authorization')?.trim();
    if (!header) return unauthorized('missing Authorization');
    const m = /^basic\s+([A-Za-z0-9+/]+=*)$/i.exec(header);
    if (!m) return unauthorized('Authorization is not Basic credentials');
    const given = digest(Buffer.from(m[1]!, 'base64').toString('utf8'));
    if (!expected.some((e) => bytesEqual(e, given))) return unauthorized('the credentials do not match');
    const parsed = parseJson(request.body);
    if (!parsed) return badRequest('body is not JSON');
    return eventAtPointers(parsed.value, options.eventIdPointer, options.occurredAtPointer);
  };
}
