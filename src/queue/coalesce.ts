/**
 * Group commit for a worker process: the actions of jobs running at the same time go to the CRM
 * in one `applyMany`. A call waits at most `lingerMs` for company (less when every running job has
 * handed its actions in), and one coalesced call is in flight at a time: what arrives meanwhile
 * rides the next one. With one call in flight, the adapter's request count before and after it is
 * exactly that call's, so each part gets its share of the CRM calls (the shares add up exactly).
 */
import type { Outcome } from '../outcome.js';

export interface CoalescerOptions {
  /** The engine's applyMany (records before activities inside it, in-call repeats, batching). */
  applyMany(actions: readonly unknown[]): Promise<Outcome[]>;
  /** Longest wait for more actions after the first one arrives, ms. Default 20. */
  lingerMs?: number;
  /** Most actions in one call; a part is never split. Default 1,000. */
  maxActions?: number;
  /** CRM requests sent so far (the adapter's `apiCalls`), to share each call's requests among its parts. */
  apiCalls?: () => number;
  /** How many callers are running (jobs that may still hand actions in); when all of them wait here, the call leaves at once. */
  expected?: () => number;
}

export interface CoalescedResult {
  outcomes: Outcome[];
  /** This part's share of the CRM requests of the call it rode (proportional to its actions). */
  apiCalls: number;
}

export interface Coalescer {
  /** Apply `actions` in the next coalesced call; outcomes in input order. */
  run(actions: readonly unknown[]): Promise<CoalescedResult>;
  /** `run` returning the outcomes only: a drop-in applyMany. */
  applyMany(actions: readonly unknown[]): Promise<Outcome[]>;
  /** Parts waiting or in flight. */
  pending(): number;
}

interface Part {
  actions: readonly unknown[];
  resolve(result: CoalescedResult): void;
  reject(err: unknown): void;
}

/** Split `total` in proportion to `sizes`, rounding so the shares add up to `total` (largest remainder). */
export function shares(total: number, sizes: readonly number[]): number[] {
  const sum = sizes.reduce((a, b) => a + b, 0);
  if (sum === 0 || total === 0) return sizes.map(() => 0);
  const exact = sizes.map((s) => (total * s) / sum);
  const out = exact.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => [e - Math.floor(e), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) {
    if (left <= 0) break;
    out[i]! += 1;
    left -= 1;
  }
  return out;
}

export function coalescer(options: CoalescerOptions): Coalescer {
  const lingerMs = options.lingerMs ?? 20;
  const maxActions = options.maxActions ?? 1_000;
  const waiting: Part[] = [];
  let inFlight: Part[] = [];
  let timer: NodeJS.Timeout | undefined;
  let due = false;

  const size = () => waiting.reduce((n, p) => n + p.actions.length, 0);
  const everyoneIn = () => options.expected !== undefined && waiting.length >= options.expected() - inFlight.length;

  function take(): Part[] {
    const parts: Part[] = [];
    let n = 0;
    while (waiting.length > 0 && (parts.length === 0 || n + waiting[0]!.actions.length <= maxActions)) {
      const p = waiting.shift()!;
      n += p.actions.length;
      parts.push(p);
    }
    return parts;
  }

  async function send(parts: Part[]): Promise<void> {
    const before = options.apiCalls?.() ?? 0;
    let outcomes: Outcome[];
    try {
      outcomes = await options.applyMany(parts.flatMap((p) => p.actions));
    } catch (err) {
      inFlight = [];
      for (const p of parts) p.reject(err);
      return;
    }
    // Settled before the callers resume: what they do next sees no call in flight.
    inFlight = [];
    const calls = shares((options.apiCalls?.() ?? 0) - before, parts.map((p) => p.actions.length));
    let at = 0;
    parts.forEach((p, i) => {
      p.resolve({ outcomes: outcomes.slice(at, at + p.actions.length), apiCalls: calls[i]! });
      at += p.actions.length;
    });
  }

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    if (inFlight.length > 0) {
      // The linger ran out (or the call is full) while the previous call was out: go when it is back.
      due = true;
      return;
    }
    due = false;
    if (waiting.length === 0) return;
    inFlight = take();
    void send(inFlight).finally(() => {
      if (waiting.length === 0) return;
      if (due || size() >= maxActions || everyoneIn()) flush();
      else timer ??= setTimeout(flush, lingerMs);
    });
  }

  function run(actions: readonly unknown[]): Promise<CoalescedResult> {
    if (actions.length === 0) return Promise.resolve({ outcomes: [], apiCalls: 0 });
    return new Promise<CoalescedResult>((resolve, reject) => {
      waiting.push({ actions, resolve, reject });
      if (size() >= maxActions || everyoneIn()) flush();
      else timer ??= setTimeout(flush, lingerMs);
    });
  }

  return {
    run,
    applyMany: async (actions) => (await run(actions)).outcomes,
    pending: () => waiting.length + inFlight.length,
  };
}
