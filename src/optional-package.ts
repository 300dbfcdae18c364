/**
 * Optional packages (the vendor SDKs, the database drivers, the queue, webhook, MCP and
 * telemetry libraries) are peers a user installs only when they use them. When one is missing,
 * the part that needs it says which package to install; anything else goes through unchanged.
 */

import { createRequire } from 'node:module';
import { ConfigError } from './errors.js';

/** An optional peer dependency, as package.json declares it. */
export interface OptionalPeer {
  /** The npm package: `bullmq`. */
  name: string;
  /** The supported range, as in peerDependencies: `^6.3.0`. */
  range: string;
  /** What to install: `bullmq@^6.3`. */
  install: string;
}

/** The peers the subpath entries load; their ranges are package.json's peerDependencies. */
export const PEERS = {
  bullmq: { name: 'bullmq', range: '^6.3.0', install: 'bullmq@^6.3' },
  ioredis: { name: 'ioredis', range: '^5', install: 'ioredis@^5' },
  pg: { name: 'pg', range: '^8', install: 'pg@^8' },
  hono: { name: 'hono', range: '^4.13.0', install: 'hono@^4.13' },
  mcpSdk: { name: '@modelcontextprotocol/sdk', range: '^1.32.2', install: '@modelcontextprotocol/sdk@^1.32.2' },
} as const satisfies Record<string, OptionalPeer>;

/** `crm-upsert-sync/queue needs bullmq (^6.3.0): npm install bullmq@^6.3` */
export function missingPeerMessage(usedBy: string, peer: OptionalPeer): string {
  return `${usedBy} needs ${peer.name} (${peer.range}): npm install ${peer.install}`;
}

/** `the postgres ledger needs the pg package: npm install pg@^8` */
export function missingDriverMessage(backend: string, driver: OptionalPeer): string {
  return `the ${backend} ledger needs the ${driver.name} package: npm install ${driver.install}`;
}

/** True when `err` says `name` itself cannot be found (not a module it requires in turn). */
export function isMissingPackage(err: unknown, name: string): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.code !== 'MODULE_NOT_FOUND' && e?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  // The ESM loader names the importing file too: a package missing from inside `name` is not `name` missing.
  const first = (String(e.message).split('\n')[0] ?? '').replace(/ imported from .*$/, '');
  return first.includes(`'${name}'`) || first.includes(`"${name}"`) || first.includes(`/node_modules/${name}/`);
}

/**
 * `require(name)` of an optional package (synchronous: CommonJS peers, entries that must stay
 * `require()`-able); when `name` itself is missing, a ConfigError with `message` (which says what
 * to install). Any other failure goes through as it is.
 */
export function requireOptional<T>(name: string, message: string, load: (id: string) => unknown = createRequire(import.meta.url)): T {
  try {
    return load(name) as T;
  } catch (err) {
    if (isMissingPackage(err, name)) throw new ConfigError(message, { cause: err });
    throw err;
  }
}

/**
 * `load()`, an import of modules that need optional peers: when one of `peers` itself is missing,
 * a ConfigError saying that `entry` needs it and the install command; any other failure goes
 * through as it is. A static import of a missing package fails while the module graph is linked,
 * before any code of the importing module could catch it, so an entry whose modules import their
 * peers statically loads them through this with a top-level await.
 */
export async function importWithPeers<T>(entry: string, peers: readonly OptionalPeer[], load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const missing = peers.find((peer) => isMissingPackage(err, peer.name));
    if (missing) throw new ConfigError(missingPeerMessage(entry, missing), { cause: err });
    throw err;
  }
}
