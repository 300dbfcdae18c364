/**
 * HubSpot-v3-signed deliveries for the receiver tests and the bench, signed here with node:crypto
 * from HubSpot's definition, not with the code under test.
 */
import { createHmac } from 'node:crypto';
import { Agent, request } from 'node:http';
import { seededRandom } from '../../adapters/testing/fake-http.js';

export interface Delivery {
  /** Event ids in the body. */
  eventIds: number[];
  body: string;
  headers: Record<string, string>;
  /** What the receiver must answer. */
  expect: 200 | 401;
}

/** The headers HubSpot sends for `body` POSTed to `url` at `timestamp`. */
export function hubspotHeaders(secret: string, url: string, body: string, timestamp: number): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`POST${url}${body}${timestamp}`, 'utf8').digest('base64');
  return { 'content-type': 'application/json', 'x-hubspot-signature-v3': signature, 'x-hubspot-request-timestamp': String(timestamp) };
}

export const hubspotBody = (ids: readonly number[], now: number) =>
  JSON.stringify(ids.map((eventId) => ({ eventId, subscriptionId: 4242, portalId: 62515, occurredAt: now - 60_000, subscriptionType: 'contact.propertyChange', objectId: eventId % 997, propertyName: 'lifecyclestage', propertyValue: 'lead', changeSource: 'CRM', attemptNumber: 0 })));

/**
 * `total` deliveries to `url`: `events` distinct valid events (ids from `firstId`), every one
 * delivered at least once, 30% of them in 2-3 deliveries, one delivery in four batching 2-4
 * events, the rest up to `total - bad - stale` identical retries of earlier deliveries (a sender
 * whose acknowledgement was lost); then `bad` with a wrong secret and `stale` signed 6 minutes
 * ago, each carrying events of their own that no valid delivery has. Seeded shuffled order.
 */
export function hubspotDeliveries(o: { secret: string; url: string; now: number; seed?: number; total: number; events: number; bad: number; stale: number; firstId?: number }): Delivery[] {
  const random = seededRandom(o.seed ?? 15);
  const first = o.firstId ?? 1_000_000;
  const occurrences: number[] = [];
  for (let i = 0; i < o.events; i++) {
    const copies = random() < 0.3 ? 2 + Math.floor(random() * 2) : 1;
    for (let c = 0; c < copies; c++) occurrences.push(first + i);
  }
  for (let i = occurrences.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [occurrences[i], occurrences[j]] = [occurrences[j]!, occurrences[i]!];
  }
  const valid: number[][] = [];
  for (let at = 0; at < occurrences.length;) {
    const size = random() < 0.25 ? 2 + Math.floor(random() * 3) : 1;
    valid.push([...new Set(occurrences.slice(at, at + size))]);
    at += size;
  }
  const wanted = o.total - o.bad - o.stale;
  if (valid.length > wanted) throw new Error(`${valid.length} valid deliveries do not fit in ${wanted}`);
  while (valid.length < wanted) valid.push(valid[Math.floor(random() * valid.length)]!);
  const make = (ids: number[], secret: string, ts: number, expect: 200 | 401): Delivery => {
    const body = hubspotBody(ids, o.now);
    return { eventIds: ids, body, headers: hubspotHeaders(secret, o.url, body, ts), expect };
  };
  const out = valid.map((ids) => make(ids, o.secret, o.now, 200));
  let next = first + o.events;
  for (let i = 0; i < o.bad; i++) out.push(make([next++], `${o.secret}-wrong`, o.now, 401));
  for (let i = 0; i < o.stale; i++) out.push(make([next++], o.secret, o.now - 6 * 60_000, 401));
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** POST `body` to `url` over a keep-alive node:http connection (lighter than fetch); resolves to the status. */
export function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(url);
  return new Promise((resolvePost, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolvePost(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}
