/**
 * Record reads for hubspotAdapter (`planReads`, `readRecords`): one
 * `POST /crm/v3/objects/{objectType}/batch/read` per 100 ids, by the object's idProperty or a
 * `lookupBy` property; with `links`, the v4 association batch read
 * (`POST /crm/v4/associations/{from}/{to}/batch/read`) and one batch read by HubSpot id per linked
 * object for the linked records' external ids. Never the search API: its index lags writes by
 * seconds, and a read must see what this process wrote a moment ago.
 */
import type { Fields, ReadLink, ReadRequest, ReadResult } from '../../src/adapter.js';
import { CrmError, CrmErrorKind } from '../../src/errors.js';
import type { HubSpotObjectConfig } from './hubspot-config.js';
import { classifyHubSpotItemError, readableResponses, type HubSpotErrorBody } from './hubspot-errors.js';
import type { BatchResult, HubSpotClientLike, ResultObject } from './hubspot-client.js';

type RecordConfig = Extract<HubSpotObjectConfig, { kind: 'record' }>;

/** Ids per object batch read: HubSpot's batch input limit. */
export const READ_CHUNK = 100;
/** Inputs per v4 association batch read: HubSpot caps it at 1,000. */
export const ASSOCIATION_READ_LIMIT = 1_000;
/** The property holding a record's HubSpot id: read by it with no idProperty at all. */
const RECORD_ID = 'hs_object_id';
// HubSpot's 207 error for ids a batch read does not find (a deleted record, an unknown value):
// `{ category: 'OBJECT_NOT_FOUND', message: 'Could not get some CONTACT objects, …', context: { ids } }`;
// a record with no associations: `OBJECT_NOT_FOUND` / `crm.associations.NO_ASSOCIATIONS_FOUND`.
const NOT_FOUND = 'OBJECT_NOT_FOUND';

/**
 * A batch read that leaves an input out with no error naming it proves nothing about that input:
 * reading it as absent would create a note again, fail a write as parent-missing, or answer a read
 * "not found" for a record that exists. Throws a retryable error then. Errors that name no ids are
 * taken to cover the inputs left out. `keyOf`: how HubSpot compares the values (email ignores case).
 */
export function assertAnswered(asked: readonly string[], answered: ReadonlySet<string>, errors: readonly HubSpotErrorBody[] | undefined, keyOf: (id: string) => string = (id) => id): void {
  const vague = (errors ?? []).some((e) => (e.context?.ids ?? e.context?.fromObjectId ?? []).length === 0);
  if (vague) return;
  const named = new Set((errors ?? []).flatMap((e) => [...(e.context?.ids ?? []), ...(e.context?.fromObjectId ?? [])].map((id) => keyOf(String(id)))));
  const left = asked.filter((id) => !answered.has(id) && !named.has(keyOf(id)));
  if (left.length === 0) return;
  throw new CrmError(`HubSpot's batch read answered ${left.length} of ${asked.length} inputs with neither a result nor an error (${left.slice(0, 3).join(', ')}${left.length > 3 ? ', …' : ''}); read again`, {
    vendor: 'hubspot', kind: CrmErrorKind.transient, vendorCode: 'NO_RESULT',
  });
}

/** What a read needs from the adapter: its SDK APIs, its rate-budgeted `read`, and the object configs. */
export interface ReadIo {
  batchApi: HubSpotClientLike['crm']['objects']['batchApi'];
  associationsApi: HubSpotClientLike['crm']['associations']['v4']['batchApi'];
  /** One request under the adapter's rate budget, its failure classified. */
  read<T>(call: () => Promise<T>): Promise<T>;
  record(object: string): RecordConfig;
}

/** The ids of a read in groups of 100, order kept: one batch read each. */
export function planReads(ids: readonly string[]): string[][] {
  return Array.from({ length: Math.ceil(ids.length / READ_CHUNK) }, (_, i) => ids.slice(i * READ_CHUNK, (i + 1) * READ_CHUNK));
}

/** How HubSpot matches a value of `property`: contact email without regard to case, every other value exactly. */
const matchKey = (property: string) => (property === 'email' ? (v: string) => v.toLowerCase() : (v: string) => v);

/** An error other than "not found" in a 207 is a failed read, not an absent record. */
function throwOddErrors(errors: readonly HubSpotErrorBody[] | undefined): void {
  const odd = (errors ?? []).find((e) => e.category !== NOT_FOUND);
  if (odd) throw classifyHubSpotItemError(odd);
}

const sendRead = (io: ReadIo, objectType: string, ids: readonly string[], properties: string[], idProperty?: string): Promise<BatchResult> =>
  io.read(() => io.batchApi.read(objectType, { ...(idProperty ? { idProperty } : {}), inputs: ids.map((id) => ({ id })), properties, propertiesWithHistory: [] }, undefined, readableResponses));

function found(r: ResultObject, c: RecordConfig, fields: readonly string[]): ReadResult {
  const answered: Fields = {};
  for (const f of fields) answered[f] = r.properties?.[f] ?? null;
  const externalId = r.properties?.[c.idProperty];
  return { found: true, recordId: String(r.id), ...(externalId ? { externalId } : {}), fields: answered };
}

/** One group from `planReads`: one batch read, plus the link reads when `request.links`. */
export async function readRecords(io: ReadIo, object: string, ids: readonly string[], request: ReadRequest): Promise<ReadResult[]> {
  const c = io.record(object);
  const by = request.by ?? c.idProperty;
  const byRecordId = by === RECORD_ID;
  const properties = [...new Set([...request.fields, c.idProperty, ...(byRecordId ? [] : [by])])];
  const res = await sendRead(io, c.objectType, ids, properties, byRecordId ? undefined : by);
  throwOddErrors(res.errors);
  const key = matchKey(by);
  const asked = new Set(ids.map(key));
  const byKey = new Map<string, ResultObject>();
  const unplaced: ResultObject[] = [];
  for (const r of res.results ?? []) {
    const value = byRecordId ? String(r.id) : r.properties?.[by];
    if (value && asked.has(key(value))) byKey.set(key(value), r);
    else unplaced.push(r);
  }
  const named = new Set((res.errors ?? []).flatMap((e) => e.context?.ids ?? []).map((id) => key(String(id))));
  // A result whose value does not echo the asked one (HubSpot matched it another way) belongs to
  // the one id left with neither a result nor an error, when there is exactly one of each.
  const left = ids.filter((id) => !byKey.has(key(id)) && !named.has(key(id)));
  if (left.length === 1 && unplaced.length === 1) byKey.set(key(left[0]!), unplaced[0]!);
  assertAnswered(ids, new Set(ids.filter((id) => byKey.has(key(id)))), res.errors, key);
  const results = ids.map((id): ReadResult => {
    const r = byKey.get(key(id));
    return r ? found(r, c, request.fields) : { found: false };
  });
  if (!request.links) return results;
  const recordIds = [...new Set(results.flatMap((r) => (r.found ? [r.recordId] : [])))];
  const links = await readLinks(io, c, recordIds);
  return results.map((r) => (r.found ? { ...r, links: links.get(r.recordId) ?? [] } : r));
}

/** HubSpot id -> its linked records, for every object the config links `c` to. */
async function readLinks(io: ReadIo, c: RecordConfig, recordIds: readonly string[]): Promise<Map<string, ReadLink[]>> {
  const out = new Map<string, ReadLink[]>(recordIds.map((id) => [id, []]));
  if (recordIds.length === 0) return out;
  for (const linkObject of Object.keys(c.links ?? {})) {
    const to = io.record(linkObject);
    const associated = await associatedIds(io, c.objectType, to.objectType, recordIds);
    const externalIds = await externalIdsOf(io, to, [...new Set([...associated.values()].flat())]);
    for (const [from, targets] of associated) {
      for (const recordId of targets) {
        // A record deleted between the two reads is no longer linked.
        if (!externalIds.has(recordId)) continue;
        const externalId = externalIds.get(recordId);
        out.get(from)?.push({ object: linkObject, recordId, ...(externalId ? { externalId } : {}) });
      }
    }
  }
  return out;
}

/** From id -> associated to-ids, through every page (`after`) of the v4 batch read, 1,000 inputs a request. */
async function associatedIds(io: ReadIo, fromType: string, toType: string, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(ids.map((id) => [id, []]));
  let inputs: { id: string; after?: string }[] = ids.map((id) => ({ id }));
  while (inputs.length > 0) {
    const next: { id: string; after?: string }[] = [];
    for (let i = 0; i < inputs.length; i += ASSOCIATION_READ_LIMIT) {
      const chunk = inputs.slice(i, i + ASSOCIATION_READ_LIMIT);
      // A record with no associations of this type comes back as a 207 NO_ASSOCIATIONS_FOUND error naming it in fromObjectId.
      const page = await io.read(() => io.associationsApi.getPage(fromType, toType, { inputs: chunk }, readableResponses));
      throwOddErrors(page.errors);
      const answered = new Set<string>();
      for (const r of page.results ?? []) {
        const from = r._from?.id === undefined ? undefined : String(r._from.id);
        if (from === undefined || !out.has(from)) continue;
        answered.add(from);
        const seen = out.get(from)!;
        for (const t of r.to ?? []) if (!seen.includes(String(t.toObjectId))) seen.push(String(t.toObjectId));
        const after = r.paging?.next?.after;
        if (after) next.push({ id: from, after });
      }
      assertAnswered(chunk.map((input) => input.id), answered, page.errors);
    }
    inputs = next;
  }
  return out;
}

/** HubSpot id -> external id (undefined when the record has none) of records of `to`; ids HubSpot does not find are left out. */
async function externalIdsOf(io: ReadIo, to: RecordConfig, ids: readonly string[]): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (const group of planReads(ids)) {
    const res = await sendRead(io, to.objectType, group, [to.idProperty]);
    throwOddErrors(res.errors);
    for (const r of res.results ?? []) out.set(String(r.id), r.properties?.[to.idProperty] || undefined);
    assertAnswered(group, new Set([...out.keys()]), res.errors);
  }
  return out;
}
