/**
 * Record-to-record associations (a record's `links`), written after its batch upsert, which
 * takes none: `POST /crm/v4/associations/{fromType}/{toType}/batch/create`, one call per pair of
 * object types and batch (more only past HubSpot's input limit), every edge once. What a batch
 * confirmed (its upserts, its edges) is kept by the adapter for the batch's retries, so a retry
 * sends only the edges not yet confirmed.
 */
import { LINK_NOT_FOUND } from '../../src/engine/defer.js';
import { parentMemoKey, type BatchContext, type LinkRef, type RecordWrite, type WriteResult } from '../../src/adapter.js';
import { CrmError, CrmErrorKind } from '../../src/errors.js';
import type { HubSpotClientLike } from './hubspot-client.js';
import type { HubSpotObjectConfig } from './hubspot-config.js';
import { classifyHubSpotItemError, goneIdsOf, readJsonAnswer, type HubSpotErrorBody } from './hubspot-errors.js';
import { associationInput, type AssociationInput } from './hubspot-requests.js';

type RecordConfig = Extract<HubSpotObjectConfig, { kind: 'record' }>;

const VENDOR = 'hubspot';

/**
 * Inputs per v4 association batch create. HubSpot's reference gives no number; its own MCP server
 * documents "max 100 associations per batch" (@hubspot/mcp-server, batchCreateAssociationsTool),
 * the limit of its other batch writes.
 */
export const ASSOCIATION_BATCH_LIMIT = 100;

/** The vendor code of a write whose linked record does not exist (retryable later, as a missing parent is). */
export { LINK_NOT_FOUND };

/** What one batch confirmed so far, kept across its retries. */
export interface LinkProgress {
  /** External id -> the successful upsert result. */
  upserted: Map<string, Extract<WriteResult, { ok: true }>>;
  /** Edge keys HubSpot confirmed. */
  edges: Set<string>;
}

interface AssociationResponse {
  results?: { fromObjectId?: string | number; toObjectId?: string | number }[];
  errors?: HubSpotErrorBody[];
}

/**
 * The v4 batch create through `apiRequest`. It is specified to answer 201 (207 with errors), and
 * the SDK's `batchApi.create` maps only those two, throwing on anything else with the results
 * lost; HubSpot's v3 association batch create has answered 200 since August 2025
 * (HubSpot/hubspot-api-php#506, hubspot-api-python#448), so any 2xx is read as the batch it is.
 * A 2xx without a batch body leaves every input without a result (possibly written).
 */
export async function createAssociations(client: HubSpotClientLike, fromType: string, toType: string, inputs: AssociationInput[]): Promise<AssociationResponse> {
  const path = `/crm/v4/associations/${encodeURIComponent(fromType)}/${encodeURIComponent(toType)}/batch/create`;
  const body = await readJsonAnswer(await client.apiRequest({ method: 'POST', path, body: { inputs } }), 'the association batch create');
  const batch = (body && typeof body === 'object' ? body : {}) as AssociationResponse;
  return { results: Array.isArray(batch.results) ? batch.results : [], errors: Array.isArray(batch.errors) ? batch.errors : [] };
}

/** What the link step needs from the adapter. */
export interface LinkIo {
  client: HubSpotClientLike;
  /** Send one write request (rate budget, the engine's last word, classification). */
  write<T>(call: () => Promise<T>, context?: BatchContext): Promise<T>;
  /** External id -> HubSpot id of the linked records, through the batch memo. */
  resolve(links: readonly LinkRef[], context?: BatchContext): Promise<Map<string, string>>;
  /** The configured record object `object`. */
  record(object: string): RecordConfig;
}

interface Edge {
  fromType: string;
  toType: string;
  fromId: string;
  toId: string;
  typeId: number;
  /** Indexes of the writes it belongs to. */
  writers: Set<number>;
  /** The batch memo keys its target's id came from (none when upserted in this batch). */
  refs: Set<string>;
}
const edgeKey = (e: Pick<Edge, 'fromType' | 'toType' | 'fromId' | 'toId' | 'typeId'>) => [e.fromType, e.toType, e.fromId, e.toId, e.typeId].join('\u0000');

const linkMissing = (link: LinkRef, to: RecordConfig, object: string) =>
  new CrmError(
    `link ${link.object} ${JSON.stringify(link.externalId)} does not exist (no ${to.objectType} with ${to.idProperty}=${link.externalId}); the ${object} was written without that association: write the ${link.object}, then retry`,
    { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: LINK_NOT_FOUND },
  );

const noAssociationResult = (extra: string[]) =>
  new CrmError(`HubSpot answered without a result for this association; it may have been created${extra.length > 0 ? ` (unmatched errors: ${extra.join('; ')})` : ''}`, {
    vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'NO_RESULT',
  });

/**
 * The record ids an association error names (`objectId`, `fromObjectId`, and INVALID_OBJECT_IDS
 * `CONTACT=12 is not valid`, read by its `TYPE=id`, not by the words after it, which HubSpot
 * localizes).
 */
function idsNamed(e: HubSpotErrorBody): Set<string> {
  const ids = new Set<string>();
  const context = e.context ?? {};
  for (const id of [...(context.objectId ?? []), ...(context.fromObjectId ?? []), ...(context.toObjectId ?? [])]) ids.add(String(id));
  for (const s of context.INVALID_OBJECT_IDS ?? []) {
    const id = /=(\S+)/.exec(s)?.[1];
    if (id) ids.add(id);
  }
  return ids;
}

/** One outcome per input: confirmed, or the error for it (by the ids an error names; a lone leftover takes a lone error). */
function mapAssociations(inputs: readonly AssociationInput[], res: AssociationResponse): (CrmError | null)[] {
  const out: (CrmError | null | undefined)[] = inputs.map(() => undefined);
  const at = new Map(inputs.map((input, i) => [`${input.from.id}\u0000${input.to.id}`, i]));
  for (const r of res.results ?? []) {
    const i = at.get(`${String(r.fromObjectId)}\u0000${String(r.toObjectId)}`);
    if (i !== undefined) out[i] = null;
  }
  const unmatched: CrmError[] = [];
  for (const e of res.errors ?? []) {
    const error = classifyHubSpotItemError(e);
    const ids = idsNamed(e);
    const hits = inputs.flatMap((input, i) => (out[i] === undefined && (ids.has(input.from.id) || ids.has(input.to.id)) ? [i] : []));
    if (hits.length === 0) unmatched.push(error);
    for (const i of hits) out[i] = error;
  }
  const left = out.flatMap((o, i) => (o === undefined ? [i] : []));
  if (left.length === 1 && unmatched.length === 1) out[left[0]!] = unmatched[0]!;
  return out.map((o) => (o === undefined ? noAssociationResult(unmatched.map((e) => e.message)) : o));
}

/** A write's failures, the one reported: a retryable one first, so the engine tries the batch again. */
const worst = (errors: readonly CrmError[]): CrmError => errors.find((e) => e.retryable) ?? errors[0]!;

/**
 * Associate the upserted records of a batch with the records they link to. `results` are the
 * upsert results in write order; a write stays `ok` only when all its associations were confirmed.
 * A linked record that does not exist fails its write (LINK_NOT_FOUND) and the write's other links
 * are still written; a failed association call fails the writes whose edges it carried, with its
 * classified error. A daily-quota or auth failure is thrown: it stops the batch.
 *
 * A linked record's id known from before (the batch memo: an earlier write or read) may have gone
 * since: deleted or merged away in HubSpot, perhaps re-created under the same external id. When
 * HubSpot refuses an association naming such an id, that id is dropped from the memo, the record
 * is read again by its external id (one read per object) and its associations are sent once more:
 * to the record that holds the external id now, or LINK_NOT_FOUND when none does.
 */
export async function writeLinks(
  io: LinkIo, object: string, spec: RecordConfig, writes: readonly RecordWrite[], results: WriteResult[], progress: LinkProgress, context?: BatchContext,
): Promise<WriteResult[]> {
  const linked = writes.flatMap((w, i) => (results[i]!.ok && (w.links?.length ?? 0) > 0 ? [i] : []));
  if (linked.length === 0) return results;
  // Records of this object upserted in this very batch need no read.
  const here = new Map<string, string>();
  writes.forEach((w, i) => {
    const r = results[i]!;
    if (r.ok) here.set(parentMemoKey(object, w.externalId), r.recordId);
  });
  const remote = (l: LinkRef) => !here.has(parentMemoKey(l.object, l.externalId));
  let known = await io.resolve(linked.flatMap((i) => writes[i]!.links!).filter(remote), context);
  const idOf = (l: LinkRef) => here.get(parentMemoKey(l.object, l.externalId)) ?? known.get(parentMemoKey(l.object, l.externalId));

  const failures = new Map<number, CrmError[]>();
  const fail = (i: number, error: CrmError) => failures.set(i, [...(failures.get(i) ?? []), error]);
  /** The edges of these writes' links not confirmed yet (their failures recorded as found). */
  const plan = (indexes: readonly number[]): Edge[] => {
    const pending = new Map<string, Edge>();
    for (const i of indexes) {
      const fromId = (results[i] as Extract<WriteResult, { ok: true }>).recordId;
      for (const link of writes[i]!.links!) {
        const typeId = spec.links?.[link.object];
        if (typeId === undefined) {
          fail(i, new CrmError(`${link.object} is not a configured link of ${object}`, { vendor: VENDOR, kind: CrmErrorKind.permanent }));
          continue;
        }
        const to = io.record(link.object);
        const toId = idOf(link);
        if (!toId) {
          fail(i, linkMissing(link, to, object));
          continue;
        }
        const edge = { fromType: spec.objectType, toType: to.objectType, fromId, toId, typeId };
        const key = edgeKey(edge);
        if (progress.edges.has(key)) continue;
        const seen = pending.get(key) ?? { ...edge, writers: new Set<number>(), refs: new Set<string>() };
        seen.writers.add(i);
        if (remote(link)) seen.refs.add(parentMemoKey(link.object, link.externalId));
        pending.set(key, seen);
      }
    }
    return [...pending.values()];
  };
  const failed = await sendEdges(io, plan(linked), progress, context);
  // Ids from the memo HubSpot says are gone: read those records again and send once more the
  // edges of the writes refused over them (with their neighbours', when HubSpot refused the call whole).
  const overGone = failed.filter(([, error]) => goneIdsOf(error).size > 0);
  const stale = new Set(overGone.flatMap(([, error, edge]) => (goneIdsOf(error).has(edge.toId) ? [...edge.refs] : [])));
  const again = new Set(stale.size > 0 ? overGone.map(([i]) => i) : []);
  for (const [i, error] of failed) if (!again.has(i)) fail(i, error);
  if (again.size > 0) {
    // Planned anew below (edges confirmed meanwhile are skipped).
    for (const i of again) failures.delete(i);
    for (const ref of stale) {
      context?.memo.delete(ref);
      known.delete(ref);
    }
    const isStale = (l: LinkRef) => stale.has(parentMemoKey(l.object, l.externalId));
    const fresh = await io.resolve([...again].flatMap((i) => writes[i]!.links!).filter(isStale), context);
    known = new Map([...known, ...fresh]);
    for (const [i, error] of await sendEdges(io, plan([...again]), progress, context)) fail(i, error);
  }
  return results.map((r, i) => (failures.has(i) ? { ok: false, error: worst(failures.get(i)!) } : r));
}

/** Send the edges, one call per pair of object types (and per ASSOCIATION_BATCH_LIMIT inputs); returns the failures per write and edge. */
async function sendEdges(io: LinkIo, edges: readonly Edge[], progress: LinkProgress, context?: BatchContext): Promise<[number, CrmError, Edge][]> {
  const failed: [number, CrmError, Edge][] = [];
  const byPair = new Map<string, Map<string, Edge[]>>();
  for (const e of edges) {
    const pair = `${e.fromType}\u0000${e.toType}`;
    const inputs = byPair.get(pair) ?? new Map<string, Edge[]>();
    // Two types between the same two records travel in one input: HubSpot refuses a batch that repeats an association.
    const ends = `${e.fromId}\u0000${e.toId}`;
    inputs.set(ends, [...(inputs.get(ends) ?? []), e]);
    byPair.set(pair, inputs);
  }
  for (const inputs of byPair.values()) {
    const all = [...inputs.values()];
    for (let start = 0; start < all.length; start += ASSOCIATION_BATCH_LIMIT) {
      const chunk = all.slice(start, start + ASSOCIATION_BATCH_LIMIT);
      const { fromType, toType } = chunk[0]![0]!;
      const body = chunk.map((es) => associationInput(es[0]!.fromId, es[0]!.toId, es.map((e) => e.typeId)));
      let outcomes: (CrmError | null)[];
      try {
        outcomes = mapAssociations(body, await io.write(() => createAssociations(io.client, fromType, toType, body), context));
      } catch (err) {
        // Not a CrmError: the engine stopped the request (a lost claim); a spent quota or refused credentials stop the batch.
        if (!(err instanceof CrmError) || err.kind === CrmErrorKind.quota || err.kind === CrmErrorKind.auth) throw err;
        outcomes = body.map(() => err);
      }
      chunk.forEach((es, n) => {
        for (const e of es) {
          const error = outcomes[n];
          if (error) for (const i of e.writers) failed.push([i, error, e]);
          else progress.edges.add(edgeKey(e));
        }
      });
    }
  }
  return failed;
}
