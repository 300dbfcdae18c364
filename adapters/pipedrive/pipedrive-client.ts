/**
 * The one small HTTP client the Pipedrive adapter talks through, on the platform's `fetch`.
 *
 * Why not the official `pipedrive` package: it rejects with the response body alone (no status,
 * no headers, not an Error), so a 429 cannot be told from a 400, the rate-limit headers and
 * Retry-After are invisible, and it has no timeout. Here every answer keeps its status and
 * headers, the token travels only in the `x-api-token` header (never in a URL), and one attempt
 * is made per call: the engine decides about retries.
 */
import { PipedriveHttpError } from './pipedrive-errors.js';

export type QueryValue = string | number | boolean | undefined;

export interface PipedriveRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** `/api/v2/persons/12`, `/api/v1/notes`. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

/** A 2xx answer: its parsed JSON body and headers (lower-case names). */
export interface PipedriveAnswer<T> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** The one call the adapter makes of its HTTP client (a test may inject its own). */
export interface PipedriveHttp {
  /** Send one request; resolves with a 2xx answer, rejects with a PipedriveHttpError otherwise (or when no answer came). */
  send<T>(request: PipedriveRequest): Promise<PipedriveAnswer<T>>;
}

export interface PipedriveHttpOptions {
  /** API origin without a trailing slash: `https://acme.pipedrive.com` or a loopback fake. */
  basePath: string;
  apiToken: string;
  /** Per-request timeout in ms. Default 30000. */
  timeoutMs?: number;
  /** Default the global fetch. */
  fetch?: typeof fetch;
}

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export function pipedriveHttp(options: PipedriveHttpOptions): PipedriveHttp {
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    async send<T>(req: PipedriveRequest): Promise<PipedriveAnswer<T>> {
      const url = new URL(`${options.basePath}${req.path}`);
      for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const line = `${req.method} ${req.path}`;
      const write = WRITES.has(req.method);
      let res: Response;
      try {
        res = await doFetch(url, {
          method: req.method,
          headers: { 'x-api-token': options.apiToken, accept: 'application/json', ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const reason = err instanceof Error ? (err.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : ((err.cause as { code?: string } | undefined)?.code ?? err.message)) : String(err);
        throw new PipedriveHttpError(reason, line, undefined, {}, undefined, write);
      }
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => (headers[name.toLowerCase()] = value));
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        // The answer started and then broke off: for a write, as unknown as no answer.
        throw new PipedriveHttpError(`the answer broke off (${err instanceof Error ? err.message : String(err)})`, line, undefined, headers, undefined, write);
      }
      let body: unknown = text;
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      if (res.status < 200 || res.status > 299) throw new PipedriveHttpError(`HTTP ${res.status}`, line, res.status, headers, body, write);
      if (typeof body !== 'object' || body === null) {
        // A 2xx that is not Pipedrive's JSON (a proxy's page): nothing in it can be trusted.
        throw new PipedriveHttpError(`a ${res.status} answer that is not JSON`, line, 502, headers, body, write);
      }
      return { status: res.status, headers, body: body as T };
    },
  };
}
