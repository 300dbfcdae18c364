/**
 * The machinery every fake CRM shares: a request counter, seeded fault injection, and two
 * fronts over one in-memory state machine (nock interceptors for in-process tests, a loopback
 * HTTP server for the demo, the CLI and multi-process tests).
 *
 * A vendor fake supplies only `handle(req)` (its state machine: calling it commits) and the
 * bodies of its own 429 and 5xx responses.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertNockSupported } from './nock-support.js';

export interface FakeRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: unknown;
  /** The body as it arrived, before parsing (the loopback front; nock hands over JSON parsed). */
  raw?: string;
}

export interface FakeResponse {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as-is instead of `body` (an HTML error page, a truncated body). Headers still default to a JSON content type. */
  rawBody?: string;
}

export const FaultKind = {
  /** 429 with Retry-After; nothing committed. */
  rateLimit: 'rate_limit',
  /** 503; nothing committed. */
  serverError: 'server_error',
  /** Connection reset before the CRM saw the request; nothing committed. */
  reset: 'reset',
  /** The CRM committed the request, then the connection dropped before the response. */
  lostResponse: 'lost_response',
  /** The CRM committed every input, then answered 2xx with one input's result left out. */
  missingResult: 'missing_result',
  /** A 5xx whose body is an HTML page (a proxy or load balancer in front of the CRM); nothing committed. */
  htmlError: 'html_error',
} as const;
export type FaultKind = (typeof FaultKind)[keyof typeof FaultKind];

export interface FaultOptions {
  /** PRNG seed: the same seed and request sequence give the same faults. Default 1. */
  seed?: number;
  /** Probability per eligible request of each fault (0..1). */
  rateLimit?: number;
  serverError?: number;
  reset?: number;
  lostResponse?: number;
  missingResult?: number;
  htmlError?: number;
  /** Retry-After seconds sent with injected 429s. Default 1. */
  retryAfterSeconds?: number;
  /** Added latency per request, fixed or [min, max] ms. Default 0. */
  latencyMs?: number | [number, number];
  /** Which requests may be faulted. Default: every request. */
  match?: (req: FakeRequest) => boolean;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  endpoint: string;
  status: number | null;
  /** The injected fault: a FaultKind or one of the vendor's own faults. */
  fault: string | null;
  /** When the request arrived (epoch ms), before any injected latency: for pacing and rate-limit checks. */
  at: number;
}

export interface FakeVendor {
  /** Vendor name, used in messages. */
  name: string;
  /** The state machine. Calling it commits the request's effects. */
  handle(req: FakeRequest): FakeResponse | Promise<FakeResponse>;
  /** The vendor's 429 response for an injected rate-limit fault. */
  rateLimited(retryAfterSeconds: number): FakeResponse;
  /** The vendor's 5xx response for an injected server error. */
  serverError(): FakeResponse;
  /** The vendor's 5xx HTML page for an injected `html_error`. Default: a 502 proxy page served as text/html. */
  htmlError?(): FakeResponse;
  /**
   * The committed response with one input's result left out, for an injected `missing_result`.
   * Default: the last element of a JSON array body, or of its `results` array, is dropped.
   */
  omitResult?(response: FakeResponse, req: FakeRequest): FakeResponse;
  /** Vendor-specific faults by name: each answers in place of the CRM (nothing committed). */
  faults?: Record<string, (req: FakeRequest) => FakeResponse>;
  /** Endpoint label for counting (`POST /crm/v3/objects/contacts/batch/upsert`). Default: method + path. */
  endpointOf?(req: FakeRequest): string;
}

/** A deterministic PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Dispatch = { kind: 'respond'; response: FakeResponse } | { kind: 'drop' };

export interface FailNextOptions {
  /** How many matching requests to fault. Default 1. */
  times?: number;
  /** Only requests whose endpoint label contains this. */
  endpoint?: string;
  match?: (req: FakeRequest) => boolean;
}

interface QueuedFault {
  kind: string;
  remaining: number;
  match?: (req: FakeRequest) => boolean;
}

export class FakeHttpCore {
  readonly log: RequestLogEntry[] = [];
  private faults: FaultOptions = {};
  private random: () => number = seededRandom(1);
  private queued: QueuedFault[] = [];

  constructor(private readonly vendor: FakeVendor, faults: FaultOptions = {}) {
    this.setFaults(faults);
  }

  /** Replace the random fault schedule (and reseed it). */
  setFaults(faults: FaultOptions): void {
    this.faults = { ...faults };
    this.random = seededRandom(faults.seed ?? 1);
  }

  /**
   * Inject `kind` into the next `times` requests that match (before any random fault):
   * `endpoint` is a substring of the request's endpoint label, `match` any predicate.
   */
  failNext(kind: string, options: FailNextOptions = {}): void {
    const known = (Object.values(FaultKind) as string[]).includes(kind) || this.vendor.faults?.[kind] !== undefined;
    if (!known) throw new Error(`fake ${this.vendor.name}: unknown fault "${kind}" (known: ${this.faultKinds().join(', ')})`);
    const { endpoint, match } = options;
    const matcher = endpoint === undefined ? match : (req: FakeRequest) => this.endpointOf(req).includes(endpoint) && (!match || match(req));
    this.queued.push({ kind, remaining: options.times ?? 1, match: matcher });
  }

  /** Every fault this fake can inject: the shared ones, then the vendor's own. */
  faultKinds(): string[] {
    return [...Object.values(FaultKind), ...Object.keys(this.vendor.faults ?? {})];
  }

  /** The label a request is counted under. */
  endpointOf(req: FakeRequest): string {
    return this.vendor.endpointOf?.(req) ?? `${req.method} ${req.path}`;
  }

  /** Requests received, optionally only those whose endpoint label contains `endpoint`. Faulted requests count. */
  count(endpoint?: string): number {
    return endpoint === undefined ? this.log.length : this.log.filter((e) => e.endpoint.includes(endpoint)).length;
  }

  /** Requests received, by endpoint label. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.log) out[e.endpoint] = (out[e.endpoint] ?? 0) + 1;
    return out;
  }

  /** Injected faults by kind (every kind listed, 0 when none). */
  faultCounts(): Record<FaultKind, number> & Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(this.faultKinds().map((k) => [k, 0]));
    for (const e of this.log) if (e.fault) out[e.fault] = (out[e.fault] ?? 0) + 1;
    return out as Record<FaultKind, number> & Record<string, number>;
  }

  resetLog(): void {
    this.log.length = 0;
  }

  private pickFault(req: FakeRequest): string | null {
    const queued = this.queued.find((q) => q.remaining > 0 && (!q.match || q.match(req)));
    if (queued) {
      queued.remaining -= 1;
      this.queued = this.queued.filter((q) => q.remaining > 0);
      return queued.kind;
    }
    const f = this.faults;
    if (f.match && !f.match(req)) return null;
    const r = this.random();
    let edge = 0;
    for (const [kind, p] of [
      [FaultKind.rateLimit, f.rateLimit],
      [FaultKind.serverError, f.serverError],
      [FaultKind.reset, f.reset],
      [FaultKind.lostResponse, f.lostResponse],
      [FaultKind.missingResult, f.missingResult],
      [FaultKind.htmlError, f.htmlError],
    ] as const) {
      edge += p ?? 0;
      if (r < edge) return kind;
    }
    return null;
  }

  private latency(): number {
    const l = this.faults.latencyMs;
    if (l === undefined) return 0;
    if (typeof l === 'number') return l;
    return l[0] + Math.floor(this.random() * (l[1] - l[0] + 1));
  }

  /** Run one request through faults and the vendor state machine. */
  async dispatch(req: FakeRequest): Promise<Dispatch> {
    const endpoint = this.endpointOf(req);
    const entry: RequestLogEntry = { method: req.method, path: req.path, endpoint, status: null, fault: null, at: Date.now() };
    this.log.push(entry);
    const fault = this.pickFault(req);
    const delay = this.latency();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    entry.fault = fault;
    const respond = (response: FakeResponse): Dispatch => {
      entry.status = response.status;
      return { kind: 'respond', response };
    };
    switch (fault) {
      case null:
        return respond(await this.vendor.handle(req));
      case FaultKind.reset:
        return { kind: 'drop' };
      case FaultKind.rateLimit:
        return respond(this.vendor.rateLimited(this.faults.retryAfterSeconds ?? 1));
      case FaultKind.serverError:
        return respond(this.vendor.serverError());
      case FaultKind.htmlError:
        return respond(this.vendor.htmlError?.() ?? { status: 502, headers: { 'content-type': 'text/html; charset=UTF-8' }, rawBody: proxyErrorPage(502, 'Bad Gateway') });
      case FaultKind.lostResponse:
        await this.vendor.handle(req);
        return { kind: 'drop' };
      case FaultKind.missingResult:
        return respond((this.vendor.omitResult ?? dropLastResult)(await this.vendor.handle(req), req));
      default:
        return respond(this.vendor.faults![fault]!(req));
    }
  }
}

/** What every fake CRM offers a test besides its own state: counts, faults and two fronts. */
export interface FakeCrmBase<K extends string = FaultKind> {
  /** Request counts, the fault schedule and the request log. */
  core: FakeHttpCore;
  /** Requests received, optionally only those whose endpoint label contains `endpoint`. Faulted ones count. */
  count(endpoint?: string): number;
  counts(): Record<string, number>;
  /** Replace the seeded random fault schedule. */
  setFaults(faults: FaultOptions): void;
  /** Inject `kind` (a FaultKind or one of the vendor's own faults) into the next matching requests. */
  failNext(kind: K, options?: FailNextOptions): void;
  /**
   * Serve the fake on either front: `loopback` (a free port on 127.0.0.1) or `nock` (intercept
   * `origin`, default the vendor's). `url` is what to give the client; `close` takes the front down.
   */
  open(front: FrontKind, origin?: string): Promise<OpenFront>;
}

export type FrontKind = 'loopback' | 'nock';

/** A served fake: the same shape from every fake and either front. */
export interface OpenFront {
  /** Base URL without a trailing slash: HubSpot's `basePath`, Salesforce's `instanceUrl`. */
  url: string;
  /** Take the front down (close the server, or remove the interceptors). */
  close(): Promise<void>;
  /** The same as `close` (its former name). */
  stop(): Promise<void>;
}

/** The shared part of a fake CRM's public object, around one core. */
export function fakeCrmBase<K extends string = FaultKind>(core: FakeHttpCore, defaultOrigin: string): FakeCrmBase<K> {
  return {
    core,
    async open(front, origin = defaultOrigin) {
      if (front === 'nock') {
        const f = await interceptWithNock(core, origin);
        const close = async () => f.stop();
        return { url: origin.replace(/\/+$/, ''), close, stop: close };
      }
      const server = await listenLoopback(core);
      const close = () => server.close();
      return { url: server.url, close, stop: close };
    },
    count: (endpoint) => core.count(endpoint),
    counts: () => core.counts(),
    setFaults: (faults) => core.setFaults(faults),
    failNext: (kind, options) => core.failNext(kind, options),
  };
}

function parseBody(raw: string, contentType: string | undefined): unknown {
  if (!raw) return undefined;
  if (contentType?.includes('json') || /^[[{]/.test(raw)) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

function responseHeaders(response: FakeResponse): Record<string, string> {
  // Both clients mis-handle bodies without a JSON content type (CRM-API.md §0): always send it.
  return { 'content-type': 'application/json;charset=utf-8', ...(response.headers ?? {}) };
}

/** The default `omitResult`: drop the last result of an array body or of its `results` array. */
export function dropLastResult(response: FakeResponse): FakeResponse {
  const body = response.body;
  if (Array.isArray(body)) return { ...response, body: body.slice(0, -1) };
  if (body && typeof body === 'object' && Array.isArray((body as { results?: unknown }).results)) {
    return { ...response, body: { ...body, results: (body as { results: unknown[] }).results.slice(0, -1) } };
  }
  return response;
}

function bodyText(response: FakeResponse): string {
  if (response.rawBody !== undefined) return response.rawBody;
  return response.body === undefined ? '' : JSON.stringify(response.body);
}

/** A proxy's error page of about 5 KB, as load balancers and CDNs serve it in front of a CRM. */
export function proxyErrorPage(status: number, reason: string): string {
  const filler = Array.from({ length: 60 }, (_, i) => `  <!-- padding line ${i} to the size of a real error page, with inline styles and scripts -->`).join('\n');
  return [
    '<!DOCTYPE html>',
    `<html><head><meta charset="utf-8"><title>${status} ${reason}</title>`,
    '<style>body{font-family:sans-serif;margin:4em;color:#333}h1{font-size:1.5em}</style></head>',
    `<body><h1>${status} ${reason}</h1><p>The server did not answer in time. Please try again in a few minutes.</p>`,
    filler,
    '</body></html>',
  ].join('\n');
}

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serve the fake on a loopback port (0 = any free port). */
export async function listenLoopback(core: FakeHttpCore, port = 0): Promise<LoopbackServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const raw = Buffer.concat(chunks).toString('utf8');
      const fakeReq: FakeRequest = {
        method: req.method ?? 'GET',
        path: decodePath(url.pathname),
        query: url.searchParams,
        headers,
        body: parseBody(raw, req.headers['content-type']),
        ...(raw ? { raw } : {}),
      };
      core.dispatch(fakeReq).then(
        (d) => {
          if (d.kind === 'drop') {
            req.socket.destroy();
            return;
          }
          res.writeHead(d.response.status, responseHeaders(d.response));
          res.end(bodyText(d.response));
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: `fake ${String(err)}` }));
        },
      );
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function decodePath(pathname: string): string {
  return pathname
    .split('/')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    })
    .join('/');
}

export interface NockFront {
  origin: string;
  /** Remove this fake's interceptors. */
  stop(): void;
}

/**
 * Intercept `origin` with nock (in-process tests). nock is an optional peer, a devDependency of
 * the caller's test suite; it is loaded only when this front is used, after checking that its
 * version works on this Node (on Node 20: 14.x or exactly 15.0.0).
 */
export async function interceptWithNock(core: FakeHttpCore, origin: string): Promise<NockFront> {
  assertNockSupported();
  const nockModule = (await import('nock')) as unknown as { default?: NockLike } & NockLike;
  const nock: NockLike = typeof nockModule.default === 'function' ? nockModule.default : nockModule;
  const scope = nock(origin).persist();
  const interceptors: NockInterceptor[] = [];
  for (const method of ['get', 'post', 'patch', 'put', 'delete'] as const) {
    const interceptor = scope[method](/.*/);
    interceptors.push(interceptor);
    interceptor.reply(function (this: { req: { headers: Record<string, string | string[]> } }, uri: string, body: unknown, callback: NockCallback) {
      const url = new URL(uri, origin);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(this.req.headers ?? {})) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
      const fakeReq: FakeRequest = {
        method: method.toUpperCase(),
        path: decodePath(url.pathname),
        query: url.searchParams,
        headers,
        body: typeof body === 'string' ? parseBody(body, 'application/json') : body,
        ...(typeof body === 'string' && body ? { raw: body } : {}),
      };
      core.dispatch(fakeReq).then(
        (d) => {
          if (d.kind === 'drop') {
            callback(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
            return;
          }
          callback(null, [d.response.status, bodyText(d.response), responseHeaders(d.response)]);
        },
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }
  return {
    origin,
    stop: () => {
      for (const interceptor of interceptors) nock.removeInterceptor(interceptor);
    },
  };
}

type NockCallback = (err: Error | null, result?: [number, string, Record<string, string>]) => void;
interface NockScope {
  persist(on?: boolean): NockScope;
  get(path: RegExp): NockInterceptor;
  post(path: RegExp): NockInterceptor;
  patch(path: RegExp): NockInterceptor;
  put(path: RegExp): NockInterceptor;
  delete(path: RegExp): NockInterceptor;
}
interface NockInterceptor {
  reply(fn: (this: { req: { headers: Record<string, string | string[]> } }, uri: string, body: unknown, cb: NockCallback) => void): NockScope;
}
interface NockLike {
  (origin: string): NockScope;
  removeInterceptor(i: NockInterceptor): boolean;
}
