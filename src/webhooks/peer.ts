/**
 * Optional peers of this entry, loaded on first use so that a user who needs only one verifier
 * installs only what that verifier needs.
 */
import { createRequire } from 'node:module';
import { ConfigError } from '../errors.js';

const require = createRequire(import.meta.url);

/** `require(name)`, or a ConfigError naming the package and the install command when it is missing. */
export function loadPeer<T>(name: string, range: string, usedBy: string): T {
  try {
    return require(name) as T;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'MODULE_NOT_FOUND' && new RegExp(`['"]${name}['"]`).test((err as Error).message)) {
      throw new ConfigError(`${usedBy} needs ${name} (${range}): npm install ${name}@${range}`, { cause: err });
    }
    throw err;
  }
}
