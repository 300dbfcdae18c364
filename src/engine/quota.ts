/**
 * The quota pause: after a quota error (HubSpot's daily limit, Salesforce's org allocation) this
 * `Sync` sends nothing to the CRM until the quota resets (the error's Retry-After, else
 * `pauseMs`), so a spent quota costs one refused call, not a retry storm.
 */
import type { CrmError } from '../errors.js';

export interface QuotaPause {
  /** Throws the quota error while paused. */
  check(): void;
  /** Start a pause if `error` is a quota error and none is running. */
  note(error: CrmError): void;
}

export function quotaPause(options: { now: () => number; pauseMs: number }): QuotaPause {
  let stopped: { error: CrmError; until: number } | undefined;
  const active = () => stopped !== undefined && options.now() < stopped.until;
  return {
    check() {
      if (active()) throw stopped!.error;
    },
    note(error) {
      if (error.kind === 'quota' && !active()) stopped = { error, until: options.now() + (error.retryAfterMs ?? options.pauseMs) };
    },
  };
}
