/** Where a queue lives: what the worker, the chunk enqueue and the admin helpers connect to. */
import type { ConnectionOptions } from 'bullmq';

export interface QueueTarget {
  /** The Redis holding the queue: `redis://…` or `rediss://…`. */
  url: string;
  /** The queue's name: one queue per CRM account (`defaultQueueName(crm)`). */
  name: string;
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string;
}

/** BullMQ's connection and prefix options for `target`. */
export function bullOptions(target: QueueTarget): { connection: ConnectionOptions; prefix?: string } {
  return { connection: { url: target.url }, ...(target.prefix ? { prefix: target.prefix } : {}) };
}

/** How long a command waits for the queue's Redis to answer before giving up, ms. */
export const CONNECT_TIMEOUT_MS = 10_000;

interface Client {
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * `client` once it is connected; ioredis retries an unreachable Redis forever, so after `ms` this
 * throws a connection error instead (ETIMEDOUT: the CLI's exit 4). Connection errors are not
 * thrown as events meanwhile: the commands fail on their own. When `signal` aborts first, this
 * throws its reason and the client is left to the caller.
 */
export async function connected<T extends Client>(client: T, target: QueueTarget, ms = CONNECT_TIMEOUT_MS, signal?: AbortSignal): Promise<T> {
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const notReady = new Promise<'timeout' | 'aborted'>((r) => {
    timer = setTimeout(() => r('timeout'), ms);
    if (signal?.aborted) r('aborted');
    signal?.addEventListener('abort', (onAbort = () => r('aborted')), { once: true });
  });
  let ready: 'ready' | 'timeout' | 'aborted';
  try {
    ready = await Promise.race([client.waitUntilReady().then(() => 'ready' as const), notReady]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
  if (ready === 'ready') return client;
  if (ready === 'aborted') throw signal!.reason;
  void closeWithin(client, 1_000);
  const where = target.url.replace(/\/\/[^@/]*@/, '//');
  throw Object.assign(new Error(`the queue's Redis at ${where} did not answer within ${ms >= 1_000 ? `${Math.round(ms / 1_000)} s` : `${ms} ms`}`), { code: 'ETIMEDOUT' });
}

/** Close, but not wait longer than `ms` (a client that never connected may not finish closing). */
export async function closeWithin(client: Pick<Client, 'close'>, ms: number): Promise<void> {
  await settlesWithin(client.close(), ms);
}

/** True when `p` settles (resolves or rejects) within `ms`; it is not waited for after that. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([p.then(() => true, () => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return settled;
}
