/**
 * Optional peers of this entry, loaded on first use so that a user who needs only one verifier
 * installs only what that verifier needs.
 */
import { requireOptional } from '../optional-package.js';

/** `require(name)`, or a ConfigError naming the package and the install command when it is missing. */
export function loadPeer<T>(name: string, range: string, usedBy: string): T {
  return requireOptional<T>(name, `${usedBy} needs ${name} (${range}): npm install ${name}@${range}`);
}
