/**
 * HubSpot's v3 request signature: X-HubSpot-Signature-v3 = base64(HMAC-SHA256(client secret,
 * method + URI + body + X-HubSpot-Request-Timestamp)), the timestamp (epoch ms) within 5 minutes.
 * The body is a JSON array of events; each event's `eventId` keys it.
 */
import { createHmac } from 'node:crypto';
import { badRequest, DEFAULT_TOLERANCE_MS, unauthorized, type VerifiedEvent, type Verifier, type VerifyResult, type WebhookRequest } from './types.js';
import { bytesEqual, headerOf, idOf, isoOf, parseJson } from './util.js';

export interface HubSpotV3Options {
  /** The app's client secret. Several: any one of them may have signed (secret rotation). */
  secret: string | readonly string[];
  /**
   * The target URL exactly as configured in HubSpot (scheme, host, path), signed in place of the
   * URL the request arrived on; the request's query string is appended. Default: the request URL.
   */
  publicUrl?: string;
  /** Largest distance between the signed timestamp and now, either way, in ms. Default 5 minutes. */
  toleranceMs?: number;
}

/** The percent-encodings HubSpot decodes in the URI before signing; every other one stays. */
const DECODED: Record<string, string> = {
  '3A': ':', '2F': '/', '3F': '?', '40': '@', '21': '!', '24': '$', '27': "'", '28': '(', '29': ')', '2A': '*', '2C': ',', '3B': ';',
};

/** The URI as HubSpot signs it: `%3A %2F %3F %40 %21 %24 %27 %28 %29 %2A %2C %3B` decoded, nothing else. */
export function hubspotSignatureUri(url: string): string {
  return url.replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi, (_, hex: string) => DECODED[hex.toUpperCase()]!);
}

/** The URL to sign: `publicUrl` plus the request's query string, or the request URL itself. */
function signedUrl(requestUrl: string, publicUrl: string | undefined): string {
  if (publicUrl === undefined) return requestUrl;
  const q = requestUrl.indexOf('?');
  const query = q < 0 ? '' : requestUrl.slice(q).replace(/#.*$/, '');
  return publicUrl + query;
}

/** The expected signature (base64) of a request: exported for senders and tests of your own. */
export function hubspotV3Signature(secret: string, method: string, uri: string, body: Uint8Array, timestamp: string): string {
  return createHmac('sha256', secret).update(`${method.toUpperCase()}${hubspotSignatureUri(uri)}`).update(body).update(timestamp).digest('base64');
}

function eventsOf(body: Uint8Array): VerifyResult {
  const parsed = parseJson(body);
  if (!parsed) return badRequest('body is not JSON');
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  const events: VerifiedEvent[] = [];
  for (const [i, item] of list.entries()) {
    const eventId = item !== null && typeof item === 'object' ? idOf((item as Record<string, unknown>).eventId) : undefined;
    if (eventId === undefined) return badRequest(`event ${i} has no eventId`);
    const occurredAt = isoOf((item as Record<string, unknown>).occurredAt);
    events.push({ eventId, ...(occurredAt ? { occurredAt } : {}), payload: item });
  }
  if (events.length === 0) return badRequest('no events in the body');
  return { ok: true, events };
}

/** A verifier for HubSpot's v3 signature. */
export function hubspotV3Verifier(options: HubSpotV3Options): Verifier {
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  const tolerance = options.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  return (request: WebhookRequest, now = Date.now()): VerifyResult => {
    const signature = headerOf(request.headers, 'x-hubspot-signature-v3');
    const timestamp = headerOf(request.headers, 'x-hubspot-request-timestamp');
    if (!signature || !timestamp) return unauthorized('missing X-HubSpot-Signature-v3 or X-HubSpot-Request-Timestamp');
    if (!/^\d{1,16}$/.test(timestamp)) return unauthorized('X-HubSpot-Request-Timestamp is not epoch milliseconds');
    if (Math.abs(now - Number(timestamp)) > tolerance) return unauthorized('X-HubSpot-Request-Timestamp is outside the 5-minute window');
    const given = Buffer.from(signature.trim(), 'latin1');
    const uri = signedUrl(request.url, options.publicUrl);
    const valid = secrets.some((s) => bytesEqual(Buffer.from(hubspotV3Signature(s, request.method, uri, request.body, timestamp), 'latin1'), given));
    return valid ? eventsOf(request.body) : unauthorized('X-HubSpot-Signature-v3 does not match');
  };
}
