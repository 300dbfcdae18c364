/**
 * The one wait hook. A rate budget about to wait for room, or the engine about to honour a CRM's
 * Retry-After, announces the wait before it starts to every listener of the current async scope
 * (`observeWaits`). The telemetry's wait histogram and the CLI's progress bar both listen here, so
 * a wait is described once, where it happens, and nothing between the two needs to pass it along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export const WaitKind = {
  /** The request budget is spent: the budget waits until a request fits. */
  budget: 'budget',
  /** The CRM answered 429 with Retry-After: the engine waits that long before the retry. */
  retryAfter: 'retry_after',
} as const;
export type WaitKind = (typeof WaitKind)[keyof typeof WaitKind];

export interface RateWait {
  /** How long the wait lasts, ms (announced before it starts). */
  readonly ms: number;
  readonly kind: WaitKind;
  /** What is waited for, for people: `HubSpot ten-second limit`, `Retry-After from hubspot`. */
  readonly reason: string;
}

export type WaitListener = (wait: RateWait) => void;

const scope = new AsyncLocalStorage<readonly WaitListener[]>();

/**
 * Run `fn` with `listener` hearing every wait announced inside it (its awaits, timers and the
 * requests it makes), for as long as its async work lasts. Scopes nest: an outer listener hears
 * the waits of inner scopes too; a listener already listening is not added twice.
 */
export function observeWaits<T>(listener: WaitListener, fn: () => T): T {
  const outer = scope.getStore() ?? [];
  return outer.includes(listener) ? fn() : scope.run([...outer, listener], fn);
}

/** Tell the listeners of the current async scope about a wait that is about to start. */
export function announceWait(wait: RateWait): void {
  for (const listener of scope.getStore() ?? []) {
    try {
      listener(wait);
    } catch {
      // Observing a wait never breaks the run that waits.
    }
  }
}

/** `sleep`, announcing each call as a Retry-After wait of `crm` (the engine sleeps only for those). */
export function announcingRetryAfter(sleep: (ms: number) => Promise<void>, crm: string): (ms: number) => Promise<void> {
  return (ms) => {
    announceWait({ ms, kind: WaitKind.retryAfter, reason: `Retry-After from ${crm}` });
    return sleep(ms);
  };
}
