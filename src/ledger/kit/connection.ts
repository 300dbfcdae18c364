/**
 * A backend's client, owned or borrowed: built from a URL (the ledger owns it: `release()` ends
 * it, and the URL's password is registered as a secret so no error or report prints it), or
 * passed in (the caller keeps it: `release()` leaves it open).
 */
import { ConfigError, registerSecret } from '../../errors.js';

/** The event an idle connection reports a lost server with. */
export interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

export interface Connection<C> {
  client: C;
  /** Ends the client when the ledger built it, once; a borrowed client stays open. */
  release(): Promise<void>;
}

export interface ConnectOptions<C, Owned extends C & ErrorEmitter> {
  /** The caller's client, when given: borrowed. */
  given: C | undefined;
  /** Otherwise, the URL to build one from (it may be in a driver's own non-URL form). */
  url: string | undefined;
  build(url: string): Owned;
  end(client: Owned): Promise<void>;
  /** The ConfigError message when neither is given. */
  missing: string;
}

export function connect<C, Owned extends C & ErrorEmitter>(options: ConnectOptions<C, Owned>): Connection<C> {
  if (options.given) return { client: options.given, release: async () => undefined };
  if (!options.url) throw new ConfigError(options.missing);
  try {
    registerSecret(decodeURIComponent(new URL(options.url).password));
  } catch {
    // not a URL (a driver's key=value form): the driver reports problems itself
  }
  let owned: Owned | undefined = options.build(options.url);
  // Connection errors surface on the commands that fail; the event alone must not crash the process.
  owned.on('error', () => undefined);
  const client: C = owned;
  return {
    client,
    release: async () => {
      const ending = owned;
      owned = undefined;
      if (ending) await options.end(ending);
    },
  };
}
