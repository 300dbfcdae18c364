/**
 * Optional packages (the vendor SDKs, the database drivers, the queue, webhook, MCP and
 * telemetry libraries) are peers a user installs only when they use them. When one is missing,
 * the part that needs it says which package to install; anything else goes through unchanged.
 */

import { createRequire } from 'node:module';
import { ConfigError } from './errors.js';

/** True when `err` says `name` itself cannot be found (not a module it requires in turn). */
export function isMissingPackage(err: unknown, name: string): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.code !== 'MODULE_NOT_FOUND' && e?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  const first = String(e.message).split('\n')[0] ?? '';
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
