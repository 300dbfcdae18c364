/**
 * Standard Webhooks (standardwebhooks.com): webhook-id, webhook-timestamp (epoch seconds) and
 * webhook-signature, a space-separated list of `v1,<base64>` signatures over
 * `id.timestamp.body`. Any one matching any configured secret passes, so both sides can rotate
 * secrets. `webhook-id` keys the event. Signing uses the `standardwebhooks` package.
 */
import { badRequest, DEFAULT_TOLERANCE_MS, unauthorized, type Verifier, type VerifyResult, type WebhookRequest } from './types.js';
import { loadPeer } from './peer.js';
import { bytesEqual, headerOf, idOf, isoOf, parseJson } from './util.js';

export interface StandardWebhooksOptions {
  /** The signing secret(s), `whsec_<base64>`. Several: any one may have signed (rotation). */
  secret: string | readonly string[];
  /** Largest distance between webhook-timestamp and now, either way, in ms. Default 5 minutes. */
  toleranceMs?: number;
}

interface SwebWebhook {
  sign(msgId: string, timestamp: Date, payload: string): string;
}
interface SwebModule {
  Webhook: new (secret: string) => SwebWebhook;
}

const decoder = new TextDecoder();

/** A verifier for Standard Webhooks signatures. */
export function standardWebhooksVerifier(options: StandardWebhooksOptions): Verifier {
  const { Webhook } = loadPeer<SwebModule>('standardwebhooks', '1.1.1', 'the standard-webhooks verifier');
  const signers = (typeof options.secret === 'string' ? [options.secret] : [...options.secret]).map((s) => new Webhook(s));
  const tolerance = options.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  return (request: WebhookRequest, now = Date.now()): VerifyResult => {
    const id = headerOf(request.headers, 'webhook-id');
    const timestamp = headerOf(request.headers, 'webhook-timestamp');
    const signatures = headerOf(request.headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) return unauthorized('missing webhook-id, webhook-timestamp or webhook-signature');
    if (!/^\d{1,13}$/.test(timestamp)) return unauthorized('webhook-timestamp is not epoch seconds');
    const at = Number(timestamp) * 1000;
    if (Math.abs(now - at) > tolerance) return unauthorized('webhook-timestamp is outside the 5-minute window');
    const given = signatures.split(' ').flatMap((s) => (s.startsWith('v1,') ? [Buffer.from(s.slice(3), 'latin1')] : []));
    const payload = decoder.decode(request.body);
    const expected = signers.map((w) => Buffer.from(w.sign(id, new Date(at), payload).slice(3), 'latin1'));
    if (!expected.some((e) => given.some((g) => bytesEqual(e, g)))) return unauthorized('no webhook-signature matches');
    const eventId = idOf(id);
    if (eventId === undefined) return badRequest('webhook-id is too long');
    const parsed = parseJson(request.body);
    if (!parsed) return badRequest('body is not JSON');
    const body = parsed.value as Record<string, unknown> | null;
    const occurredAt = body !== null && typeof body === 'object' ? isoOf(body.timestamp) : undefined;
    return { ok: true, events: [{ eventId, ...(occurredAt ? { occurredAt } : {}), payload: parsed.value }] };
  };
}
