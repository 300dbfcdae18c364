/**
 * Whether a Redis server keeps a completed entry through a restart (AOF) and memory pressure
 * (`maxmemory-policy noeviction`), as its INFO says.
 */
import { ledgerFailure } from '../kit/index.js';

/** The INFO commands the probe sends. */
export interface InfoClient {
  info(section: string): Promise<string>;
}

/** INFO fields that make a completed entry survive a restart (AOF) and memory pressure (no eviction). */
export const isDurableInfo = (persistence: string, memory: string): boolean =>
  /^aof_enabled:1\r?$/m.test(persistence) && /^maxmemory_policy:noeviction\r?$/m.test(memory);

/**
 * `isDurable()` for `client`: `configured` when given, else asked once and remembered. A server
 * that refuses INFO cannot vouch for itself: not durable, and no point asking again; any other
 * failure is thrown and asked again next time.
 */
export function durabilityProbe(client: InfoClient, configured: boolean | undefined): () => Promise<boolean> {
  let durable = configured === undefined ? undefined : Promise.resolve(configured);
  return () => {
    durable ??= Promise.all([client.info('persistence'), client.info('memory')]).then(
      ([persistence, memory]) => isDurableInfo(persistence, memory),
      (err: unknown) => {
        if (/unknown command|NOPERM|no permissions/i.test((err as Error).message)) return false;
        durable = undefined;
        throw ledgerFailure('redis', 'isDurable', err);
      },
    );
    return durable;
  };
}
