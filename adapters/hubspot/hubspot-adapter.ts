/**
 * hubspotAdapter: the CrmAdapter for HubSpot over @hubspot/api-client 13.x.
 *
 * One HTTP attempt per logical call (the SDK's retries stay off: it retries POST creates and
 * ignores Retry-After; the engine decides), the rate budget spent before every request, every
 * per-record result read and mapped back by objectWriteTraceId. Record reads (`planReads`,
 * `readRecords`) are in hubspot-reads.ts.
 */
import type { Client as SdkClient } from '@hubspot/api-client';
import { parentMemoKey, type ActivityWrite, type BatchContext, type CrmAdapter, type LinkRef, type ReadRequest, type RecordWrite, type WriteResult } from '../../src/adapter.js';
import { ConfigError, CrmError, CrmErrorKind, recordGoneError, registerSecret } from '../../src/errors.js';
import { extend } from '../../src/extend.js';
import { engineObjects, objectSpec, requestGate, resolveParents, writeInOrder, type Prepared } from '../kit/adapter-kit.js';
import { HUBSPOT_SDK, loadVendorSdk } from '../kit/vendor-sdk.js';
import type { HubSpotObjectConfig } from './hubspot-config.js';
import { classifyHubSpotError, classifyHubSpotItemError, goneIdsOf, readableResponses, refusedInputError, refusedValuesOf, type HubSpotClassifyContext, type RefusedValue } from './hubspot-errors.js';
import { hubspotEngineDefinitions } from './hubspot-fields.js';
import type { BatchResult, HubSpotClientLike, ResultObject, Traced } from './hubspot-client.js';
import { resolveHubSpotOptions, type HubSpotAdapterOptions } from './hubspot-options.js';
import { LINK_NOT_FOUND, writeLinks, type LinkIo, type LinkProgress } from './hubspot-links.js';
import { assertAnswered, planReads, readRecords, type ReadIo } from './hubspot-reads.js';
import { createInput, upsertInput, type AssociationRef, type CreateInput, type UpsertInput } from './hubspot-requests.js';

// An optional peer: without it, importing this module throws the one message naming what to install.
const { Client } = loadVendorSdk<{ Client: typeof SdkClient }>(HUBSPOT_SDK);

// A unique objectWriteTraceId per input maps results back, and makes HubSpot answer a batch create
// with per-input 207 errors instead of failing it whole for one bad value (developers.hubspot.com
// /docs/api-reference/error-handling, "Multi-status errors"). Batch upsert fails whole regardless.
const traced = <T extends object>(inputs: T[]): Traced<T>[] => inputs.map((input, i) => extend(input, { objectWriteTraceId: String(i) }));

type RecordConfig = Extract<HubSpotObjectConfig, { kind: 'record' }>;

const VENDOR = 'hubspot';
const READ_CHUNK = 100;

// A 2xx that leaves an input out may still have written it: retryable, and a create is looked up first.
const noResult = (extra: string[] = []) =>
  new CrmError(`HubSpot answered without a result for this input; it may have been written${extra.length > 0 ? ` (unmatched errors: ${extra.join('; ')})` : ''}`, {
    vendor: 'hubspot', kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'NO_RESULT',
  });

/**
 * An update-only write's result: HubSpot's batch update answers an id no record holds with an
 * OBJECT_NOT_FOUND error for it (a 207, `context.ids` naming it: third-party fixtures of
 * `batch/update`, e.g. rudderlabs/rudder-transformer's HubSpot tests; HubSpot's reference documents
 * the 207 shape, not this category for it [I]): the record this ledger wrote is gone, RECORD_GONE.
 */
function goneIfNotFound(object: string, c: RecordConfig, w: RecordWrite, r: WriteResult): WriteResult {
  if (r.ok || r.error.vendorCode !== 'OBJECT_NOT_FOUND') return r;
  return { ok: false, error: recordGoneError(VENDOR, `${object} ${JSON.stringify(w.externalId)}`, w.knownId!, `no ${c.objectType} record has ${c.idProperty}=${w.externalId}`) };
}

/**
 * Map a batch response back to inputs: by objectWriteTraceId (the input index), then by a
 * property value identifying the input (idProperty / keyProperty), then errors by trace id or
 * by the ids in their context; a single unplaced error goes to the single input left. An input
 * with neither a result nor an error is possibly written (`noResult`).
 */
function mapBatch(res: BatchResult, identities: string[], identityProperty: string, created: (r: ResultObject) => boolean): WriteResult[] {
  const out: (WriteResult | undefined)[] = identities.map(() => undefined);
  const byIdentity = (value: string | null | undefined) => identities.findIndex((id, i) => id === value && out[i] === undefined);
  for (const r of res.results ?? []) {
    const trace = Number(r.objectWriteTraceId);
    let i = r.objectWriteTraceId !== undefined && Number.isInteger(trace) && trace >= 0 && trace < identities.length && out[trace] === undefined ? trace : -1;
    if (i < 0) i = byIdentity(r.properties?.[identityProperty]);
    if (i >= 0 && r.id) out[i] = { ok: true, recordId: String(r.id), created: created(r) };
  }
  const unmatched: CrmError[] = [];
  for (const e of res.errors ?? []) {
    const error = classifyHubSpotItemError(e);
    const traces = (e.context?.objectWriteTraceId ?? []).map(Number).filter((t) => Number.isInteger(t) && out[t] === undefined);
    const targets = traces.length > 0 ? traces : (e.context?.ids ?? []).map((id) => byIdentity(id)).filter((i) => i >= 0);
    if (targets.length === 0) unmatched.push(error);
    for (const i of targets) out[i] = { ok: false, error };
  }
  const left = out.flatMap((r, i) => (r === undefined ? [i] : []));
  if (left.length === 1 && unmatched.length === 1) out[left[0]!] = { ok: false, error: unmatched[0]! };
  return out.map((r) => r ?? { ok: false, error: noResult(unmatched.map((e) => e.message)) });
}

/**
 * The inputs that sent a refused value: those sending the value HubSpot named; when it named none
 * (a detail without `propertyValue` in a language whose wording is not read), the one input that
 * sent the property, else the one whose value the message quotes verbatim. None when unsure.
 */
function sentRefused(inputs: readonly UpsertInput[], r: RefusedValue): number[] {
  const senders = inputs.flatMap((input, i) => (Object.hasOwn(input.properties, r.name) ? [i] : []));
  if (r.value !== undefined) return senders.filter((i) => inputs[i]!.properties[r.name] === r.value);
  if (senders.length === 1) return senders;
  const quoted = senders.filter((i) => {
    const v = inputs[i]!.properties[r.name];
    return typeof v === 'string' && v !== '' && r.message.includes(v);
  });
  return quoted.length === 1 ? quoted : [];
}

/**
 * Send upsert inputs; when HubSpot refuses the whole batch over property values it names, fail the
 * inputs that sent those values and send the rest again in one request (again if the rest holds
 * another), instead of halving: one bad value costs one extra request, not 2·log2(n). A refusal no
 * input can be matched to (or that matches every input) is thrown as it is: the engine splits.
 */
async function upsertIsolating(inputs: UpsertInput[], send: (inputs: UpsertInput[]) => Promise<WriteResult[]>): Promise<WriteResult[]> {
  try {
    return await send(inputs);
  } catch (err) {
    const refused = refusedValuesOf(err);
    const own = inputs.map((input, i) => refused.filter((r) => sentRefused(inputs, r).includes(i)));
    const offenders = own.flatMap((mine, i) => (mine.length > 0 ? [i] : []));
    if (offenders.length === 0 || offenders.length === inputs.length) throw err;
    const rest = inputs.filter((_, i) => own[i]!.length === 0);
    const restResults = await upsertIsolating(rest, send);
    let next = 0;
    return inputs.map((_, i) => (own[i]!.length > 0 ? { ok: false, error: refusedInputError(own[i]!, err as CrmError) } : restResults[next++]!));
  }
}

export function hubspotAdapter(options: HubSpotAdapterOptions): CrmAdapter {
  const o = resolveHubSpotOptions(options);
  registerSecret(o.accessToken);
  const client: HubSpotClientLike =
    o.client ?? (new Client({ accessToken: o.accessToken, basePath: o.basePath }) as unknown as HubSpotClientLike);
  if (Object.values(o.objects).some((c) => c.kind === 'record' && Object.keys(c.links ?? {}).length > 0) && typeof client.apiRequest !== 'function') {
    throw new ConfigError('hubspotAdapter: the injected client has no apiRequest, which record links need (pass a @hubspot/api-client Client)');
  }
  // The SDK binds retry settings from a process-wide singleton when an API object is first
  // touched: touch ours now, right after construction, so a later Client cannot change them.
  const batchApi = client.crm.objects.batchApi;
  const associationsApi = client.crm.associations.v4.batchApi;
  const gate = requestGate();
  // Reads throw classified, secret-free errors too: a caller of findActivities never sees the SDK's ApiException.
  const read = <T>(call: () => Promise<T>) =>
    gate.send(async () => {
      try {
        return await call();
      } catch (err) {
        throw classifyHubSpotError(err);
      }
    }, { budgets: [o.rateBudget] });

  /**
   * What a batch's lookups read so far, kept for its next lookup when one fails part way (a 429 or
   * a reset on a later read): the activity ids associated with a parent (all pages), and the key of
   * each activity read. Dropped when a write request of the batch is about to leave: that write may
   * attach more.
   */
  const lookups = new WeakMap<BatchContext, { associated: Map<string, string[]>; keys: Map<string, string | undefined> }>();

  /** One write request; its failure is classified knowing what every input sent (a `beforeSend` error propagates as it is). */
  const write = <T>(call: () => Promise<T>, sentProperties: string[][], context?: BatchContext, classify: HubSpotClassifyContext = {}): Promise<T> => {
    if (context) lookups.delete(context);
    return gate.send(async () => {
      try {
        return await call();
      } catch (err) {
        throw classifyHubSpotError(err, { ...classify, sentProperties });
      }
    }, { budgets: [o.rateBudget], context });
  };

  const config = <K extends HubSpotObjectConfig['kind']>(object: string, kind: K) => objectSpec(VENDOR, o.objects, object, kind);

  /** External id -> HubSpot id, one batch read per chunk of this parent object's ids. */
  const lookupParents = async (object: string, ids: string[]): Promise<Map<string, string>> => {
    const parent = config(object, 'record');
    const found = new Map<string, string>();
    for (let i = 0; i < ids.length; i += READ_CHUNK) {
      const res = await read(() =>
        batchApi.read(parent.objectType, { idProperty: parent.idProperty, inputs: ids.slice(i, i + READ_CHUNK).map((id) => ({ id })), properties: [parent.idProperty], propertiesWithHistory: [] }, undefined, readableResponses),
      );
      for (const r of res.results ?? []) {
        const ext = r.properties?.[parent.idProperty];
        if (ext) found.set(ext, String(r.id));
      }
      assertAnswered(ids.slice(i, i + READ_CHUNK), new Set(found.keys()), res.errors);
    }
    return found;
  };

  const parentMissing = (w: ActivityWrite, parent: RecordConfig) =>
    new CrmError(`parent ${w.parent.object} with ${parent.idProperty}=${w.parent.externalId} does not exist in HubSpot`, {
      vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: 'PARENT_NOT_FOUND',
    });

  const linkMissing = (link: LinkRef, to: RecordConfig, object: string) =>
    new CrmError(`link ${link.object} ${JSON.stringify(link.externalId)} does not exist (no ${to.objectType} with ${to.idProperty}=${link.externalId}); the ${object} was not created: write the ${link.object}, then retry`, {
      vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: LINK_NOT_FOUND,
    });

  /** The CRM ids of these record references (targets or links), through the batch memo: one read per object not yet known. */
  const resolveRefs = (refs: readonly LinkRef[], context?: BatchContext) => resolveParents(refs.map((parent) => ({ parent })), context, lookupParents);

  /** What each batch confirmed (upserts, associations), for its retries: they send only the rest. */
  const linkProgress = new WeakMap<BatchContext, LinkProgress>();
  const progressOf = (context?: BatchContext): LinkProgress => {
    const fresh: LinkProgress = { upserted: new Map(), edges: new Set() };
    if (!context) return fresh;
    const known = linkProgress.get(context) ?? fresh;
    linkProgress.set(context, known);
    return known;
  };
  const linkIo: LinkIo = {
    client,
    write: (call, context) => write(call, [], context),
    resolve: resolveRefs,
    record: (object) => config(object, 'record'),
  };
  const readIo: ReadIo = { batchApi, associationsApi, read, record: (object) => config(object, 'record') };

  return {
    name: VENDOR,
    capabilities: { maxBatch: 100, nativeActivityUpsert: false },
    objects: engineObjects(o.objects, { definitions: hubspotEngineDefinitions(o.objects, o.fieldDefinitions), vendor: 'hubspotAdapter' }),

    async upsertRecords(object: string, writes: RecordWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const c = config(object, 'record');
      const progress = progressOf(context);
      // An upsert this batch confirmed is not sent again on its retry (only its unconfirmed associations are).
      const fresh = writes.filter((w) => !progress.upserted.has(w.externalId));
      // onMissing 'skip': a record this ledger wrote goes out as an update by its id property, which
      // never creates; the others are upserted as always (a second request when a batch has both).
      const updateOnly = (w: RecordWrite) => c.onMissing === 'skip' && w.knownId !== undefined;
      const byUpdate = fresh.filter(updateOnly);
      const byUpsert = fresh.filter((w) => !updateOnly(w));
      const send = (update: boolean) => (all: UpsertInput[]) =>
        upsertIsolating(all, async (inputs) => {
          const properties = inputs.map((input) => [input.idProperty, ...Object.keys(input.properties)]);
          const body = { inputs: traced(inputs) };
          const res = await write(() => (update ? batchApi.update(c.objectType, body, readableResponses) : batchApi.upsert(c.objectType, body, readableResponses)), properties, context, { idProperty: c.idProperty });
          const results = mapBatch(res, inputs.map((input) => input.id), c.idProperty, (r) => r._new === true);
          return update ? results.map((r, i) => goneIfNotFound(object, c, byUpdate.find((w) => w.externalId === inputs[i]!.id)!, r)) : results;
        });
      const upserted = await writeInOrder(byUpsert, (w) => ({ send: upsertInput(c, w) }), send(false));
      let updated: WriteResult[];
      try {
        updated = await writeInOrder(byUpdate, (w) => ({ send: upsertInput(c, w) }), send(true));
      } catch (err) {
        // The upserts of this batch went out already: the update's failure is theirs alone to share.
        if (!(err instanceof CrmError) || byUpsert.length === 0) throw err;
        updated = byUpdate.map(() => ({ ok: false, error: err }));
      }
      const sent = fresh.map((w) => (updateOnly(w) ? updated[byUpdate.indexOf(w)]! : upserted[byUpsert.indexOf(w)]!));
      fresh.forEach((w, i) => {
        const r = sent[i]!;
        if (r.ok) progress.upserted.set(w.externalId, r);
      });
      const results = writes.map((w) => progress.upserted.get(w.externalId) ?? sent[fresh.indexOf(w)]!);
      return writeLinks(linkIo, object, c, writes, results, progress, context);
    },

    async createActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const c = config(object, 'activity');
      if (writes.length === 0) return [];
      const refsOf = (w: ActivityWrite) => [w.parent, ...(w.links ?? [])].filter((ref) => c.parents[ref.object] !== undefined);
      // A copy: the memo may lose an id below, and the ids sent are what HubSpot's errors name.
      const ids = new Map(await resolveRefs(writes.flatMap(refsOf), context));
      const prepare = (w: ActivityWrite): Prepared<{ key: string; input: CreateInput }> => {
        const associations: AssociationRef[] = [];
        for (const ref of [w.parent, ...(w.links ?? [])]) {
          const typeId = c.parents[ref.object];
          if (typeId === undefined) {
            return { fail: new CrmError(`${ref.object} is not a configured parent of ${object}`, { vendor: VENDOR, kind: CrmErrorKind.permanent }) };
          }
          const id = ids.get(parentMemoKey(ref.object, ref.externalId));
          if (!id) return { fail: ref === w.parent ? parentMissing(w, config(ref.object, 'record')) : linkMissing(ref, config(ref.object, 'record'), object) };
          associations.push({ id, typeId });
        }
        return { send: { key: w.key, input: createInput(c, w, associations) } };
      };
      // A parent's id known from before (the batch memo) that HubSpot says is gone (deleted or
      // merged away since) is dropped: the engine sends those inputs again (after its lookup, when
      // one is due; a whole-batch refusal is split first), and the parent is read again by its external id.
      const dropGone = (w: ActivityWrite, error: unknown) => {
        const gone = goneIdsOf(error);
        if (gone.size === 0) return;
        for (const ref of refsOf(w)) {
          const key = parentMemoKey(ref.object, ref.externalId);
          const id = ids.get(key);
          if (id !== undefined && gone.has(id)) context?.memo.delete(key);
        }
      };
      let results: WriteResult[];
      try {
        results = await writeInOrder(writes, prepare, async (items) => {
          const inputs = items.map((item) => item.input);
          const sent = inputs.map((input) => Object.keys(input.properties));
          const res = await write(() => batchApi.create(c.objectType, { inputs: traced(inputs) }, readableResponses), sent, context);
          return mapBatch(res, items.map((item) => item.key), c.keyProperty, () => true);
        });
      } catch (err) {
        for (const w of writes) dropGone(w, err);
        throw err;
      }
      writes.forEach((w, i) => {
        const r = results[i]!;
        if (!r.ok) dropGone(w, r.error);
      });
      return results;
    },

    async findActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<Map<string, string>> {
      // Read-after-write consistent path: parent -> its associated activities (v4) -> their key
      // property. Search would be one call, but its index lags writes by seconds.
      const c = config(object, 'activity');
      const found = new Map<string, string>();
      if (writes.length === 0) return found;
      const parents = await resolveParents(writes.filter((w) => c.parents[w.parent.object] !== undefined), context, lookupParents);
      const fresh = { associated: new Map<string, string[]>(), keys: new Map<string, string | undefined>() };
      const progress = context ? (lookups.get(context) ?? fresh) : fresh;
      if (context) lookups.set(context, progress);
      const byParentObject = new Map<string, Set<string>>();
      for (const w of writes) {
        const id = parents.get(parentMemoKey(w.parent.object, w.parent.externalId));
        if (id) byParentObject.set(w.parent.object, (byParentObject.get(w.parent.object) ?? new Set()).add(id));
      }
      const candidates = new Set<string>();
      for (const [parentObject, ids] of byParentObject) {
        const parentType = config(parentObject, 'record').objectType;
        const known = (id: string) => progress.associated.get(`${parentType}\u0000${id}`);
        for (const id of ids) for (const to of known(id) ?? []) candidates.add(to);
        // Activity ids of the parents being read, page by page; a parent is kept once its last page is in.
        const pages = new Map<string, string[]>();
        let inputs: { id: string; after?: string }[] = [...ids].filter((id) => !known(id)).map((id) => ({ id }));
        while (inputs.length > 0) {
          const next: { id: string; after?: string }[] = [];
          for (let i = 0; i < inputs.length; i += READ_CHUNK) {
            const chunk = inputs.slice(i, i + READ_CHUNK);
            // A parent with no associations comes back as a 207 error (NO_ASSOCIATIONS_FOUND): nothing to match.
            const page = await read(() => associationsApi.getPage(parentType, c.objectType, { inputs: chunk }, readableResponses));
            const more = new Set<string>();
            for (const r of page.results ?? []) {
              const from = r._from?.id;
              const to = (r.to ?? []).map((t) => String(t.toObjectId));
              for (const t of to) candidates.add(t);
              if (from) pages.set(from, [...(pages.get(from) ?? []), ...to]);
              const after = r.paging?.next?.after;
              if (after && from) {
                next.push({ id: from, after });
                more.add(from);
              }
            }
            assertAnswered(chunk.map((input) => input.id), new Set(pages.keys()), page.errors);
            for (const { id } of chunk) if (!more.has(id)) progress.associated.set(`${parentType}\u0000${id}`, pages.get(id) ?? []);
          }
          inputs = next;
        }
      }
      const wanted = new Set(writes.map((w) => w.key));
      const match = (id: string, key: string | undefined) => {
        if (key && wanted.has(key) && !found.has(key)) found.set(key, id);
      };
      const ids = [...candidates].filter((id) => {
        if (!progress.keys.has(id)) return true;
        match(id, progress.keys.get(id));
        return false;
      });
      for (let i = 0; i < ids.length; i += READ_CHUNK) {
        const chunk = ids.slice(i, i + READ_CHUNK);
        const res = await read(() =>
          batchApi.read(c.objectType, { inputs: chunk.map((id) => ({ id })), properties: [c.keyProperty], propertiesWithHistory: [] }, undefined, readableResponses),
        );
        for (const r of res.results ?? []) {
          const key = r.properties?.[c.keyProperty] ?? undefined;
          progress.keys.set(String(r.id), key);
          match(String(r.id), key);
        }
        assertAnswered(chunk, new Set((res.results ?? []).map((r) => String(r.id))), res.errors);
        for (const id of chunk) if (!progress.keys.has(id)) progress.keys.set(id, undefined);
      }
      return found;
    },

    planReads: (_object: string, ids: readonly string[]) => planReads(ids),

    readRecords: (object: string, ids: readonly string[], request: ReadRequest) => readRecords(readIo, object, ids, request),

    classifyError: (err: unknown) => classifyHubSpotError(err),

    apiCalls: gate.apiCalls,
  };
}
