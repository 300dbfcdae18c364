/**
 * A request budget an adapter spends before every HTTP call, so a full sync stays under the
 * CRM's account limit instead of living on 429s. The in-process budget below sees only this
 * process; several workers share one through `crm-upsert-sync/rate-budget` (Redis or Postgres).
 */
import { announceWait, WaitKind } from './telemetry/waits.js';

export interface RateBudget {
  /** Resolves when `cost` more requests may be sent inside the budget. */
  acquire(cost?: number): Promise<void>;
}

export interface LocalRateBudgetOptions {
  /** Requests allowed per window. */
  points: number;
  /** Window length in ms (sliding). */
  durationMs: number;
  /**
   * Each send stays counted this much longer than `durationMs`. The CRM counts a request when it
   * arrives, not when it was sent, so without a margin send-time jitter draws 429s. Default 250.
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
  const sent: number[] = [];
  let queue: Promise<void> = Promise.resolve();

  const take = async (cost: number) => {
    for (;;) {
      const t = now();
      while (sent.length > 0 && sent[0]! <= t - durationMs) sent.shift();
      if (sent.length + cost <= points) {
        for (let i = 0; i < cost; i++) sent.push(t);
        return;
      }
      const oldest = sent[sent.length + cost - points - 1] ?? sent[0]!;
      const wait = Math.max(1, oldest + durationMs - t);
      announceBudgetWait(wait, options.label ?? 'rate budget');
      await sleep(wait);
    }
  };

  return {
    acquire(cost = 1) {
      // Serialised so that waiters are served in arrival order.
      const turn = queue.then(() => take(cost));
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

/** A budget that never waits (tests, or a CRM without a limit). */
export const unlimitedRateBudget: RateBudget = { acquire: async () => undefined };
