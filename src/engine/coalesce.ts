/**
 * DataLoader-style coalescing of ledger calls: the items asked for while one linger runs go to the
 * ledger as one batch (one round trip), and each caller gets its own item's answer. Linger 0 is
 * the current tick: every call issued before the event loop turns (Promise.all of many `once`
 * calls, the workers a completed batch wakes up together) shares the batch.
 */
export type Coalesced<Q, R> = (item: Q) => Promise<R>;

interface Waiting<Q, R> {
  item: Q;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export function coalesce<Q, R>(run: (items: Q[]) => Promise<readonly R[]>, lingerMs = 0): Coalesced<Q, R> {
  let waiting: Waiting<Q, R>[] = [];
  const flush = () => {
    const batch = waiting;
    waiting = [];
    // A failing batch fails every caller in it: none of their items is known to have been stored.
    run(batch.map((w) => w.item)).then(
      (results) => batch.forEach((w, i) => w.resolve(results[i]!)),
      (err: unknown) => batch.forEach((w) => w.reject(err)),
    );
  };
  return (item) => new Promise<R>((resolve, reject) => {
    if (waiting.length === 0) {
      if (lingerMs > 0) setTimeout(flush, lingerMs);
      else setImmediate(flush);
    }
    waiting.push({ item, resolve, reject });
  });
}
