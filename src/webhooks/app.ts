/**
 * The receiver as a mountable hono app: `POST /hooks/:source` verifies the request with the
 * source's verifier and answers 2xx only after the sink has durably stored its events. Nothing
 * else runs on the request path: no model call, no CRM call, no ledger claim.
 *
 *   unknown source 404 · body over the limit 413 (while reading) · bad signature or timestamp 401
 *   · malformed body 400 · sink failed or slow 503 (the sender retries) · stored 200
 */
import { Hono, type Context } from 'hono';
import type { EventJobData } from '../queue/jobs.js';
import { BodyTooLarge, readBody, readNodeBody, type NodeBodyStream } from './body.js';
import type { HeaderBag } from './types.js';
import type { WebhookSource } from './from-config.js';

/** Where verified events go; `eventQueue()` (crm-upsert-sync/webhooks) is the BullMQ one. */
export interface EventSink {
  /** Resolves once every event is durably stored (a redelivered event may be stored once). */
  enqueue(events: readonly EventJobData[]): Promise<void>;
}

export interface WebhookAppOptions {
  /** Source name (the `:source` in the path) -> its verifier and body limit. */
  sources: Readonly<Record<string, WebhookSource>>;
  sink: EventSink;
  /** Body limit of a source without its own, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** How long to wait for the sink before answering 503, in ms. Default 2000. */
  enqueueTimeoutMs?: number;
  /** Clock for timestamps and `receivedAt`. Default Date.now. */
  now?: () => number;
  /** Called for every refused request, e.g. to log why (the reason never holds a secret). Default none. */
  onRefused?: (refusal: { source: string; status: number; reason: string }) => void;
}

/** Requests answered, by outcome. */
export interface WebhookStats {
  /** 200: events durably enqueued. */
  accepted: number;
  /** Events in the accepted requests (a redelivery counts again; the queue stores it once). */
  events: number;
  /** 400: body not JSON or without an event id. */
  badRequest: number;
  /** 401: missing or wrong signature, stale or future timestamp. */
  unauthorized: number;
  /** 404: no such source. */
  unknownSource: number;
  /** 413: body over the limit. */
  tooLarge: number;
  /** 503: the sink failed or did not answer in time. */
  unavailable: number;
}

export interface WebhookApp {
  /** The hono app: mount it (`app.route('/', hooks.app)`) or serve `hooks.app.fetch`. */
  app: Hono;
  /** A copy of the counters (also served as JSON by `GET /healthz`). */
  stats(): WebhookStats;
}

export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const DEFAULT_ENQUEUE_TIMEOUT_MS = 2_000;

const zeroStats = (): WebhookStats => ({ accepted: 0, events: 0, badRequest: 0, unauthorized: 0, unknownSource: 0, tooLarge: 0, unavailable: 0 });

type Incoming = NodeBodyStream & { url?: string; headers: Record<string, string | string[] | undefined> };

/** Node's request when served by @hono/node-server: read directly, it is cheaper than the web Request. */
const incomingOf = (c: Context): Incoming | undefined => (c.env as { incoming?: Incoming } | undefined)?.incoming;

/** The URL as the sender wrote it: Node's raw request target when there is one. */
function requestUrl(c: Context, incoming: Incoming | undefined): string {
  return incoming?.url?.startsWith('/') ? new URL(c.req.url).origin + incoming.url : c.req.url;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`enqueue took over ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The receiver app. */
export function webhookApp(options: WebhookAppOptions): WebhookApp {
  const counters = zeroStats();
  const now = options.now ?? Date.now;
  const timeoutMs = options.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS;
  const app = new Hono();
  const refuse = (c: Context, status: 400 | 401 | 404 | 413 | 503, counter: keyof WebhookStats, error: string) => {
    counters[counter] += 1;
    options.onRefused?.({ source: c.req.param('source') ?? '', status, reason: error });
    return c.json({ ok: false, error }, status, status === 503 ? { 'retry-after': '5' } : undefined);
  };

  app.get('/healthz', (c) => c.json({ ok: true, ...counters }));
  app.post('/hooks/:source', async (c) => {
    const name = c.req.param('source');
    const source = Object.hasOwn(options.sources, name) ? options.sources[name] : undefined;
    if (!source) return refuse(c, 404, 'unknownSource', `no source named ${name}`);
    const limit = source.maxBodyBytes ?? options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const incoming = incomingOf(c);
    const headers: HeaderBag = incoming?.headers ?? c.req.raw.headers;
    let body: Uint8Array | typeof BodyTooLarge;
    try {
      body = incoming ? await readNodeBody(incoming, limit, c.req.header('content-length')) : await readBody(c.req.raw.body, limit, c.req.header('content-length'));
    } catch {
      return refuse(c, 400, 'badRequest', 'the request body could not be read');
    }
    if (body === BodyTooLarge) return refuse(c, 413, 'tooLarge', 'body over the limit');
    const at = now();
    const verdict = source.verify({ method: c.req.method, url: requestUrl(c, incoming), headers, body }, at);
    if (!verdict.ok) return refuse(c, verdict.status, verdict.status === 401 ? 'unauthorized' : 'badRequest', verdict.reason);
    const receivedAt = new Date(at).toISOString();
    const jobs: EventJobData[] = verdict.events.map((e) => ({ v: 1, source: name, eventId: e.eventId, ...(e.occurredAt ? { occurredAt: e.occurredAt } : {}), receivedAt, payload: e.payload }));
    try {
      await withTimeout(options.sink.enqueue(jobs), timeoutMs);
    } catch {
      return refuse(c, 503, 'unavailable', 'the queue did not take the events; retry later');
    }
    counters.accepted += 1;
    counters.events += jobs.length;
    return c.json({ ok: true, events: jobs.length }, 200);
  });
  return { app, stats: () => ({ ...counters }) };
}
