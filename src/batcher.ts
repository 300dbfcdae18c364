/**
 * Batching: group by (object, op), merge writes to the same record, cut at the adapter's maximum.
 * Record upserts come before the activities that attach to them.
 */

export interface Batchable {
  op: 'upsert' | 'create';
  object: string;
  /** Writes with the same coalesce id (same record) travel as one write. */
  coalesceId?: string;
}

export interface Batch<T> {
  op: 'upsert' | 'create';
  object: string;
  /** Each group is one write: the first item leads, the rest are merged into it. */
  groups: T[][];
}

export function planBatches<T extends Batchable>(items: readonly T[], maxBatch: number): Batch<T>[] {
  if (!(maxBatch >= 1)) throw new RangeError('maxBatch must be at least 1');
  const byObject = new Map<string, { op: T['op']; object: string; groups: T[][]; index: Map<string, T[]> }>();
  for (const item of items) {
    const id = `${item.op}\u0000${item.object}`;
    let bucket = byObject.get(id);
    if (!bucket) {
      bucket = { op: item.op, object: item.object, groups: [], index: new Map() };
      byObject.set(id, bucket);
    }
    const existing = item.coalesceId === undefined ? undefined : bucket.index.get(item.coalesceId);
    if (existing) {
      existing.push(item);
    } else {
      const group = [item];
      bucket.groups.push(group);
      if (item.coalesceId !== undefined) bucket.index.set(item.coalesceId, group);
    }
  }
  const ordered = [...byObject.values()].sort((a, b) => (a.op === b.op ? 0 : a.op === 'upsert' ? -1 : 1));
  const batches: Batch<T>[] = [];
  for (const bucket of ordered) {
    for (let i = 0; i < bucket.groups.length; i += maxBatch) {
      batches.push({ op: bucket.op, object: bucket.object, groups: bucket.groups.slice(i, i + maxBatch) });
    }
  }
  return batches;
}
