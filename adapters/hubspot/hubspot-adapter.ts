/**
 * hubspotAdapter: the CrmAdapter for HubSpot over @hubspot/api-client 13.x.
 *
 * One HTTP attempt per logical call (the SDK's retries stay off: it retries POST creates and
 * ignores Retry-After; the engine decides), the rate budget spent before every request, every
 * per-record result read and mapped back by objectWriteTraceId.
 */
import { Client } from '@hubspot/api-client';
import { parentMemoKey, type ActivityWrite, type BatchContext, type CrmAdapter, type Fields, type ObjectSpec, type RecordWrite, type WriteResult } from '../../src/adapter.js';
import { CrmError, CrmErrorKind, registerSecret } from '../../src/errors.js';
import type { RateBudget } from '../../src/rate-budget.js';
import type { HubSpotObjectConfig } from './hubspot-config.js';
import { classifyHubSpotError, classifyHubSpotItemError, readableResponses, type HubSpotErrorBody } from './hubspot-errors.js';
import { resolveHubSpotOptions, type HubSpotAdapterOptions } from './hubspot-options.js';

/** The SDK's per-call options (the adapter passes `readableResponses`). */
type CallOptions = typeof readableResponses;

/** The few @hubspot/api-client calls this adapter makes (a real `Client` satisfies it). */
export interface HubSpotClientLike {
  crm: {
    objects: {
      batchApi: {
        upsert(objectType: string, body: { inputs: UpsertInput[] }, options?: CallOptions): Promise<BatchResult>;
        create(objectType: string, body: { inputs: CreateInput[] }, options?: CallOptions): Promise<BatchResult>;
        read(objectType: string, body: { idProperty?: string; inputs: { id: string }[]; properties: string[]; propertiesWithHistory: string[] }, archived?: boolean, options?: CallOptions): Promise<BatchResult>;
      };
    };
    associations: {
      v4: {
        batchApi: {
          getPage(fromObjectType: string, toObjectType: string, body: { inputs: { id: string; after?: string }[] }, options?: CallOptions): Promise<AssociationPage>;
        };
      };
    };
  };
}

interface UpsertInput { idProperty: string; id: string; properties: Record<string, string>; objectWriteTraceId: string }
interface CreateInput {
  properties: Record<string, string>;
  associations: { to: { id: string }; types: { associationCategory: 'HUBSPOT_DEFINED'; associationTypeId: number }[] }[];
  objectWriteTraceId: string;
}
interface ResultObject { id: string; _new?: boolean; properties?: Record<string, string | null>; objectWriteTraceId?: string }
interface BatchResult { results?: ResultObject[]; errors?: HubSpotErrorBody[] }
interface AssociationPage {
  results?: { _from?: { id: string }; to?: { toObjectId: string | number }[]; paging?: { next?: { after?: string } } }[];
  errors?: HubSpotErrorBody[];
}

type RecordConfig = Extract<HubSpotObjectConfig, { kind: 'record' }>;

const READ_CHUNK = 100;

function stringify(fields: Fields): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v === null ? '' : String(v);
  return out;
}

// A 2xx that leaves an input out may still have written it: retryable, and a create is looked up first.
const noResult = (extra: string[] = []) =>
  new CrmError(`HubSpot answered without a result for this input; it may have been written${extra.length > 0 ? ` (unmatched errors: ${extra.join('; ')})` : ''}`, {
    vendor: 'hubspot', kind: CrmErrorKind.transient, ambiguous: true, vendorCode: 'NO_RESULT',
  });

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

export function hubspotAdapter(options: HubSpotAdapterOptions): CrmAdapter {
  const o = resolveHubSpotOptions(options);
  registerSecret(o.accessToken);
  const client: HubSpotClientLike =
    o.client ?? (new Client({ accessToken: o.accessToken, basePath: o.basePath }) as unknown as HubSpotClientLike);
  // The SDK binds retry settings from a process-wide singleton when an API object is first
  // touched: touch ours now, right after construction, so a later Client cannot change them.
  const batchApi = client.crm.objects.batchApi;
  const associationsApi = client.crm.associations.v4.batchApi;
  let calls = 0;

  const send = async <T>(fn: () => Promise<T>, budgets: RateBudget[] = [o.rateBudget]): Promise<T> => {
    for (const b of budgets) await b.acquire();
    calls += 1;
    return fn();
  };

  /**
   * One write request: budget, then the engine's last word (`beforeSend` throws unchanged when a
   * claim was lost), then the call; a failure is classified knowing what every input sent.
   */
  const sendWrite = async <T>(fn: () => Promise<T>, sentProperties: string[][], context?: BatchContext): Promise<T> => {
    await o.rateBudget.acquire();
    await context?.beforeSend?.();
    calls += 1;
    try {
      return await fn();
    } catch (err) {
      throw classifyHubSpotError(err, { sentProperties });
    }
  };

  const objects: Record<string, ObjectSpec> = {};
  for (const [name, c] of Object.entries(o.objects)) {
    objects[name] = c.kind === 'record' ? { kind: 'record', fields: [...c.fields] } : { kind: 'activity', fields: [...c.fields], parents: Object.keys(c.parents) };
  }

  const config = <K extends HubSpotObjectConfig['kind']>(object: string, kind: K): Extract<HubSpotObjectConfig, { kind: K }> => {
    const c = o.objects[object];
    if (!c || c.kind !== kind) {
      throw new CrmError(`object "${object}" is not a configured ${kind} object`, { vendor: 'hubspot', kind: CrmErrorKind.permanent });
    }
    return c as Extract<HubSpotObjectConfig, { kind: K }>;
  };

  /**
   * External id -> HubSpot id for the parents of these writes, one batch read per parent object
   * type and chunk; ids found on an earlier attempt of the same batch come from `context`.
   */
  const resolveParents = async (writes: ActivityWrite[], context?: BatchContext): Promise<Map<string, string>> => {
    const found = context?.memo ?? new Map<string, string>();
    const byObject = new Map<string, Set<string>>();
    for (const w of writes) {
      if (found.has(parentMemoKey(w.parent.object, w.parent.externalId))) continue;
      byObject.set(w.parent.object, (byObject.get(w.parent.object) ?? new Set()).add(w.parent.externalId));
    }
    for (const [object, ids] of byObject) {
      const parent = config(object, 'record');
      const all = [...ids];
      for (let i = 0; i < all.length; i += READ_CHUNK) {
        const res = await send(() =>
          batchApi.read(parent.objectType, { idProperty: parent.idProperty, inputs: all.slice(i, i + READ_CHUNK).map((id) => ({ id })), properties: [parent.idProperty], propertiesWithHistory: [] }, undefined, readableResponses),
        );
        for (const r of res.results ?? []) {
          const ext = r.properties?.[parent.idProperty];
          if (ext) found.set(parentMemoKey(object, ext), String(r.id));
        }
      }
    }
    return found;
  };

  const parentMissing = (w: ActivityWrite, parent: RecordConfig) =>
    new CrmError(`parent ${w.parent.object} with ${parent.idProperty}=${w.parent.externalId} does not exist in HubSpot`, {
      vendor: 'hubspot', kind: CrmErrorKind.permanent, vendorCode: 'PARENT_NOT_FOUND',
    });


  return {
    name: 'hubspot',
    capabilities: { maxBatch: 100, nativeActivityUpsert: false },
    objects,

    async upsertRecords(object: string, writes: RecordWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const c = config(object, 'record');
      if (writes.length === 0) return [];
      const inputs: UpsertInput[] = writes.map((w, i) => ({ idProperty: c.idProperty, id: w.externalId, properties: stringify(w.fields), objectWriteTraceId: String(i) }));
      const sent = inputs.map((input) => [input.idProperty, ...Object.keys(input.properties)]);
      const res = await sendWrite(() => batchApi.upsert(c.objectType, { inputs }, readableResponses), sent, context);
      return mapBatch(res, writes.map((w) => w.externalId), c.idProperty, (r) => r._new === true);
    },

    async createActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const c = config(object, 'activity');
      if (writes.length === 0) return [];
      const parents = await resolveParents(writes.filter((w) => c.parents[w.parent.object] !== undefined), context);
      const out: (WriteResult | undefined)[] = writes.map(() => undefined);
      const pending: number[] = [];
      const inputs: CreateInput[] = [];
      writes.forEach((w, i) => {
        const associationTypeId = c.parents[w.parent.object];
        if (associationTypeId === undefined) {
          out[i] = { ok: false, error: new CrmError(`${w.parent.object} is not a configured parent of ${object}`, { vendor: 'hubspot', kind: CrmErrorKind.permanent }) };
          return;
        }
        const parentId = parents.get(parentMemoKey(w.parent.object, w.parent.externalId));
        if (!parentId) {
          out[i] = { ok: false, error: parentMissing(w, config(w.parent.object, 'record')) };
          return;
        }
        pending.push(i);
        inputs.push({
          properties: { ...stringify(w.fields), [c.keyProperty]: w.key },
          associations: [{ to: { id: parentId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId }] }],
          objectWriteTraceId: String(inputs.length),
        });
      });
      if (inputs.length > 0) {
        const sent = inputs.map((input) => Object.keys(input.properties));
        const res = await sendWrite(() => batchApi.create(c.objectType, { inputs }, readableResponses), sent, context);
        const mapped = mapBatch(res, pending.map((i) => writes[i]!.key), c.keyProperty, () => true);
        pending.forEach((i, n) => (out[i] = mapped[n]));
      }
      return out.map((r) => r ?? { ok: false, error: noResult() });
    },

    async findActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<Map<string, string>> {
      // Read-after-write consistent path: parent -> its associated activities (v4) -> their key
      // property. Search would be one call, but its index lags writes by seconds.
      const c = config(object, 'activity');
      const found = new Map<string, string>();
      if (writes.length === 0) return found;
      const parents = await resolveParents(writes.filter((w) => c.parents[w.parent.object] !== undefined), context);
      const candidates = new Set<string>();
      const byParentObject = new Map<string, Set<string>>();
      for (const w of writes) {
        const id = parents.get(parentMemoKey(w.parent.object, w.parent.externalId));
        if (id) byParentObject.set(w.parent.object, (byParentObject.get(w.parent.object) ?? new Set()).add(id));
      }
      for (const [parentObject, ids] of byParentObject) {
        const parentType = config(parentObject, 'record').objectType;
        let inputs: { id: string; after?: string }[] = [...ids].map((id) => ({ id }));
        while (inputs.length > 0) {
          const next: { id: string; after?: string }[] = [];
          for (let i = 0; i < inputs.length; i += READ_CHUNK) {
            const chunk = inputs.slice(i, i + READ_CHUNK);
            // A parent with no associations comes back as a 207 error (NO_ASSOCIATIONS_FOUND): nothing to match.
            const page = await send(() => associationsApi.getPage(parentType, c.objectType, { inputs: chunk }, readableResponses));
            for (const r of page.results ?? []) {
              for (const t of r.to ?? []) candidates.add(String(t.toObjectId));
              const after = r.paging?.next?.after;
              if (after && r._from?.id) next.push({ id: r._from.id, after });
            }
          }
          inputs = next;
        }
      }
      const wanted = new Set(writes.map((w) => w.key));
      const ids = [...candidates];
      for (let i = 0; i < ids.length; i += READ_CHUNK) {
        const res = await send(() =>
          batchApi.read(c.objectType, { inputs: ids.slice(i, i + READ_CHUNK).map((id) => ({ id })), properties: [c.keyProperty], propertiesWithHistory: [] }, undefined, readableResponses),
        );
        for (const r of res.results ?? []) {
          const key = r.properties?.[c.keyProperty];
          if (key && wanted.has(key) && !found.has(key)) found.set(key, String(r.id));
        }
      }
      return found;
    },

    classifyError: (err: unknown) => classifyHubSpotError(err),

    apiCalls: () => calls,
  };
}
