/**
 * The state of writing one batch: a result slot per group (one write each), which groups are still
 * open (no result yet, or a retryable failure), the attempts made and whether any failure so far
 * may have reached the CRM. Shared by the write, recover and split steps of one batch.
 */
import type { ActivityWrite, BatchContext, RecordWrite, WriteResult } from '../adapter.js';
import type { Batch } from '../batcher.js';
import type { Held } from './types.js';

/** A group whose claim was lost while it waited: another worker holds it now. */
export type GroupResult = WriteResult | { ok: false; lost: true };

export const isLost = (r: GroupResult | undefined): r is { ok: false; lost: true } => r !== undefined && 'lost' in r;

export interface Round {
  readonly batch: Batch<Held>;
  readonly groups: Held[][];
  readonly writes: (RecordWrite | ActivityWrite)[];
  readonly results: (GroupResult | undefined)[];
  /** What the adapter sees: the parent memo and the check before each send. */
  readonly context: BatchContext;
  attempts: number;
  ambiguous: boolean;
  /** Whether a write request of the current attempt got past `beforeSend` (a failure before that wrote nothing). */
  writeLeft: boolean;
  /** Indexes of groups still to write. */
  open(): number[];
}

export function openRound(batch: Batch<Held>, groups: Held[][], context: BatchContext, ambiguous: boolean): Round {
  const writes = groups.map((group) => {
    const lead = group[0]!;
    const fields = Object.assign({}, ...group.map((i) => i.action.fields)) as RecordWrite['fields'];
    return batch.op === 'upsert'
      ? ({ key: lead.key, object: batch.object, externalId: lead.action.externalId!, fields } satisfies RecordWrite)
      : ({ key: lead.key, object: batch.object, parent: lead.action.target!, fields } satisfies ActivityWrite);
  });
  const results: (GroupResult | undefined)[] = new Array(groups.length);
  const open = () => writes.map((_, i) => i).filter((i) => {
    const r = results[i];
    return !r || (!r.ok && !isLost(r) && r.error.retryable);
  });
  return { batch, groups, writes, results, context, attempts: 0, ambiguous, writeLeft: false, open };
}
