/**
 * Leases are measured on the ledger's clock. A backend with `clock()` (Postgres, Redis) is asked
 * for its time; the caller's clock is offset by the difference (taken at the midpoint of the
 * round trip), so every worker passes the ledger's time as `now`, however far its own clock is
 * off. Skew between workers then cannot expire a live lease early. The offset is measured again
 * after `recalibrateMs` of real (monotonic) time, so an injected test clock that jumps keeps its
 * jumps. A backend without `clock()` (memory, SQLite) shares the machine's clock: `now` is used as it is.
 */
import type { LedgerBackend } from './types.js';

export interface LedgerClock {
  /** The ledger's time estimate, epoch ms; measures the offset first when it is due. */
  now(): Promise<number>;
  /** The last estimate without a round trip (for timers between ledger calls). */
  peek(): number;
}

export interface LedgerClockOptions {
  now: () => number;
  /** Measure the offset again after this much real time, ms. Default 60,000. */
  recalibrateMs?: number;
  monotonic?: () => number;
}

export function ledgerClock(ledger: Pick<LedgerBackend, 'clock'>, options: LedgerClockOptions): LedgerClock {
  const local = options.now;
  const monotonic = options.monotonic ?? (() => performance.now());
  const every = options.recalibrateMs ?? 60_000;
  let offset = 0;
  let measuredAt = -Infinity;
  let measuring: Promise<void> | undefined;

  const measure = async () => {
    const before = local();
    const started = monotonic();
    const remote = await ledger.clock!();
    const rtt = monotonic() - started;
    offset = Math.round(remote - (before + rtt / 2));
    measuredAt = monotonic();
  };

  return {
    async now() {
      if (ledger.clock && monotonic() - measuredAt >= every) {
        measuring ??= measure().finally(() => (measuring = undefined));
        await measuring;
      }
      return local() + offset;
    },
    peek: () => local() + offset,
  };
}
