/**
 * How pipedriveAdapter finds records by a field's value, none of which Pipedrive offers as a
 * consistent read: the exact search (`itemSearch/field`, its index lagging writes), every
 * candidate read and compared (exact searches have matched substrings), and the entity's list of
 * records updated in the last minutes (the database itself: a record written a moment ago is in it).
 */
import type { BatchContext } from '../../src/adapter.js';
import type { PipedriveRequest } from './pipedrive-client.js';
import type { PipedriveRecordConfig, RecordEntity } from './pipedrive-config.js';
import { isGone } from './pipedrive-errors.js';
import { RECORD_PATH } from './pipedrive-requests.js';

/** Pages of a list read at most (500 records each). */
const MAX_PAGES = 20;
/** How far before `since` the update-time list is read: Pipedrive's clock and ours may differ. */
export const CLOCK_MARGIN_MS = 10 * 60_000;

/** Pipedrive's answer envelope (v1 and v2). */
export interface Envelope<T> {
  success?: boolean;
  data?: T;
  additional_data?: { next_cursor?: string | null; pagination?: { more_items_in_collection?: boolean; next_start?: number } };
}

/** A record as v2 answers it (the parts every lookup reads). */
export interface RecordItem {
  id: number | string;
  custom_fields?: Record<string, unknown> | null;
}

/** The adapter's one request path (budgets, count, classified errors). */
export type Send = <T>(req: PipedriveRequest, opts?: { search?: boolean; context?: BatchContext; object?: string }) => Promise<Envelope<T>>;

/** The lookups, over the adapter's request path. */
export function pipedriveLookups(send: Send) {
  const path = (entity: RecordEntity, id?: string): string => `${RECORD_PATH[entity]}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  const holds = (item: RecordItem | undefined, key: string, externalId: string) => item?.custom_fields?.[key] === externalId;

  /**
   * The records whose id field is exactly `externalId`: an exact search, each candidate read and
   * compared (a candidate gone since the index saw it is no holder). A failed search throws.
   */
  async function searchItems(object: string, s: PipedriveRecordConfig, key: string, externalId: string): Promise<RecordItem[]> {
    const found = await send<unknown[]>({ method: 'GET', path: '/api/v2/itemSearch/field', query: { entity_type: s.entity, field: key, term: externalId, match: 'exact', limit: 100 } }, { search: true, object });
    return confirmed(object, s, candidateIds(found.data), (item) => holds(item, key, externalId));
  }
  const searchHolders = async (object: string, s: PipedriveRecordConfig, key: string, externalId: string) => (await searchItems(object, s, key, externalId)).map((i) => String(i.id));

  /** Candidates read one by one and kept when `keep` says so (a candidate gone since the index saw it is dropped). */
  async function confirmed(object: string, s: PipedriveRecordConfig, ids: readonly string[], keep: (item: RecordItem) => boolean): Promise<RecordItem[]> {
    const out: RecordItem[] = [];
    for (const id of ids) {
      try {
        const item = await send<RecordItem>({ method: 'GET', path: path(s.entity, id) }, { object });
        if (item.data && keep(item.data)) out.push(item.data);
      } catch (err) {
        if (!isGone(err)) throw err;
      }
    }
    return out;
  }

  /**
   * Records updated since `since` (less a margin for the two clocks) that `keep` accepts, from the
   * entity's list sorted by update time: the database itself, not the search index, so a record
   * created a moment ago is in it. `customKey` narrows the custom fields answered to the one read.
   */
  async function recentItems(object: string, s: PipedriveRecordConfig, since: number, keep: (item: RecordItem) => boolean, customKey?: string): Promise<RecordItem[]> {
    const out: RecordItem[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await send<RecordItem[]>({
        method: 'GET', path: path(s.entity),
        query: { updated_since: new Date(since - CLOCK_MARGIN_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'), sort_by: 'update_time', sort_direction: 'desc', custom_fields: customKey, limit: 500, cursor },
      }, { object });
      for (const item of page.data ?? []) if (keep(item)) out.push(item);
      cursor = page.additional_data?.next_cursor ?? undefined;
    } while (cursor && ++pages < MAX_PAGES);
    return out;
  }
  const recentHolders = async (object: string, s: PipedriveRecordConfig, key: string, externalId: string, since: number) =>
    (await recentItems(object, s, since, (item) => holds(item, key, externalId), key)).map((i) => String(i.id));

  /** Both lookups of a create that may have committed: the update-time list, then the exact search. */
  async function recoveryHolders(object: string, s: PipedriveRecordConfig, key: string, externalId: string, sentAt: number): Promise<string[]> {
    const recent = await recentHolders(object, s, key, externalId, sentAt);
    if (recent.length > 0) return recent;
    return searchHolders(object, s, key, externalId);
  }

  return { path, holds, searchItems, searchHolders, confirmed, recentItems, recentHolders, recoveryHolders };
}

/** The id of a search result: `{ id }`, or `{ item: { id } }` as the v2 model describes it. */
function candidateId(entry: unknown): string | undefined {
  if (!entry || typeof entry !== 'object') return undefined;
  const e = entry as { id?: unknown; item?: { id?: unknown } };
  const id = e.item?.id ?? e.id;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
}

/** Distinct candidate ids of a search answer: `data` as a list, or `data.items` (the entity searches). */
export function candidateIds(data: unknown): string[] {
  const list = Array.isArray(data) ? data : Array.isArray((data as { items?: unknown } | undefined)?.items) ? (data as { items: unknown[] }).items : [];
  return [...new Set(list.map(candidateId).filter((id): id is string => id !== undefined))];
}
