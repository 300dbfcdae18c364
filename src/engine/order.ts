/**
 * Order over time: a record's field is not written by an event older than the one that last set it
 * through this ledger. The record's mark keeps, per field, the event time of the newest value
 * written (payloads.ts `RecordMark.t`); a claim reads it, and this stage takes out of each upsert
 * the fields a newer event already set:
 *
 *   every field newer in the mark, no links   -> `superseded`, nothing sent, 0 calls
 *   some fields newer                         -> the rest is sent; the outcome lists the others
 *   none (or a field the mark has no time for) -> sent as it is
 *
 * Equal times keep arrival order (the later arrival is written). Links only add, so an action with
 * links is never superseded whole. Within one write (several actions on one record in one call,
 * merged oldest event first), an action whose value a later one replaced with another value left
 * that field too (`leftToNewer`). Settling advances the times (`advancedTimes`): every field sent,
 * or possibly sent, takes the newer of its stored time and the event's.
 */
import { contentHash } from '../key.js';
import type { Outcome } from '../outcome.js';
import { extend } from '../extend.js';
import { decodeMark } from './payloads.js';
import { inEventOrder } from './round.js';
import type { Decided, EngineContext, Held, LeftToNewer, Planned } from './types.js';

/** What an upsert sends: its fields, less those a newer event set (the order stage). */
export const sendsOf = (item: Planned & { sends?: Held['sends'] }) => item.sends ?? item.action.fields;

/** Every field of the action was left to a newer value, and it links nothing: nothing of it stands. */
export function leftWhole(item: Planned, left: LeftToNewer | undefined): boolean {
  const fields = Object.keys(item.action.fields);
  if (!left || fields.length === 0 || (item.action.links?.length ?? 0) > 0) return false;
  return fields.every((f) => left.fields.includes(f));
}

/** An outcome's report of what was left to newer values. */
export const leftReport = (left: LeftToNewer | undefined): Pick<Outcome, 'superseded' | 'newerAt'> =>
  left && left.fields.length > 0 ? { superseded: [...left.fields], newerAt: new Date(left.newerAt).toISOString() } : {};

export function orderStage(ctx: EngineContext, held: readonly Held[]): { pass: Held[]; superseded: Decided[] } {
  if (ctx.order === 'arrival') return { pass: [...held], superseded: [] };
  const pass: Held[] = [];
  const superseded: Decided[] = [];
  for (const item of held) {
    const mark = item.op === 'upsert' && item.mark !== undefined ? decodeMark(item.mark) : undefined;
    const times = mark?.t;
    const fields = Object.keys(item.action.fields);
    const older = times ? fields.filter((f) => times[f] !== undefined && times[f]! > item.at) : [];
    if (older.length === 0) {
      pass.push(item);
      continue;
    }
    const left: LeftToNewer = { fields: older, newerAt: Math.max(...older.map((f) => times![f]!)) };
    if (leftWhole(item, left)) {
      const recordId = mark?.id ? { recordId: mark.id } : {};
      superseded.push({ item, outcome: { key: item.key, status: 'superseded', ...recordId, ...leftReport(left), attempts: 0 } });
      continue;
    }
    const sends = Object.fromEntries(Object.entries(item.action.fields).filter(([f]) => !older.includes(f)));
    // The mark's hash is of what the record holds from this write: the fields sent, not the action's.
    pass.push(extend(item, { sends, leftByTime: left, fieldHash: contentHash(sends, item.action.links) }));
  }
  return { pass, superseded };
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What each action of one write left to newer values: the fields the order stage took out, and
 * those a later action of the same write (event order, then arrival) set to another value.
 */
export function leftToNewer(group: readonly Held[]): Map<Held, LeftToNewer> {
  const ordered = inEventOrder(group);
  const out = new Map<Held, LeftToNewer>();
  ordered.forEach((item, k) => {
    const fields = [...(item.leftByTime?.fields ?? [])];
    let newerAt = item.leftByTime?.newerAt ?? -Infinity;
    for (const [field, value] of Object.entries(sendsOf(item))) {
      const later = ordered.slice(k + 1).filter((j) => Object.hasOwn(sendsOf(j), field) && !sameValue(sendsOf(j)[field], value));
      if (later.length === 0) continue;
      fields.push(field);
      newerAt = Math.max(newerAt, ...later.map((j) => j.at));
    }
    if (fields.length > 0) out.set(item, { fields, newerAt });
  });
  return out;
}

/**
 * The field times a record's mark takes from these settled writes (all of one record, of one
 * call): its stored times, each field sent advanced to its event's time where that is newer.
 * Kept under `order: 'arrival'` too (which only does not judge by them): a Sync in either mode
 * on the same ledger never erases what the other recorded.
 */
export function advancedTimes(items: readonly Held[]): Record<string, number> {
  const stored = items.find((i) => i.mark !== undefined);
  const times: Record<string, number> = { ...(stored ? decodeMark(stored.mark!).t : undefined) };
  for (const item of items) for (const field of Object.keys(sendsOf(item))) times[field] = Math.max(times[field] ?? -Infinity, item.at);
  return times;
}
