/**
 * The lease keeper: while a holder works, every claim it holds stays alive, and only then.
 *
 * One keeper per unit of work (an `applyMany` call, a `once` step, a `handle` event) renews the
 * ledger entries and pending dedupe-window slots it was given every lease/3, in one round trip
 * each, until they are dropped (settled) or the keeper stops. A refused renewal means the lease ran
 * out and another worker may hold the key now: that key is `lost`, and `confirm` (called before a
 * write leaves after a wait) reports it so nothing is sent under a lost claim. A renewal that
 * fails because the ledger is unreachable is retried on the next tick; the lease still has 2/3 left.
 */
import { LedgerError } from '../errors.js';
import type { LedgerBackend, TokenRef } from '../ledger/types.js';
import type { LedgerClock } from '../ledger/clock.js';

/** Thrown before a write leaves when a claim of its batch was lost meanwhile (nothing is sent). */
export class ClaimLostError extends LedgerError {
  readonly keys: string[];
  constructor(keys: string[]) {
    super(`${keys.length} claim(s) were lost while waiting to send (another worker holds them now); nothing was sent for them`);
    this.keys = keys;
  }
}

export interface LeaseKeeper {
  /** Keep these claims alive from now on. */
  hold(refs: readonly TokenRef[]): void;
  /** Keep these pending window slots alive (re-acquired by their owner, which extends them). */
  holdSlots(slots: readonly { id: string; owner: string }[]): void;
  /** Stop renewing (the claim was completed, failed or released). */
  drop(keys: readonly string[]): void;
  dropSlots(ids: readonly string[]): void;
  /** True once a renewal of `key` was refused. */
  lost(key: string): boolean;
  /**
   * Make sure these claims are still held: keys not confirmed within the last renewal interval
   * are renewed now (one round trip). Returns the keys that are no longer held.
   */
  confirm(keys: readonly string[]): Promise<Set<string>>;
  stop(): void;
}

export interface LeaseKeeperOptions {
  ledger: LedgerBackend;
  leaseMs: number;
  clock: LedgerClock;
  /** Renewal interval, ms. Default lease/3 (at least 20 ms). */
  intervalMs?: number;
}

export function leaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { ledger, leaseMs, clock } = options;
  const every = options.intervalMs ?? Math.max(20, Math.floor(leaseMs / 3));
  const tokens = new Map<string, number>();
  /** Ledger time of the last claim or renewal known to have succeeded, per key. */
  const confirmedAt = new Map<string, number>();
  const lostKeys = new Set<string>();
  const slots = new Map<string, string>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let ticking = false;

  const renew = async (keys: string[], now: number): Promise<void> => {
    const refs = keys.filter((k) => tokens.has(k) && !lostKeys.has(k)).map((key) => ({ key, token: tokens.get(key)! }));
    if (refs.length === 0) return;
    const held = await ledger.renew(refs, leaseMs, now);
    refs.forEach((r, i) => {
      if (!tokens.has(r.key)) return;
      if (held[i]) confirmedAt.set(r.key, now);
      else lostKeys.add(r.key);
    });
  };

  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      const now = await clock.now();
      await renew([...tokens.keys()], now);
      if (slots.size > 0) await ledger.windowAcquire([...slots].map(([id, owner]) => ({ id, owner, ttlMs: leaseMs })), now);
    } catch {
      // unreachable ledger: try again next tick
    } finally {
      ticking = false;
    }
  };

  const ensureTimer = () => {
    if (timer || (tokens.size === 0 && slots.size === 0)) return;
    timer = setInterval(() => void tick(), every);
    timer.unref();
  };

  return {
    hold(refs) {
      const at = clock.peek();
      for (const r of refs) {
        tokens.set(r.key, r.token);
        confirmedAt.set(r.key, at);
        lostKeys.delete(r.key);
      }
      ensureTimer();
    },
    holdSlots(list) {
      for (const s of list) slots.set(s.id, s.owner);
      ensureTimer();
    },
    drop(keys) {
      for (const k of keys) {
        tokens.delete(k);
        confirmedAt.delete(k);
      }
    },
    dropSlots(ids) {
      for (const id of ids) slots.delete(id);
    },
    lost: (key) => lostKeys.has(key),
    async confirm(keys) {
      const now = await clock.now();
      const stale = keys.filter((k) => tokens.has(k) && !lostKeys.has(k) && now - (confirmedAt.get(k) ?? -Infinity) >= every);
      await renew(stale, now);
      return new Set(keys.filter((k) => lostKeys.has(k)));
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      tokens.clear();
      slots.clear();
    },
  };
}
