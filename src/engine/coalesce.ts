/**
 * DataLoader-style coalescing of ledger calls: the items asked for while one linger runs go to the
 * ledger as one batch (one round trip), and each caller gets its own item's answer. Linger 0 is
 * the current tick: every call issued before the event loop turns (Promise.all of many `once`
 * calls, the workers a completed batch wakes up together) shares the batch. While a batch is in
 * flight the next one gathers, and leaves when the first returns: at most one round trip of a
 * kind is outstanding, so callers that drift apart still share theirs.
 */
export type Coalesced<Q, R> = (item: Q) => Promise<R>;

interface Waiting<Q, R> {
  item: Q;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export function coalesce<Q, R>(run: (items: Q[]) => Promise<readonly R[]>, lingerMs = 0): Coalesced<Q, R> {
  let waiting: Waiting<Q, R>[] = [];
  let scheduled = false;
  let inFlight = false;
  const schedule = () => {
    if (scheduled || inFlight || waiting.length === 0) return;
    scheduled = true;
    if (lingerMs > 0) setTimeout(flush, lingerMs);
    else setImmediate(flush);
  };
  function flush() {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    inFlight = true;
    // A failing batch fails every caller in it: none of their items is known to have been stored.
    run(batch.map((w) => w.item)).then(
      (results) => batch.forEach((w, i) => w.resolve(results[i]!)),
      (err: unknown) => batch.forEach((w) => w.reject(err)),
    ).finally(() => {
      inFlight = false;
      schedule();
    });
  }
  return (item) => new Promise<R>((resolve, reject) => {
    waiting.push({ item, resolve, reject });
    schedule();
  });
}
