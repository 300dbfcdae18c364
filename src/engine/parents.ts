/**
 * What one Sync knows about activity parents between its calls: the CRM ids of records it upserted
 * or read a moment ago, and the parents it found absent a moment ago. Activities routinely arrive
 * before their parent (webhooks deliver in any order, workers share a list): a note whose contact
 * is not there yet is held (failed as parent-missing, retryable) without reading the contact again
 * until its absence is older than `absentMs` or this Sync writes that contact, and a note on a
 * contact this Sync just wrote needs no read at all.
 */
export interface ParentMemoOptions {
  now: () => number;
  /** How long a parent found absent is not read again (unless this Sync writes it first), ms. Default 2 s. */
  absentMs?: number;
  /** How long a known parent id is reused across calls, ms. Default 60 s. */
  knownMs?: number;
  /** Entries kept of each kind (oldest dropped first). Default 20,000. */
  max?: number;
}

export interface ParentMemo {
  /** The ids known and the parents held absent, among these parents (`parentMemoKey`s). */
  seed(keys: Iterable<string>): { memo: Map<string, string>; absent: Set<string> };
  /** This Sync upserted or read the parent: its id, and it is no longer absent. */
  known(key: string, id: string): void;
  /**
   * The CRM said this id of the parent is gone (deleted or merged away): it is read again next
   * time, and the id is not taken from the parent's ledger mark either (`isGone`).
   */
  gone(key: string, id: string): void;
  /** Whether the CRM said this id of the parent is gone (a ledger mark may still hold it). */
  isGone(key: string, id: string): boolean;
  /** A lookup did not find the parent; `at`: when that lookup was made (default now). */
  missing(key: string, at?: number): void;
  /** When the lookup that found the parent absent was made, while it is remembered absent. */
  absentSince(key: string): number | undefined;
}

export const DEFAULT_PARENT_ABSENT_MS = 2_000;
const DEFAULT_KNOWN_MS = 60_000;
const DEFAULT_MAX = 20_000;

export function parentMemo(options: ParentMemoOptions): ParentMemo {
  const absentMs = options.absentMs ?? DEFAULT_PARENT_ABSENT_MS;
  const knownMs = options.knownMs ?? DEFAULT_KNOWN_MS;
  const max = options.max ?? DEFAULT_MAX;
  const ids = new Map<string, { id: string; at: number }>();
  const absentAt = new Map<string, number>();
  const goneIds = new Map<string, string>();
  // Re-inserting moves a key to the end, so the first key is always the oldest.
  const put = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > max) map.delete(map.keys().next().value!);
  };
  return {
    seed(keys) {
      const now = options.now();
      const memo = new Map<string, string>();
      const absent = new Set<string>();
      for (const key of keys) {
        const known = ids.get(key);
        if (known && now - known.at < knownMs) memo.set(key, known.id);
        const at = absentAt.get(key);
        if (at !== undefined && now - at < absentMs && !memo.has(key)) absent.add(key);
      }
      return { memo, absent };
    },
    known(key, id) {
      absentAt.delete(key);
      put(ids, key, { id, at: options.now() });
    },
    gone(key, id) {
      if (ids.get(key)?.id === id) ids.delete(key);
      put(goneIds, key, id);
    },
    isGone: (key, id) => goneIds.get(key) === id,
    missing(key, at = options.now()) {
      ids.delete(key);
      // The first miss starts the hold; a later miss (after a fresh read) starts a new one.
      put(absentAt, key, at);
    },
    absentSince: (key) => absentAt.get(key),
  };
}
