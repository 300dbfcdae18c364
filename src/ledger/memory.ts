/**
 * The in-process ledger: for tests and one-off scripts. Every method runs synchronously inside
 * one microtask, which makes each batch atomic against every other caller in the process.
 */
import type {
  ClaimHolder,
  ClaimRequest,
  ClaimResult,
  CompleteRequest,
  FailRequest,
  LedgerBackend,
  LedgerEntry,
  ListOptions,
  NoteRequest,
  TokenRef,
  WindowAcquireRequest,
  WindowSettleRequest,
  WindowSlot,
} from './types.js';
import { ClaimAction, decideClaim, takenEntry } from './decide-claim.js';
import { decideWindow, type StoredSlot } from './decide-window.js';
import { decodeJson, encodeNotes } from './kit/codec.js';

const copy = (entry: LedgerEntry): LedgerEntry => structuredClone(entry);

export interface MemoryLedgerOptions {
  /**
   * The ledger's own clock (what `clock()` answers). Default: none, so callers use theirs. Tests
   * give one to play a shared ledger whose clock differs from the workers' clocks.
   */
  clock?: () => number;
}

/** The in-process ledger. Not durable: it forgets everything when the process ends. */
export function memoryLedger(options: MemoryLedgerOptions = {}): LedgerBackend {
  const entries = new Map<string, LedgerEntry>();
  const marks = new Map<string, string>();
  const windows = new Map<string, StoredSlot>();
  const born = options.clock ? options.clock() : Date.now();
  /** Above every token of a pruned entry: a key that comes back starts over it. */
  let floor = 0;

  /** The entry a holder mark names, when it is another key's. */
  const holderOf = (key: string | undefined, claimant: string): ClaimHolder | undefined => {
    const entry = key === undefined || key === claimant ? undefined : entries.get(key);
    return entry ? { key: entry.key, status: entry.status, leaseUntil: entry.leaseUntil } : undefined;
  };

  const claimOne = (req: ClaimRequest, now: number): ClaimResult => {
    const existing = entries.get(req.key) ?? null;
    const mark = req.markId === undefined ? undefined : marks.get(req.markId);
    const decision = decideClaim(existing, req, now, floor);
    if (decision.action === ClaimAction.answer) return { key: req.key, outcome: decision.outcome, entry: copy(existing!), mark };
    const entry = takenEntry(existing, req, now, decision);
    const holder = req.holds === undefined ? undefined : holderOf(marks.get(req.holds), req.key);
    entries.set(req.key, entry);
    if (req.holds !== undefined) marks.set(req.holds, req.key);
    return { key: req.key, outcome: 'claimed', token: entry.token, entry: copy(entry), mark, ...(holder ? { holder } : {}) };
  };

  const fenced = (ref: TokenRef): LedgerEntry | undefined => {
    const entry = entries.get(ref.key);
    return entry && entry.status === 'in_progress' && entry.token === ref.token ? entry : undefined;
  };

  return {
    name: 'memory',
    async claim(requests, now) {
      return requests.map((r) => claimOne(r, now));
    },
    async complete(requests: CompleteRequest[], now) {
      return requests.map((r) => {
        const entry = fenced(r);
        if (!entry) return false;
        Object.assign(entry, {
          status: 'completed',
          result: structuredClone(r.result),
          error: null,
          leaseUntil: null,
          updatedAt: now,
          expiresAt: r.retentionMs == null ? null : now + r.retentionMs,
        });
        if (r.mark) marks.set(r.mark.id, r.mark.value);
        return true;
      });
    },
    async fail(requests: FailRequest[], now) {
      return requests.map((r) => {
        const entry = fenced(r);
        if (!entry) return false;
        Object.assign(entry, { status: 'failed', error: structuredClone(r.error), leaseUntil: null, updatedAt: now });
        if (r.mark) marks.set(r.mark.id, r.mark.value);
        return true;
      });
    },
    async release(requests, now) {
      return requests.map((r) => {
        const entry = fenced(r);
        if (!entry) return false;
        Object.assign(entry, { leaseUntil: now, updatedAt: now });
        return true;
      });
    },
    async renew(requests, leaseMs, now) {
      return requests.map((r) => {
        const entry = fenced(r);
        if (!entry || (entry.leaseUntil ?? 0) <= now) return false;
        Object.assign(entry, { leaseUntil: now + leaseMs, updatedAt: now });
        return true;
      });
    },
    async note(requests: NoteRequest[], now) {
      // As JSON text and back, so a note reads here as it does from the stores that keep text.
      const notes = encodeNotes(requests);
      return requests.map((r, i) => {
        const entry = fenced(r);
        if (!entry) return false;
        Object.assign(entry, { result: decodeJson(notes[i]), updatedAt: now });
        return true;
      });
    },
    async get(key) {
      const entry = entries.get(key);
      return entry ? copy(entry) : null;
    },
    async getMany(keys) {
      return keys.map((key) => {
        const entry = entries.get(key);
        return entry ? copy(entry) : null;
      });
    },
    async heldBy(ids) {
      return ids.map((id) => {
        const key = marks.get(id);
        const entry = key === undefined ? undefined : entries.get(key);
        return entry ? copy(entry) : null;
      });
    },
    async readMarks(ids) {
      return ids.map((id) => marks.get(id) ?? null);
    },
    async list(options: ListOptions = {}) {
      const bytes = (k: string) => Buffer.from(k, 'utf8');
      const keys = [...entries.keys()].sort((a, b) => Buffer.compare(bytes(a), bytes(b)));
      const after = options.after === undefined ? undefined : bytes(options.after);
      const out: LedgerEntry[] = [];
      if (options.limit !== undefined && options.limit <= 0) return out;
      for (const key of keys) {
        if (after && Buffer.compare(bytes(key), after) <= 0) continue;
        const entry = entries.get(key)!;
        if (options.status && entry.status !== options.status) continue;
        out.push(copy(entry));
        if (options.limit !== undefined && out.length >= options.limit) break;
      }
      return out;
    },
    async prune(now, olderThan) {
      let removed = 0;
      for (const [key, entry] of entries) {
        const expired = entry.expiresAt !== null && entry.expiresAt <= now;
        const old = olderThan !== undefined && entry.status !== 'in_progress' && entry.updatedAt < olderThan;
        if (expired || old) {
          floor = Math.max(floor, entry.token);
          entries.delete(key);
          removed += 1;
        }
      }
      for (const [id, slot] of windows) if (slot.expiresAt <= now) windows.delete(id);
      return removed;
    },
    async windowAcquire(requests: WindowAcquireRequest[], now) {
      return requests.map((r): WindowSlot => {
        const { acquired, slot, store } = decideWindow(windows.get(r.id) ?? null, r, now);
        if (store === 'put') windows.set(r.id, slot);
        else if (store === 'delete') windows.delete(r.id);
        return { acquired, ...slot };
      });
    },
    async windowSettle(requests: WindowSettleRequest[], now) {
      for (const r of requests) {
        const slot = windows.get(r.id);
        if (!slot || slot.owner !== r.owner) continue;
        if (r.ttlMs === null) windows.delete(r.id);
        else windows.set(r.id, { owner: r.owner, confirmed: true, expiresAt: now + r.ttlMs });
      }
    },
    ...(options.clock ? { clock: async () => options.clock!() } : {}),
    async isDurable() {
      return false;
    },
    async bornAt() {
      return born;
    },
    async close() {
      entries.clear();
      windows.clear();
      marks.clear();
    },
  };
}
