/**
 * No verification, for a trusted sender on the same host: the event id comes from a JSON
 * pointer. `serve` refuses it unless the receiver is bound to loopback.
 */
import { badRequest, type Verifier, type VerifyResult, type WebhookRequest } from './types.js';
import { parseJson } from './util.js';
import { eventAtPointers } from './pointer-event.js';

export interface NoVerificationOptions {
  /** JSON pointer to the event id in the body, e.g. `/id`. */
  eventIdPointer: string;
  /** JSON pointer to the event time (ISO 8601 or epoch ms). Default none. */
  occurredAtPointer?: string;
}

export function noVerification(options: NoVerificationOptions): Verifier {
  return (request: WebhookRequest): VerifyResult => {
    const parsed = parseJson(request.body);
    if (!parsed) return badRequest('body is not JSON');
    return eventAtPointers(parsed.value, options.eventIdPointer, options.occurredAtPointer);
  };
}

/** True when `host` names only this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}
