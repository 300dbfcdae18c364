/**
 * The dedupe window, on event time: a create with no event id is suppressed when an identical
 * create on the same record has an event time (`occurredAt`) within `windowMs` of its own.
 * Identity is (crm, object, target record, intent), never the model text. Keyless upserts are not
 * windowed: their external id is their key, and a changed value is an update.
 *
 * Event time is cut into cells of `windowMs`: two creates within the window of each other are in
 * the same cell or in neighbouring ones. A create takes a pending slot in its own cell (held for
 * the claim's lease, renewed by the lease keeper while it writes) and probes the two neighbours;
 * a slot names its owner's process, key and event time, so a holder whose event is farther than
 * the window does not count. The slot is confirmed (kept for `keepMs`) only once the CRM confirmed
 * the write; a failed write releases it, so the retry is not suppressed. Creates without
 * `occurredAt` (only with `requireOccurredAt: false`) use the time they are applied, which is all
 * the window can protect them by.
 *
 * A pending slot whose process is dead on this host (src/owner.ts) never makes a create wait out
 * its lease: it is passed over at once (the candidate's own cell is taken over), and the dead
 * holder's key is handed back so its create, which may have committed, is looked up first. A dead
 * holder's slot in a neighbouring cell is left as it is: until it runs out, every identical create
 * near it looks that key up too.
 */
import { createHash } from 'node:crypto';
import type { LedgerBackend, WindowAcquireRequest, WindowSlot } from './ledger/types.js';
import type { KeyedAction } from './key.js';
import { isDeadLocalOwner, ownerId } from './owner.js';

/** The slot family of an action's identity (cells are appended). */
export function windowId(crm: string, action: KeyedAction): string {
  const record = action.op === 'upsert' ? `${action.object}:${action.externalId ?? ''}` : `${action.target?.object}:${action.target?.externalId}`;
  const identity = JSON.stringify([crm, action.object, record, action.op, action.intent ?? '']);
  return `w2:${createHash('sha256').update(identity).digest('base64url').slice(0, 40)}`;
}

export type WindowVerdict = 'go' | 'suppressed' | 'in_flight';

export interface WindowCandidate {
  /** `windowId()` of the action. */
  id: string;
  /** The action's key: the slot's owner. */
  key: string;
  /** Event time, epoch ms. */
  at: number;
}

export interface HeldSlot {
  id: string;
  owner: string;
}

/** What a candidate's acquire answers; `slot` and `takenOver` come with `go` only. */
export interface WindowAnswer {
  verdict: WindowVerdict;
  /** The pending slot the candidate holds until `settle`. */
  slot?: HeldSlot;
  /**
   * Keys of dead local holders of pending slots within the window that this `go` passed over:
   * identical creates that may have committed, to look up before creating. Absent when none.
   */
  takenOver?: string[];
}

export interface DedupeWindow {
  readonly windowMs: number;
  /**
   * One round trip (one more when a slot taken must be given back, two more when a dead holder's
   * slot is taken over): a verdict per candidate, and for each `go` the slot it holds until `settle`.
   */
  acquire(candidates: readonly WindowCandidate[], now: number): Promise<WindowAnswer[]>;
  /** One round trip: confirm the slots of written actions, release the others. */
  settle(items: readonly { slot: HeldSlot; written: boolean }[], now: number): Promise<void>;
}

export interface DedupeWindowOptions {
  windowMs: number;
  /** How long a pending (unconfirmed) hold lasts: the claim lease. */
  pendingMs: number;
  /** How long a confirmed slot is kept, so a late neighbour is still caught. At least windowMs. */
  keepMs: number;
}

/** Who holds a slot, as its owner names it. */
export interface SlotHolder {
  key: string;
  /** Event time, epoch ms. */
  at: number;
  /** `host pid start` (src/owner.ts); absent in a slot stored without it. */
  process?: string;
}

/**
 * A slot's owner: the holding process, then the holder's key and event time (`key@at`). Slots
 * stored before the process was recorded are `key@at` alone. The event time stays after the last
 * `@`, where every version reads it, so no stored slot needs migrating.
 */
export const slotOwner = (key: string, at: number, process: string = ownerId()): string => `${process} ${key}@${at}`;

export function parseSlotOwner(owner: string): SlotHolder {
  const space = owner.lastIndexOf(' ');
  const action = owner.slice(space + 1);
  const sign = action.lastIndexOf('@');
  return { key: action.slice(0, sign), at: Number(action.slice(sign + 1)), ...(space > 0 ? { process: owner.slice(0, space) } : {}) };
}

const ownerOf = (c: WindowCandidate) => slotOwner(c.key, c.at);

/** A pending hold of another owner whose process is surely dead on this host: it will never be renewed nor confirmed. */
const heldByDead = (slot: WindowSlot): boolean => !slot.acquired && !slot.confirmed && isDeadLocalOwner(parseSlotOwner(slot.owner).process);

/**
 * Candidates' own cells held by a dead local process: released under that holder's owner (fenced:
 * nothing happens if anyone took the slot since) and acquired again, in place in `slots`. Returns
 * the dead holders' slots by request index.
 */
async function takeOverDead(ledger: LedgerBackend, requests: readonly WindowAcquireRequest[], slots: WindowSlot[], now: number): Promise<Map<number, WindowSlot>> {
  const dead = requests.flatMap((r, j) => (r.ttlMs > 0 && heldByDead(slots[j]!) ? [j] : []));
  if (dead.length === 0) return new Map();
  await ledger.windowSettle(dead.map((j) => ({ id: requests[j]!.id, owner: slots[j]!.owner, ttlMs: null })), now);
  const again = await ledger.windowAcquire(dead.map((j) => requests[j]!), now);
  const replaced = new Map(dead.map((j) => [j, slots[j]!]));
  dead.forEach((j, n) => (slots[j] = again[n]!));
  return replaced;
}

/**
 * Groups identical candidates of one call: each joins the first earlier one (by event time) of the
 * same identity within the window, which leads it; leaders go to the ledger, followers copy their
 * leader's outcome. Returns, per candidate index, the index of its leader (or itself).
 */
export function leadersOf(candidates: readonly WindowCandidate[], windowMs: number): number[] {
  const order = candidates.map((_, i) => i).sort((a, b) => candidates[a]!.at - candidates[b]!.at || a - b);
  const lastLeader = new Map<string, number>();
  const leader: number[] = new Array(candidates.length);
  for (const i of order) {
    const c = candidates[i]!;
    const l = lastLeader.get(c.id);
    if (l !== undefined && c.at - candidates[l]!.at <= windowMs) leader[i] = l;
    else {
      leader[i] = i;
      lastLeader.set(c.id, i);
    }
  }
  return leader;
}

export function dedupeWindow(ledger: LedgerBackend, options: DedupeWindowOptions): DedupeWindow {
  const { windowMs, pendingMs } = options;
  const keepMs = Math.max(windowMs, options.keepMs);
  const cell = (at: number) => Math.floor(at / windowMs);
  const near = (slot: WindowSlot, at: number) => Math.abs(parseSlotOwner(slot.owner).at - at) <= windowMs;
  /** What a slot held by someone else means for a candidate at `at`. */
  const judge = (slot: WindowSlot, at: number): WindowVerdict => {
    if (slot.acquired || !near(slot, at) || heldByDead(slot)) return 'go';
    return slot.confirmed ? 'suppressed' : 'in_flight';
  };
  /** The keys of the dead holders a candidate at `at` passes over: `replaced` (its own cell's) and dead neighbours. */
  const deadKeys = (at: number, seen: readonly (WindowSlot | undefined)[]): string[] =>
    [...new Set(seen.filter((s): s is WindowSlot => s !== undefined && heldByDead(s) && near(s, at)).map((s) => parseSlotOwner(s.owner).key))];
  return {
    windowMs,
    async acquire(candidates, now) {
      if (candidates.length === 0) return [];
      const requests = candidates.flatMap((c) => {
        const n = cell(c.at);
        const owner = ownerOf(c);
        return [
          { id: `${c.id}:${n}`, owner, ttlMs: pendingMs },
          { id: `${c.id}:${n - 1}`, owner, ttlMs: 0 },
          { id: `${c.id}:${n + 1}`, owner, ttlMs: 0 },
        ];
      });
      const slots = await ledger.windowAcquire(requests, now);
      const replaced = await takeOverDead(ledger, requests, slots, now);
      const out = candidates.map((c, i): WindowAnswer => {
        const [own, before, after] = [slots[3 * i]!, slots[3 * i + 1]!, slots[3 * i + 2]!];
        const verdicts = [judge(own, c.at), judge(before, c.at), judge(after, c.at)];
        const verdict: WindowVerdict = verdicts.includes('suppressed') ? 'suppressed' : verdicts.includes('in_flight') ? 'in_flight' : 'go';
        const slot = own.acquired ? { id: requests[3 * i]!.id, owner: ownerOf(c) } : undefined;
        const takenOver = deadKeys(c.at, [replaced.get(3 * i), own, before, after]);
        return { verdict, ...(slot ? { slot } : {}), ...(takenOver.length > 0 ? { takenOver } : {}) };
      });
      const giveBack = out.filter((o) => o.verdict !== 'go' && o.slot).map((o) => ({ id: o.slot!.id, owner: o.slot!.owner, ttlMs: null }));
      if (giveBack.length > 0) await ledger.windowSettle(giveBack, now);
      return out.map((o) => (o.verdict === 'go' ? o : { verdict: o.verdict }));
    },
    async settle(items, now) {
      if (items.length === 0) return;
      await ledger.windowSettle(
        items.map((i) => ({ id: i.slot.id, owner: i.slot.owner, ttlMs: i.written ? keepMs : null })),
        now,
      );
    },
  };
}
