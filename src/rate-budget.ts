/**
 * A request budget an adapter spends before every HTTP call, so a full sync stays under the
 * CRM's account limit instead of living on 429s. The in-process budget below sees only this
 * process; several workers share one through `crm-upsert-sync/rate-budget` (Redis or Postgres).
 */
import { announceWait, WaitKind } from './telemetry/waits.js';

export interface RateBudget {
  /**
   * Resolves when `cost` more requests may be sent inside the budget. It may resolve with a
   * function for the sender to call when the request's answer (or its failure) arrives: the budget
   * then counts the request from that moment, which is never before the CRM counted it.
   */
  acquire(cost?: number): Promise<void | (() => void)>;
}

export interface LocalRateBudgetOptions {
  /** Requests allowed per window. */
  points: number;
  /** Window length in ms (sliding). */
  durationMs: number;
  /**
   * A request whose answer is never reported stays counted this much longer than `durationMs`
   * from when it was granted: the CRM counts a request when it arrives, not when it was sent, so
   * without a margin send-time jitter draws 429s. A request whose answer is reported (both built-in
   * adapters report every answer) is counted for `durationMs` from its answer, which already lies
   * after its arrival, so it needs no margin. Default 250.
   */
  marginMs?: number;
  /** Injected clock (ms). Default Date.now. */
  now?: () => number;
  /** Injected sleep. Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** What this budget stands for in a wait's description (`observeWaits`): `HubSpot ten-second limit`. Default `rate budget`. */
  label?: string;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Announce a budget wait to the listeners of the waiting call's scope (telemetry, the CLI's bar). */
export function announceBudgetWait(ms: number, label: string): void {
  announceWait({ ms, kind: WaitKind.budget, reason: label });
}

/** A sliding-window budget for one process: never more than `points` sends in any `durationMs`. */
export function localRateBudget(options: LocalRateBudgetOptions): RateBudget {
  const { points } = options;
  if (!(points > 0) || !(options.durationMs > 0)) throw new RangeError('rate budget needs points > 0 and durationMs > 0');
  const marginMs = options.marginMs ?? 250;
  if (!(marginMs >= 0) || !Number.isFinite(marginMs)) throw new RangeError('rate budget needs a finite marginMs >= 0');
  const durationMs = options.durationMs + marginMs;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  // Each grant counts until `until`: granted + window + margin, and once its answer is reported,
  // answered + window (the answer comes after the CRM counted the request), even when that is
  // later: a request slowed past the margin (a busy event loop, a slow connection) may have
  // reached the CRM after the margin ran out, so it counts again from its answer.
  const counted = new Set<{ until: number }>();
  let queue: Promise<() => void> = Promise.resolve(() => undefined);

  const take = async (cost: number): Promise<() => void> => {
    for (;;) {
      const t = now();
      for (const g of counted) if (g.until <= t) counted.delete(g);
      if (counted.size + cost <= points) {
        const grants = Array.from({ length: cost }, () => ({ until: t + durationMs }));
        for (const g of grants) counted.add(g);
        return () => {
          const answered = now() + options.durationMs;
          for (const g of grants) {
            g.until = answered;
            counted.add(g);
          }
        };
      }
      const ends = [...counted].map((g) => g.until).sort((a, b) => a - b);
      const wait = Math.max(1, ends[counted.size + cost - points - 1]! - t);
      announceBudgetWait(wait, options.label ?? 'rate budget');
      await sleep(wait);
    }
  };

  return {
    acquire(cost = 1) {
      if (cost > points) return Promise.reject(new RangeError(`a request costing ${cost} can never fit a budget of ${points}`));
      // Serialised so that waiters are served in arrival order.
      const turn = queue.then(() => take(cost));
      queue = turn.catch(() => () => undefined);
      return turn;
    },
  };
}

/** A budget that never waits (tests, or a CRM without a limit). */
export const unlimitedRateBudget: RateBudget = { acquire: async () => undefined };
