/**
 * The record store both fake CRMs keep their objects in: records by id in insertion order, plus
 * secondary indexes (value key -> ids) so that lookups by a unique property, an external id, a
 * key property or a parent cost the same in a store of ten records or a million.
 *
 * An index holds whatever key its function gives a record (undefined: not indexed), so a caller
 * chooses exact or case-folded matching and filters the few candidates by its own rule.
 * Candidates come back in insertion order, the order a scan of `values()` would find them in.
 */

/** The key a record is indexed under, or undefined when the record has none. */
export type IndexKey<R> = (record: R) => string | undefined;

interface Index<R> {
  key: IndexKey<R>;
  // One id, or a set when several records share a key: most keys in a fake are unique.
  buckets: Map<string, string | Set<string>>;
}

export class RecordStore<R> {
  private readonly byId = new Map<string, R>();
  private readonly order = new Map<string, number>();
  private readonly indexes = new Map<string, Index<R>>();
  private nextOrder = 0;
  private journal: Array<{ id: string; before: R | undefined }> | null = null;

  constructor(private readonly idOf: (record: R) => string) {}

  get size(): number {
    return this.byId.size;
  }

  get(id: string): R | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Every record, oldest first. */
  values(): IterableIterator<R> {
    return this.byId.values();
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /** Index records under `name` by `key` (once: an existing index of that name is kept). */
  ensureIndex(name: string, key: IndexKey<R>): void {
    if (this.indexes.has(name)) return;
    const index: Index<R> = { key, buckets: new Map() };
    for (const [id, record] of this.byId) this.link(index, key(record), id);
    this.indexes.set(name, index);
  }

  /** Records whose `name` key is `key`, oldest first (empty when there is no such index). */
  lookup(name: string, key: string): R[] {
    const bucket = this.indexes.get(name)?.buckets.get(key);
    if (bucket === undefined) return [];
    if (typeof bucket === 'string') return [this.byId.get(bucket)!];
    return [...bucket].sort((a, b) => this.order.get(a)! - this.order.get(b)!).map((id) => this.byId.get(id)!);
  }

  /** Stored records without repeats, oldest first (to merge several lookups). */
  oldestFirst(records: Iterable<R>): R[] {
    const byId = new Map<string, R>();
    for (const r of records) byId.set(this.idOf(r), r);
    return [...byId].sort(([a], [b]) => this.order.get(a)! - this.order.get(b)!).map(([, r]) => r);
  }

  /** Insert a new record or replace the one with its id (which keeps its place in the order). */
  put(record: R): void {
    const id = this.idOf(record);
    const before = this.byId.get(id);
    this.journal?.push({ id, before });
    for (const index of this.indexes.values()) {
      const was = before === undefined ? undefined : index.key(before);
      const now = index.key(record);
      if (was === now && before !== undefined) continue;
      if (was !== undefined) this.unlink(index, was, id);
      this.link(index, now, id);
    }
    if (before === undefined) this.order.set(id, this.nextOrder++);
    this.byId.set(id, record);
  }

  /** Change a stored record in place; its index entries follow the change. */
  update(record: R, change: (record: R) => void): void {
    const id = this.idOf(record);
    const was = [...this.indexes.values()].map((index) => index.key(record));
    change(record);
    let n = 0;
    for (const index of this.indexes.values()) {
      const old = was[n++];
      const now = index.key(record);
      if (old === now) continue;
      if (old !== undefined) this.unlink(index, old, id);
      this.link(index, now, id);
    }
  }

  delete(id: string): void {
    const before = this.byId.get(id);
    if (before === undefined) return;
    this.journal?.push({ id, before });
    for (const index of this.indexes.values()) {
      const was = index.key(before);
      if (was !== undefined) this.unlink(index, was, id);
    }
    this.byId.delete(id);
    this.order.delete(id);
  }

  /**
   * Record every `put` and `delete` from now on; the returned function undoes them (newest
   * first), leaving the store, its order and its indexes as they were. For all-or-none writes.
   * Only records replaced with `put` can be restored: `update` changes a record in place.
   */
  beginUndo(): () => void {
    const journal: Array<{ id: string; before: R | undefined }> = [];
    this.journal = journal;
    return () => {
      this.journal = null;
      for (const { id, before } of journal.reverse()) {
        if (before === undefined) this.delete(id);
        else this.put(before);
      }
    };
  }

  /** Stop recording for `beginUndo` (the writes stand). */
  endUndo(): void {
    this.journal = null;
  }

  private link(index: Index<R>, key: string | undefined, id: string): void {
    if (key === undefined) return;
    const bucket = index.buckets.get(key);
    if (bucket === undefined) index.buckets.set(key, id);
    else if (typeof bucket === 'string') {
      if (bucket !== id) index.buckets.set(key, new Set([bucket, id]));
    } else bucket.add(id);
  }

  private unlink(index: Index<R>, key: string, id: string): void {
    const bucket = index.buckets.get(key);
    if (bucket === undefined) return;
    if (typeof bucket === 'string') {
      if (bucket === id) index.buckets.delete(key);
      return;
    }
    bucket.delete(id);
    if (bucket.size === 1) index.buckets.set(key, bucket.values().next().value!);
  }
}
