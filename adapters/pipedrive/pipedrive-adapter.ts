/**
 * pipedriveAdapter(): records (persons, organizations, deals) and activities (notes, tasks,
 * calls, ...) on Pipedrive, which has no upsert and no batch write, over one small fetch client.
 *
 * Find-or-create, safe to repeat:
 * 1. The ledger first: a record this ledger wrote (`RecordWrite.knownId`) is updated by that id,
 *    with no search. A 404/410 means it is gone (deleted, merged away): it is looked up again.
 * 2. Otherwise an exact lookup: `itemSearch/field` on the id field with `match=exact`, then a GET
 *    of each candidate compares the value exactly (exact searches have matched substrings). Two
 *    holders fail the action naming both; a search that failed is unknown, never "not found".
 * 3. Then a create with the id field set. A create that may have committed (lost answer, reset,
 *    5xx, timeout) is never sent again unconfirmed: the record is looked for, with bounded backoff,
 *    in the entity's list by update time (the database, not the lagging search index) and by
 *    search; while nothing is found the action fails retryable, and its next attempt looks again first.
 */
import { parentMemoKey, type ActivityWrite, type BatchContext, type CrmAdapter, type LinkRef, type ReadRequest, type RecordWrite, type WriteResult } from '../../src/adapter.js';
import { LINK_NOT_FOUND, PARENT_NOT_FOUND } from '../../src/engine/defer.js';
import { ConfigError, CrmError, CrmErrorKind, registerSecret } from '../../src/errors.js';
import type { FieldDefinition } from '../../schemas/field-definitions.js';
import { engineObjects, objectSpec, requestGate, resolveParents } from '../kit/adapter-kit.js';
import { pipedriveHttp, type PipedriveHttp, type PipedriveRequest } from './pipedrive-client.js';
import type { PipedriveActivityConfig, PipedriveObjectConfig, PipedriveRecordConfig, RecordEntity } from './pipedrive-config.js';
import { classifyPipedriveError, createUnknown, duplicateHolders, isGone } from './pipedrive-errors.js';
import { FIELDS_PATH, staticWireField, wireFieldIn, type PipedriveField, type WireField } from './pipedrive-fields.js';
import { resolvePipedriveOptions, type PipedriveAdapterOptions } from './pipedrive-options.js';
import { candidateIds, pipedriveLookups, type Envelope, type RecordItem } from './pipedrive-lookups.js';
import { planReads, readRecords, type ReadIo, type ReadItem } from './pipedrive-reads.js';
import { activityBody, createBody, markedKey, recordBody } from './pipedrive-requests.js';

const VENDOR = 'pipedrive';
/** Pages of a parent's notes or activities read when looking for a key, at most (500 each). */
const MAX_PAGES = 20;
interface ActivityItem {
  id: number | string;
  content?: string;
  note?: string | null;
}

export interface PipedriveAdapter extends CrmAdapter {
  /** An entity's field definitions (every page), through the adapter's budget, count and classification: what `schema pull` and `check-setup` read. */
  readFields(entity: RecordEntity | 'activity'): Promise<PipedriveField[]>;
  /** One request through the adapter's path (budget, request count, classified errors): for check-setup. */
  request<T>(req: PipedriveRequest): Promise<T>;
}

export function pipedriveAdapter(options: PipedriveAdapterOptions): PipedriveAdapter {
  const o = resolvePipedriveOptions(options);
  registerSecret(o.apiToken);
  const http: PipedriveHttp = o.http ?? pipedriveHttp({ basePath: o.basePath, apiToken: o.apiToken!, timeoutMs: o.timeoutMs });
  const gate = requestGate();
  const objects = engineObjects(o.objects, { slotted: true, ...(o.fieldDefinitions ? { definitions: o.fieldDefinitions } : {}), vendor: 'pipedriveAdapter' });
  const spec = <K extends PipedriveObjectConfig['kind']>(object: string, kind: K) => objectSpec(VENDOR, o.objects, object, kind);
  /** Wire field -> configured name, per object: a refused field is named as the config names it. */
  const fieldNames = new Map<string, Map<string, string>>();

  async function send<T>(req: PipedriveRequest, opts: { search?: boolean; context?: BatchContext; object?: string } = {}): Promise<Envelope<T>> {
    const budgets = opts.search ? [o.rateBudget, o.searchRateBudget] : [o.rateBudget];
    return gate.send(async () => {
      try {
        return (await http.send<Envelope<T>>(req)).body;
      } catch (err) {
        throw classifyPipedriveError(err, { fieldNames: opts.object ? fieldNames.get(opts.object) : undefined });
      }
    }, { budgets, ...(opts.context ? { context: opts.context } : {}) });
  }

  // --- fields: names resolved to keys, one fields read per entity when a name needs it -------
  const fieldsCache = new Map<string, Promise<PipedriveField[]>>();
  async function readFields(entity: RecordEntity | 'activity'): Promise<PipedriveField[]> {
    const out: PipedriveField[] = [];
    let cursor: string | undefined;
    do {
      const page = await send<PipedriveField[]>({ method: 'GET', path: FIELDS_PATH[entity], query: { limit: 500, cursor } });
      out.push(...(page.data ?? []));
      cursor = page.additional_data?.next_cursor ?? undefined;
    } while (cursor);
    return out;
  }
  const fieldsOf = (entity: RecordEntity | 'activity') => {
    let p = fieldsCache.get(entity);
    if (!p) {
      p = readFields(entity);
      fieldsCache.set(entity, p);
      // A failed read is not kept: the next write reads again.
      p.catch(() => fieldsCache.delete(entity));
    }
    return p;
  };
  async function wireOf(object: string, entity: RecordEntity, names: readonly string[]): Promise<(name: string) => WireField> {
    const resolved = new Map<string, WireField>();
    const unknown = names.filter((n) => {
      const w = staticWireField(entity, n);
      if (w) resolved.set(n, w);
      return !w;
    });
    if (unknown.length > 0) {
      const fields = await fieldsOf(entity);
      for (const n of unknown) {
        const w = wireFieldIn(fields, entity, n);
        if (!w) throw new ConfigError(`pipedrive: the ${entity} has no field "${n}" (objects.${object}): create it in Pipedrive, or run crm-upsert check-setup --create for the id field`);
        resolved.set(n, w);
      }
    }
    const names2 = fieldNames.get(object) ?? new Map<string, string>();
    for (const [n, w] of resolved) names2.set('custom' in w ? w.custom : w.standard, n);
    fieldNames.set(object, names2);
    return (name) => resolved.get(name)!;
  }
  const idKeyOf = async (object: string, s: PipedriveRecordConfig): Promise<string> => {
    const w = (await wireOf(object, s.entity, [s.idField]))(s.idField);
    if (!('custom' in w)) throw new ConfigError(`pipedrive: objects.${object}.idField ${s.idField} is a standard ${s.entity} field; it must be a varchar custom field`);
    return w.custom;
  };
  const definitionsOf = (object: string): Readonly<Record<string, FieldDefinition>> => objects[object]?.definitions ?? {};

  // --- lookups ------------------------------------------------------------------------------
  const { path, holds, searchItems, searchHolders, confirmed, recentItems, recoveryHolders } = pipedriveLookups(send);

  /** Creates that may have committed and are not confirmed yet, by object and external id: when they were sent. */
  const unconfirmed = new Map<string, number>();
  const unconfirmedKey = (object: string, externalId: string) => `${object}\u0000${externalId}`;
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  // --- record writes --------------------------------------------------------------------------
  /**
   * The CRM ids of record references not in the batch memo (the engine seeds it with the records
   * written earlier in the call): first the records updated in the last minutes (one list read for
   * all of them: the database, so a record written a moment ago by another call or process is
   * found although the search index has not seen it yet), then the exact search for the others.
   */
  const lookupRecords = async (object: string, externalIds: string[]): Promise<Map<string, string>> => {
    const s = spec(object, 'record');
    const key = await idKeyOf(object, s);
    const wanted = new Set(externalIds);
    const holders = new Map<string, Set<string>>();
    const add = (externalId: string, id: string) => holders.set(externalId, (holders.get(externalId) ?? new Set()).add(id));
    for (const item of await recentItems(object, s, Date.now(), (item) => wanted.has(item.custom_fields?.[key] as string), key)) add(item.custom_fields![key] as string, String(item.id));
    for (const externalId of externalIds) {
      if (!holders.has(externalId)) for (const id of await searchHolders(object, s, key, externalId)) add(externalId, id);
    }
    const found = new Map<string, string>();
    for (const [externalId, ids] of holders) {
      if (ids.size > 1) throw duplicateHolders(s.entity, s.idField, externalId, [...ids]);
      found.set(externalId, [...ids][0]!);
    }
    return found;
  };
  const resolveRefs = (refs: readonly LinkRef[], context?: BatchContext) => resolveParents(refs.map((parent) => ({ parent })), context, lookupRecords);

  async function upsertOne(object: string, s: PipedriveRecordConfig, w: RecordWrite, context?: BatchContext): Promise<WriteResult> {
    if (!w.externalId) return fail(`${object}: the external id is empty; Pipedrive records are found by it`, 'MISSING_EXTERNAL_ID');
    for (const l of w.links ?? []) if (s.links?.[l.object] === undefined) return fail(`${object} cannot link to "${l.object}": configure objects.${object}.links.${l.object}`, 'LINK_NOT_CONFIGURED');
    const wire = await wireOf(object, s.entity, Object.keys(w.fields));
    const links = w.links ?? [];
    const ids = links.length > 0 ? new Map(await resolveRefs(links, context)) : new Map<string, string>();
    const relations: Record<string, string> = {};
    for (const l of links) {
      const id = ids.get(parentMemoKey(l.object, l.externalId));
      if (!id) {
        return { ok: false, error: new CrmError(`link ${l.object} ${JSON.stringify(l.externalId)} does not exist in Pipedrive; the ${object} was not written: write the ${l.object}, then retry`, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: LINK_NOT_FOUND }) };
      }
      relations[s.links![l.object]!] = id;
    }
    const update = recordBody(w.fields, wire, definitionsOf(object), relations);
    const patch = async (id: string): Promise<WriteResult> => {
      const res = await send<RecordItem>({ method: 'PATCH', path: path(s.entity, id), body: update }, { context, object });
      return { ok: true, recordId: String(res.data?.id ?? id), created: false };
    };
    const dropLinkIds = (err: unknown) => {
      // A link id known from before that Pipedrive no longer has: read it again on the next attempt.
      if (err instanceof CrmError && err.status === 400) for (const l of links) context?.memo.delete(parentMemoKey(l.object, l.externalId));
    };
    try {
      if (w.knownId) {
        try {
          return await patch(w.knownId);
        } catch (err) {
          // Deleted or merged away since this ledger wrote it: found again by its external id below.
          if (!isGone(err)) throw err;
        }
      }
      const key = await idKeyOf(object, s);
      const pendingKey = unconfirmedKey(object, w.externalId);
      const pending = unconfirmed.get(pendingKey);
      if (pending !== undefined && Date.now() - pending > o.unconfirmedCreateMs) unconfirmed.delete(pendingKey);
      const sentBefore = unconfirmed.get(pendingKey);
      // A create another attempt of this action sent (another process, its answer lost) is looked
      // for where Pipedrive does not lag: the records updated since the index may have missed it.
      const since = sentBefore ?? (w.mayExist ? Date.now() - o.unconfirmedCreateMs : undefined);
      const holders = since !== undefined || o.recentLookup
        ? await recoveryHolders(object, s, key, w.externalId, since ?? Date.now())
        : await searchHolders(object, s, key, w.externalId);
      if (holders.length > 1) return { ok: false, error: duplicateHolders(s.entity, s.idField, w.externalId, holders) };
      if (holders.length === 1) {
        unconfirmed.delete(pendingKey);
        const r = await patch(holders[0]!);
        // The create an earlier attempt sent did commit: this action created the record.
        return sentBefore !== undefined && r.ok ? { ...r, created: true } : r;
      }
      return await create(object, s, key, w, update, context);
    } catch (err) {
      dropLinkIds(err);
      throw err;
    }
  }

  async function create(object: string, s: PipedriveRecordConfig, key: string, w: RecordWrite, update: Record<string, unknown>, context?: BatchContext): Promise<WriteResult> {
    const pendingKey = unconfirmedKey(object, w.externalId);
    const sentAt = Date.now();
    try {
      const res = await send<RecordItem>({ method: 'POST', path: path(s.entity), body: createBody(update, key, w.externalId) }, { context, object });
      if (res.data?.id === undefined) throw new CrmError('Pipedrive answered the create without the record id', { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true });
      unconfirmed.delete(pendingKey);
      return { ok: true, recordId: String(res.data.id), created: true };
    } catch (err) {
      // Only a classified answer (or its absence) can mean the create reached Pipedrive; anything
      // else, such as the engine stopping the request under a lost claim, went nowhere: as it is.
      if (!(err instanceof CrmError) || !err.ambiguous) throw err;
      const error = err;
      unconfirmed.set(pendingKey, sentAt);
      for (const delay of [0, ...o.recoveryDelaysMs]) {
        if (delay > 0) await sleep(delay);
        let holders: string[];
        try {
          holders = await recoveryHolders(object, s, key, w.externalId, sentAt);
        } catch {
          continue;
        }
        if (holders.length > 1) return { ok: false, error: duplicateHolders(s.entity, s.idField, w.externalId, holders) };
        if (holders.length === 1) {
          unconfirmed.delete(pendingKey);
          return { ok: true, recordId: holders[0]!, created: true };
        }
      }
      return { ok: false, error: createUnknown(`${s.entity} ${s.idField}=${JSON.stringify(w.externalId)}`, error) };
    }
  }

  // --- activities -----------------------------------------------------------------------------
  const activityPath = (s: PipedriveActivityConfig) => (s.entity === 'note' ? '/api/v1/notes' : '/api/v2/activities');

  function refsOf(s: PipedriveActivityConfig, w: ActivityWrite): LinkRef[] {
    return [w.parent, ...(w.links ?? [])].filter((r) => s.parents[r.object] !== undefined);
  }

  async function createActivity(object: string, s: PipedriveActivityConfig, w: ActivityWrite, context?: BatchContext): Promise<WriteResult> {
    for (const r of [w.parent, ...(w.links ?? [])]) {
      if (s.parents[r.object] === undefined) return fail(`${object} cannot attach to "${r.object}": configure objects.${object}.parents.${r.object}`, r === w.parent ? 'PARENT_NOT_CONFIGURED' : 'LINK_NOT_CONFIGURED');
    }
    const ids = new Map(await resolveRefs(refsOf(s, w), context));
    const relations: Record<string, string> = {};
    for (const r of refsOf(s, w)) {
      const id = ids.get(parentMemoKey(r.object, r.externalId));
      if (!id) {
        const parentSpec = spec(r.object, 'record');
        return r === w.parent
          ? fail(`parent ${r.object} ${JSON.stringify(r.externalId)} (${parentSpec.entity} with ${parentSpec.idField}=${r.externalId}) does not exist in Pipedrive; write it first, then retry`, PARENT_NOT_FOUND)
          : fail(`link ${r.object} ${JSON.stringify(r.externalId)} does not exist in Pipedrive; the ${object} was not created: write the ${r.object}, then retry`, LINK_NOT_FOUND);
      }
      relations[s.parents[r.object]!] = id;
    }
    try {
      const res = await send<ActivityItem>({ method: 'POST', path: activityPath(s), body: activityBody(s, w, relations, definitionsOf(object)) }, { context, object });
      if (res.data?.id === undefined) return { ok: false, error: new CrmError('Pipedrive answered the create without its id; it may have been written', { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true }) };
      return { ok: true, recordId: String(res.data.id), created: true };
    } catch (err) {
      // A parent id known from before that Pipedrive refuses: read it again on the next attempt.
      if (err instanceof CrmError && (err.status === 400 || err.status === 404)) for (const r of refsOf(s, w)) context?.memo.delete(parentMemoKey(r.object, r.externalId));
      throw err;
    }
  }

  /** Key -> id of the notes or activities of one parent that carry a key marker (every page, read-after-write). */
  async function markedOf(s: PipedriveActivityConfig, field: string, parentId: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const take = (items: ActivityItem[] | undefined) => {
      for (const item of items ?? []) {
        const key = markedKey(s.entity === 'note' ? item.content : item.note);
        if (key && !out.has(key)) out.set(key, String(item.id));
      }
    };
    if (s.entity === 'note') {
      let start = 0;
      for (let page = 0; page < MAX_PAGES; page++) {
        const res = await send<ActivityItem[]>({ method: 'GET', path: '/api/v1/notes', query: { [field]: parentId, start, limit: 500, sort: 'id DESC' } });
        take(res.data);
        const more = res.additional_data?.pagination;
        if (!more?.more_items_in_collection || more.next_start === undefined) break;
        start = more.next_start;
      }
      return out;
    }
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await send<ActivityItem[]>({ method: 'GET', path: '/api/v2/activities', query: { [field]: parentId, limit: 500, cursor } });
      take(res.data);
      cursor = res.additional_data?.next_cursor ?? undefined;
      if (!cursor) break;
    }
    return out;
  }

  // --- reads ---------------------------------------------------------------------------------
  const hasEmail = (email: string) => (item: RecordItem) => ((item as ReadItem).emails ?? []).some((e) => typeof e.value === 'string' && e.value.toLowerCase() === email.toLowerCase());
  const readIo: ReadIo = {
    record: (object) => spec(object, 'record'),
    async wire(object, names) {
      const s = spec(object, 'record');
      const [idKey, of] = await Promise.all([idKeyOf(object, s), wireOf(object, s.entity, names)]);
      return { idKey, of };
    },
    async holders(object, by, value) {
      const s = spec(object, 'record');
      const byId = new Map<string, ReadItem>();
      const add = (items: RecordItem[]) => items.forEach((i) => byId.set(String(i.id), i as ReadItem));
      if (by === 'id') {
        const key = await idKeyOf(object, s);
        add(await recentItems(object, s, Date.now(), (item) => holds(item, key, value)));
        add(await searchItems(object, s, key, value));
      } else {
        if (s.entity !== 'person') throw new ConfigError(`pipedrive: objects.${object}.lookupBy: only persons are read by email`);
        add(await recentItems(object, s, Date.now(), hasEmail(value)));
        const found = await send<unknown>({ method: 'GET', path: '/api/v2/persons/search', query: { term: value, fields: 'email', exact_match: true, limit: 100 } }, { search: true, object });
        add(await confirmed(object, s, candidateIds(found.data).filter((id) => !byId.has(id)), hasEmail(value)));
      }
      return [...byId.values()];
    },
    async get(object, id) {
      const s = spec(object, 'record');
      try {
        return (await send<ReadItem>({ method: 'GET', path: path(s.entity, id) }, { object })).data;
      } catch (err) {
        if (isGone(err)) return undefined;
        throw err;
      }
    },
  };

  return {
    name: VENDOR,
    // No batch write exists: each record is its own request, so a batch is one record, and the
    // engine's `concurrency` runs several at once (within the rate budgets).
    capabilities: { maxBatch: 1, nativeActivityUpsert: false },
    objects,
    readFields,
    async request<T>(req: PipedriveRequest): Promise<T> {
      return (await send<T>(req)) as T;
    },

    async upsertRecords(object: string, writes: RecordWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const s = spec(object, 'record');
      const results: WriteResult[] = [];
      for (const w of writes) results.push(await upsertOne(object, s, w, context));
      return results;
    },

    async createActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const s = spec(object, 'activity');
      const results: WriteResult[] = [];
      for (const w of writes) results.push(await createActivity(object, s, w, context));
      return results;
    },

    async findActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<Map<string, string>> {
      // Through each target's own notes or activities (the database, read after write), never by
      // search: the key marker is matched in their text.
      const s = spec(object, 'activity');
      const found = new Map<string, string>();
      const attachable = writes.filter((w) => s.parents[w.parent.object] !== undefined && w.key);
      if (attachable.length === 0) return found;
      const ids = await resolveParents(attachable, context, lookupRecords);
      const read = new Map<string, Map<string, string>>();
      for (const w of attachable) {
        const parentId = ids.get(parentMemoKey(w.parent.object, w.parent.externalId));
        if (!parentId) continue;
        const field = s.parents[w.parent.object]!;
        const at = `${field}\u0000${parentId}`;
        if (!read.has(at)) read.set(at, await markedOf(s, field, parentId));
        const id = read.get(at)!.get(w.key);
        if (id) found.set(w.key, id);
      }
      return found;
    },

    // Each id its own lookup (the recent list and the exact search, candidates confirmed by a read).
    planReads: (_object: string, ids: readonly string[]) => planReads(ids),
    readRecords: (object: string, ids: readonly string[], request: ReadRequest) => readRecords(readIo, object, ids, request),

    classifyError: (err: unknown) => classifyPipedriveError(err),
    apiCalls: gate.apiCalls,
  };
}

function fail(message: string, vendorCode: string): WriteResult {
  return { ok: false, error: new CrmError(message, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode }) };
}
