/**
 * The state of writing one batch: a result slot per group (one write each), which groups are still
 * open (no result yet, or a retryable failure), the attempts made and which groups a failure so
 * far may have written. Shared by the write, recover and split steps of one batch.
 */
import type { ActivityWrite, BatchContext, LinkRef, RecordWrite, WriteResult } from '../adapter.js';
import type { Batch } from '../batcher.js';
import { decodeMark } from './payloads.js';
import type { Held } from './types.js';

/** A group whose claim was lost while it waited: another worker holds it now. */
export type GroupResult = WriteResult | { ok: false; lost: true };

export const isLost = (r: GroupResult | undefined): r is { ok: false; lost: true } => r !== undefined && 'lost' in r;

/**
 * Which groups of a batch may have been written without the engine knowing it, shared by the
 * batch's attempts and halves (keyed by group). `suspect`: possibly written and not looked up
 * since; `inherited`: the part of that suspicion an earlier holder left (a takeover, a ledger that
 * cannot vouch for its history), which no request of this batch can clear by not sending.
 */
export interface Suspicion {
  readonly suspect: Set<Held[]>;
  readonly inherited: Set<Held[]>;
  /**
   * Parents (`parentMemoKey`s) known absent from a read before this batch (the memo's hold): not
   * read again, so their absence says nothing about a write made since. Every other absent parent
   * of the batch was read absent by it.
   */
  readonly heldAbsent: ReadonlySet<string>;
}

export interface Round {
  readonly batch: Batch<Held>;
  readonly groups: Held[][];
  readonly writes: (RecordWrite | ActivityWrite)[];
  readonly results: (GroupResult | undefined)[];
  /** What the adapter sees: the parent memo and the check before each send. */
  readonly context: BatchContext;
  readonly suspicion: Suspicion;
  attempts: number;
  /** Whether a write request of the current attempt got past `beforeSend` (a failure before that wrote nothing). */
  writeLeft: boolean;
  /** Indexes of groups still to write. */
  open(): number[];
  /** These groups (indexes) may have been written. */
  suspect(indexes: readonly number[]): void;
}

/** Writes merged into one, oldest event first, so the latest event's values win (input order breaks ties). */
export const inEventOrder = <T extends Pick<Held, 'at' | 'index'>>(group: readonly T[]): T[] => [...group].sort((a, b) => a.at - b.at || a.index - b.index);

/** The links of writes merged into one: every distinct link, in event order (linking only adds). */
function unionLinks(lists: readonly (readonly LinkRef[] | undefined)[]): { links?: LinkRef[] } {
  const seen = new Set<string>();
  const links: LinkRef[] = [];
  for (const list of lists) {
    for (const link of list ?? []) {
      const id = `${link.object}\u0000${link.externalId}`;
      if (!seen.has(id)) {
        seen.add(id);
        links.push(link);
      }
    }
  }
  return links.length > 0 ? { links } : {};
}

/** The record's CRM id from the marks the group's claims read (the same record, one mark), if one is known. */
function knownIdOf(group: readonly Held[]): { knownId?: string } {
  for (const item of group) {
    const id = item.mark === undefined ? null : decodeMark(item.mark).id;
    if (id !== null) return { knownId: id };
  }
  return {};
}

export function openRound(batch: Batch<Held>, groups: Held[][], context: BatchContext, suspicion: Suspicion): Round {
  const writes = groups.map((group) => {
    const lead = group[0]!;
    const ordered = inEventOrder(group);
    // What each sends: an upsert leaves out the fields a newer event already set (order.ts).
    const fields = Object.assign({}, ...ordered.map((i) => i.sends ?? i.action.fields)) as RecordWrite['fields'];
    const links = unionLinks(ordered.map((i) => i.action.links));
    return batch.op === 'upsert'
      ? ({ key: lead.key, object: batch.object, externalId: lead.action.externalId!, fields, ...links, ...knownIdOf(group), ...(group.some((i) => i.recovered) ? { mayExist: true } : {}) } satisfies RecordWrite)
      : ({ key: lead.key, object: batch.object, parent: lead.action.target!, fields, ...links } satisfies ActivityWrite);
  });
  const results: (GroupResult | undefined)[] = new Array(groups.length);
  const open = () => writes.map((_, i) => i).filter((i) => {
    const r = results[i];
    return !r || (!r.ok && !isLost(r) && r.error.retryable);
  });
  const suspect = (indexes: readonly number[]) => {
    for (const i of indexes) suspicion.suspect.add(groups[i]!);
  };
  return { batch, groups, writes, results, context, suspicion, attempts: 0, writeLeft: false, open, suspect };
}
