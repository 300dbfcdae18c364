/**
 * Stage 2, in-call repeats: the same key twice in one call is one action. The first occurrence
 * leads and goes to the ledger; the others follow its outcome (`replayed`, or `suppressed` for
 * keyless actions, once the leader wrote or found it).
 *
 * One key, one action: actions of one call (or one event's handler) that share a key but not
 * what they write are refused first, all of them (`sharedKeyClashes`).
 */
import type { Action } from '../../schemas/action.js';
import { ValidationError } from '../errors.js';
import { contentHash } from '../key.js';
import type { Outcome, OutcomeStatus } from '../outcome.js';
import { WRITTEN, type Planned } from './types.js';

/**
 * What a call does with actions that share a key but differ in their fields or links. `reject`:
 * the call is one set of actions (one event's), so two of them under one key are two different
 * actions the key cannot tell apart; none of them is written. `replay`: the call carries several
 * deliveries (a file's lines, a queue's jobs), so a later one is the same event delivered again,
 * `replayed` like a redelivery in another call.
 */
export type SharedKeys = 'reject' | 'replay';

/** An action of a call with its key, as prepared (normalized, links merged). */
export interface KeyedItem {
  readonly index: number;
  readonly key: string;
  readonly action: Action;
}

/**
 * The actions of one call that share a key while their content (fields and links as written:
 * after normalization, links as a set) differs, each with its `rejected` outcome: nothing is
 * claimed or written for any of them, since which one was meant cannot be known. Actions
 * identical in content stay one action. Keyless creates are left to the dedupe window, which
 * takes creates of one identity close in time as one, never looking at their text.
 */
export function sharedKeyClashes<T extends KeyedItem>(items: readonly T[]): { pass: T[]; clashed: { item: T; outcome: Outcome }[] } {
  const byKey = new Map<string, T[]>();
  for (const item of items) {
    if (item.action.eventId === undefined && item.action.op === 'create') continue;
    const same = byKey.get(item.key);
    if (same) same.push(item);
    else byKey.set(item.key, [item]);
  }
  const clashed: { item: T; outcome: Outcome }[] = [];
  const out = new Set<number>();
  for (const [key, same] of byKey) {
    if (same.length < 2) continue;
    const contents = new Set(same.map((i) => contentHash(i.action.fields, i.action.links)));
    if (contents.size < 2) continue;
    const indexes = same.map((i) => i.index);
    const which = `${indexes.slice(0, -1).join(', ')} and ${indexes.at(-1)}`;
    const error = new ValidationError([{
      path: 'intent',
      message: `actions ${which} share the key ${key} but not their fields or links, so ${same.length === 2 ? 'neither' : 'none of them'} is written: give each its own intent (identical actions are one)`,
    }]).toJSON();
    for (const item of same) {
      out.add(item.index);
      clashed.push({ item, outcome: { key, status: 'rejected', error, attempts: 0 } });
    }
  }
  if (clashed.length === 0) return { pass: [...items], clashed };
  return { pass: items.filter((i) => !out.has(i.index)), clashed };
}

export function splitRepeats(planned: readonly Planned[]): { leaders: Planned[]; repeats: { item: Planned; leader: Planned }[] } {
  const byKey = new Map<string, Planned>();
  const leaders: Planned[] = [];
  const repeats: { item: Planned; leader: Planned }[] = [];
  for (const item of planned) {
    const leader = byKey.get(item.key);
    if (leader) repeats.push({ item, leader });
    else {
      byKey.set(item.key, item);
      leaders.push(item);
    }
  }
  return { leaders, repeats };
}

export function repeatOutcome(item: Planned, lead: Outcome): Outcome {
  const done = WRITTEN.has(lead.status) || lead.status === 'superseded' || lead.status === 'replayed' || lead.status === 'suppressed';
  const status: OutcomeStatus = done ? (item.keyless ? 'suppressed' : 'replayed') : lead.status;
  return { ...lead, status, attempts: 0 };
}
