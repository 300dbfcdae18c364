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
   * (or within `maxAgeMs`, when shorter) are renewed now (one round trip). Returns the keys that
   * are no longer held.
   */
  confirm(keys: readonly string[], maxAgeMs?: number): Promise<Set<string>>;
  stop(): void;
}

export interface LeaseKeeperOptions {
  ledger: LedgerBackend;
  leaseMs: number;
  clock: LedgerClock;
  /** Renewal interval, ms. Default lease/3 (at least 20 ms). */
  intervalMs?: number;
}

/** What one keeper holds: claim tokens, when each was last confirmed (ledger time), the lost ones, window slots. */
interface Holdings {
  tokens: Map<string, number>;
  confirmedAt: Map<string, number>;
  lost: Set<string>;
  slots: Map<string, string>;
}

/** Renew `keys` in one round trip; a refused renewal marks the key lost. */
async function renewKeys(o: LeaseKeeperOptions, h: Holdings, keys: readonly string[], now: number): Promise<void> {
  const refs = keys.filter((k) => h.tokens.has(k) && !h.lost.has(k)).map((key) => ({ key, token: h.tokens.get(key)! }));
  if (refs.length === 0) return;
  const held = await o.ledger.renew(refs, o.leaseMs, now);
  refs.forEach((r, i) => {
    if (!h.tokens.has(r.key)) return;
    if (held[i]) h.confirmedAt.set(r.key, now);
    else h.lost.add(r.key);
  });
}

/** One renewal pass over everything held: entries, then pending window slots (re-acquired by their owner). */
async function renewAll(o: LeaseKeeperOptions, h: Holdings): Promise<void> {
  try {
    const now = await o.clock.now();
    await renewKeys(o, h, [...h.tokens.keys()], now);
    if (h.slots.size > 0) await o.ledger.windowAcquire([...h.slots].map(([id, owner]) => ({ id, owner, ttlMs: o.leaseMs })), now);
  } catch {
    // unreachable ledger: try again next tick
  }
}

export function leaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const every = options.intervalMs ?? Math.max(20, Math.floor(options.leaseMs / 3));
  const h: Holdings = { tokens: new Map(), confirmedAt: new Map(), lost: new Set(), slots: new Map() };
  let timer: ReturnType<typeof setInterval> | undefined;
  let ticking = false;
  const ensureTimer = () => {
    if (timer || (h.tokens.size === 0 && h.slots.size === 0)) return;
    timer = setInterval(() => {
      if (ticking) return;
      ticking = true;
      void renewAll(options, h).finally(() => (ticking = false));
    }, every);
    timer.unref();
  };
  return {
    hold(refs) {
      const at = options.clock.peek();
      for (const r of refs) {
        h.tokens.set(r.key, r.token);
        h.confirmedAt.set(r.key, at);
        h.lost.delete(r.key);
      }
      ensureTimer();
    },
    holdSlots(list) {
      for (const s of list) h.slots.set(s.id, s.owner);
      ensureTimer();
    },
    drop(keys) {
      for (const k of keys) {
        h.tokens.delete(k);
        h.confirmedAt.delete(k);
      }
    },
    dropSlots: (ids) => ids.forEach((id) => h.slots.delete(id)),
    lost: (key) => h.lost.has(key),
    async confirm(keys, maxAgeMs) {
      const now = await options.clock.now();
      const age = Math.min(every, maxAgeMs ?? every);
      const stale = keys.filter((k) => h.tokens.has(k) && !h.lost.has(k) && now - (h.confirmedAt.get(k) ?? -Infinity) >= age);
      await renewKeys(options, h, stale, now);
      return new Set(keys.filter((k) => h.lost.has(k)));
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      h.tokens.clear();
      h.slots.clear();
    },
  };
}
