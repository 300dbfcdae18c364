/**
 * The HTTP of `check-setup`: plain fetch with the token, replies kept whole, and a refused token
 * turned into the ConfigError that ends the check (nothing else can be verified with it).
 */
import { ConfigError, redact } from '../../src/errors.js';

export interface Reply {
  status: number;
  body: unknown;
}

export async function setupRequest(url: string, token: string, init: { method?: string; body?: unknown } = {}): Promise<Reply> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
  } catch (err) {
    throw new ConfigError(`cannot reach ${new URL(url).origin}: ${redact((err as Error).message)}`);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // keep the text
  }
  return { status: res.status, body };
}

/** A reply body as one short, secret-free line. */
export const messageOf = (body: unknown) => redact(typeof body === 'string' ? body : JSON.stringify(body)).replace(/\s+/g, ' ').slice(0, 300);

/** 401/403 end the check; `variable` holds the token, `needs` says what it must be allowed. */
export function refuseAuth(reply: Reply, variable: string, needs: string): void {
  if (reply.status === 401) {
    throw new ConfigError(`auth failed: the token in ${variable} was refused (HTTP 401: ${messageOf(reply.body)}); set a current token and run check-setup again`);
  }
  if (reply.status === 403) {
    throw new ConfigError(`auth failed: the token in ${variable} may not read the object definitions (HTTP 403: ${messageOf(reply.body)}); it needs ${needs}`);
  }
}
