/**
 * What to fix when the CRM refuses the token: which environment variable holds it and, for a
 * refused permission, what the configured objects need (each vendor says: scopes, object permissions).
 */
import type { CrmError } from '../errors.js';
import { sectionOf, type Config } from './config.js';
import { vendorOf } from './vendors.js';

/** One line: what was refused and how to fix it. */
export function authFix(config: Config, error: CrmError): string {
  const v = vendorOf(config.crm);
  // The adapters append a generic hint ("Check that…", "Hint: …"); ours below is specific to this config.
  const said = error.message.replace(/^\[crm-upsert\] \[[^\]]+\] /, '').split(/\.\s+(?:Check|Hint)\b/)[0]!.slice(0, 400);
  const tokenRefused = v.auth.tokenRefused ? v.auth.tokenRefused(error) : error.status === 401;
  if (!tokenRefused) {
    return `${v.label} refused access${error.status ? ` (HTTP ${error.status})` : ''}: the token in ${v.tokenEnv} lacks permissions; ${v.auth.forbidden(sectionOf(config))}. ${v.label} said: ${said}`;
  }
  return `the token in ${v.tokenEnv} was refused by ${v.label}${error.status ? ` (HTTP ${error.status})` : ''}: set a current access token. ${v.label} said: ${said}`;
}
