/**
 * The CRM half of fakeHubSpot: objects, properties and records, and the REST surface over them
 * (v3 objects, v3 properties; the v4 association endpoints are routed to
 * hubspot-fake-crm-associations.ts). Auth, rate limits and faults live in hubspot-fake-state.ts;
 * calling `route` commits.
 */
import type { FakeRequest, FakeResponse } from '../../testing/fake-http.js';
import { RecordStore } from '../../fake-store.js';
import type { FakeHubSpotOptions } from './hubspot-fake-options.js';
import { associationType, associationTypesBetween, type AssociationType } from './hubspot-fake-associations.js';
import { FakeHubSpotAssociations, type FakeHubSpotAssociation } from './hubspot-fake-crm-associations.js';
import { asArray, asBody, BATCH_LIMIT, batchEnvelope, errorBody, objectTypeAliases, singular, type Body, type StoredRecord } from './hubspot-fake-records.js';
import {
  checkPropertyValue, DEFAULT_PIPELINE, DEFAULT_PROPERTIES, pipelinesView, propertyDef, propertyErrorDetails, propertyErrorMessage, propertyView,
  type FakePipeline, type FakePropertyDefinition, type PropertyDef, type PropertyProblem,
} from './hubspot-fake-properties.js';
import { searchRecords } from './hubspot-fake-search.js';

export { errorBody, type FakeHubSpotAssociation, type FakePipeline, type FakePropertyDefinition };

export interface FakeHubSpotRecord {
  id: string;
  properties: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  /** Associated record ids by object type, one entry per association type id (a primary company also has its unlabeled 279/341). */
  associations: Record<string, { id: string; typeId: number }[]>;
}

interface ObjectStore {
  properties: Map<string, PropertyDef>;
  /** Indexed by every unique property, the activities' key property, and any property looked up by value. */
  records: RecordStore<StoredRecord>;
  required: string[];
}

// The property activities carry their idempotency key in (indexed: the adapters look records up by it).
const KEY_PROPERTY = 'crm_upsert_key';
const readOnly = ['hs_object_id', 'createdate', 'lastmodifieddate', 'hs_createdate', 'hs_lastmodifieddate'];

function propertyError(name: string, error: string, message: string): string {
  return propertyErrorMessage([{ name, error, message }]);
}

/** HubSpot's 400 for refused properties; the per-property `errors` come with refused values (as HubSpot sends them). */
function refused(problems: readonly PropertyProblem[]): { message: string; extra: Body } {
  const valued = problems.filter((p) => p.value !== undefined);
  return { message: propertyErrorMessage(problems), extra: valued.length > 0 ? { errors: propertyErrorDetails(valued) } : {} };
}

/** A batch read's or update's 207 error for the ids that name no record. */
const notFound = (type: string, ids: string[]): Body[] => ids.length === 0 ? [] : [{
  status: 'error', category: 'OBJECT_NOT_FOUND', message: `Could not get some ${(singular[objectTypeAliases[type] ?? type] ?? type).toUpperCase()} objects, they may be deleted or not exist. Check that ids are valid.`,
  context: { ids }, errors: [], links: {},
}];

export class FakeHubSpotCrm {
  private readonly stores = new Map<string, ObjectStore>();
  private nextId = 1000;
  private readonly now: () => number;
  /** The associations between the records, and the v4 endpoints over them. */
  private readonly links: FakeHubSpotAssociations;
  /** The deal pipelines, in display order. */
  private readonly pipelines: FakePipeline[] = [DEFAULT_PIPELINE];
  /** `type\u0000id` of a record merged away -> the id of the record that holds it now (merges chain). */
  private readonly mergedInto = new Map<string, string>();

  constructor(private readonly options: FakeHubSpotOptions) {
    this.now = options.now ?? Date.now;
    this.links = new FakeHubSpotAssociations({
      has: (objectType) => this.stores.has(objectType),
      get: (objectType, id) => this.stores.get(objectType)?.records.get(this.survivorOf(objectType, id)),
      unknownType: (objectType) => this.unknownType(objectType),
      envelope: (results, errors, okStatus) => this.batchEnvelope(results, errors, okStatus),
      pageSize: options.associationPageSize ?? 500,
      createStatus: options.associationCreateStatus ?? 201,
    });
    for (const [type, props] of Object.entries(DEFAULT_PROPERTIES)) {
      const store = this.store(type, true)!;
      for (const [name, d] of Object.entries(props)) store.properties.set(name, propertyDef(d, false));
      if (type === 'notes' || type === 'tasks') store.required.push('hs_timestamp');
    }
    for (const type of ['contacts', 'companies', 'deals']) this.defineProperty(type, 'ai_external_id', { unique: true });
    for (const type of ['notes', 'tasks']) {
      this.defineProperty(type, KEY_PROPERTY);
      this.indexProperty(this.store(type)!, KEY_PROPERTY);
    }
  }

  private store(objectType: string, create = false): ObjectStore | undefined {
    const type = objectTypeAliases[objectType] ?? objectType;
    let s = this.stores.get(type);
    if (!s && create) {
      s = { properties: new Map(), records: new RecordStore((r) => r.id), required: [] };
      for (const p of readOnly) s.properties.set(p, propertyDef({ unique: p === 'hs_object_id', readOnly: true, type: p === 'hs_object_id' ? 'number' : 'datetime' }, false));
      // Set by a merge on the record it makes: the ids merged into it, `;`-separated [format I].
      s.properties.set('hs_merged_object_ids', propertyDef({ readOnly: true, type: 'string', fieldType: 'text' }, false));
      this.indexProperty(s, 'hs_object_id');
      this.stores.set(type, s);
    }
    return s;
  }

  private indexProperty(store: ObjectStore, name: string): void {
    store.records.ensureIndex(name, (r) => r.properties.get(name));
  }

  /** The oldest record whose `name` is `value` (what a scan would find first), through the index. */
  private byProperty(store: ObjectStore, name: string, value: string): StoredRecord | undefined {
    this.indexProperty(store, name);
    return store.records.lookup(name, value)[0];
  }

  defineProperty(objectType: string, name: string, definition: FakePropertyDefinition = {}): void {
    const store = this.store(objectType, true)!;
    store.properties.set(name, propertyDef(definition, true));
    if (definition.unique) this.indexProperty(store, name);
  }

  /** Add (or replace, by id) a deal pipeline: its stage ids become `dealstage` values, its id a `pipeline` value. */
  definePipeline(pipeline: FakePipeline): void {
    const at = this.pipelines.findIndex((p) => p.id === pipeline.id);
    if (at >= 0) this.pipelines[at] = pipeline;
    else this.pipelines.push(pipeline);
  }

  /**
   * Put a record straight into the store (no request, no limits, no validation beyond unique
   * values): for seeding large portals in tests and benchmarks. Returns the new record's id.
   */
  seed(objectType: string, properties: Record<string, string>, at: number = this.now()): string {
    const type = objectTypeAliases[objectType] ?? objectType;
    const store = this.store(type);
    if (!store) throw new Error(`fakeHubSpot: unknown object type ${objectType}`);
    const conflict = this.uniqueConflict(type, store, properties, null);
    if (conflict) throw new Error(`fakeHubSpot: cannot seed ${type}: ${String(asBody(conflict.body).message)}`);
    const record = this.newRecord(at);
    this.write(record, properties, at);
    store.records.put(record);
    return record.id;
  }

  /**
   * Delete a record as a user in HubSpot would: it is gone, and so are its associations on the
   * records it was associated with. Returns whether it existed.
   */
  remove(objectType: string, id: string): boolean {
    const type = objectTypeAliases[objectType] ?? objectType;
    const record = this.store(type)?.records.get(id);
    if (!record) return false;
    this.links.forget(type, record);
    this.store(type)!.records.delete(id);
    return true;
  }

  /** The id a record is found under now: itself, or the record a merge made of it (ids of merged-away records stay routable). */
  private survivorOf(objectType: string, id: string): string {
    return this.mergedInto.get(`${objectTypeAliases[objectType] ?? objectType}\u0000${id}`) ?? id;
  }

  /**
   * POST /crm/v3/objects/{objectType}/merge `{ primaryObjectId, objectIdToMerge }`, as HubSpot
   * merges contacts and companies since its 2024 change (developers.hubspot.com/changelog,
   * "Updated merge functionality for contacts and companies" [V]): both records end and a new record
   * with a new id holds the result; the primary's property values are current, the other's fill what
   * the primary leaves empty [V changelog for the primary; the filling I, third-party accounts];
   * the associations of both move to it [V third-party, and "associations from the primary record
   * will be prioritized": the primary's are made last]; and both old ids keep answering: a read (or
   * an association, an update by id) naming one reaches the new record, whose
   * `hs_merged_object_ids` lists them [V changelog for reads; writes by an old id I]. A unique
   * property both records hold keeps the primary's value: the other's is lost, so an upsert by it
   * creates a record [I: undocumented]. The same new-record rule is applied to every object type
   * here [I for deals and custom objects]. A missing id answers 404 OBJECT_NOT_FOUND and a record
   * merged with itself 400 VALIDATION_ERROR [I: bodies not on record].
   */
  merge(objectType: string, primaryObjectId: string, objectIdToMerge: string): FakeResponse {
    const type = objectTypeAliases[objectType] ?? objectType;
    const store = this.store(type);
    if (!store) return this.unknownType(objectType);
    const primary = this.find(store, primaryObjectId);
    const other = this.find(store, objectIdToMerge);
    if (!primary || !other) return errorBody(404, 'OBJECT_NOT_FOUND', 'Object not found.  objectId are usually numeric.');
    if (primary === other) return errorBody(400, 'VALIDATION_ERROR', `Cannot merge ${singular[type] ?? type} ${primary.id} into itself.`);
    const t = this.now();
    const survivor = this.newRecord(Math.min(primary.createdAt, other.createdAt));
    for (const from of [other, primary]) {
      for (const [name, value] of from.properties) if (value !== '' && !readOnly.includes(name)) survivor.properties.set(name, value);
    }
    const merged = [primary, other].flatMap((r) => [...(r.properties.get('hs_merged_object_ids')?.split(';').filter(Boolean) ?? []), r.id]);
    survivor.properties.set('hs_merged_object_ids', merged.join(';'));
    survivor.properties.set('lastmodifieddate', new Date(t).toISOString());
    survivor.updatedAt = t;
    const moved = [other, primary].flatMap((r) => [...r.associations].flatMap(([toType, m]) => [...m].flatMap(([toId, typeIds]) => [...typeIds].map((typeId) => ({ toType, toId, typeId })))));
    for (const r of [primary, other]) this.remove(type, r.id);
    store.records.put(survivor);
    for (const { toType, toId, typeId } of moved) {
      const to = this.stores.get(toType)?.records.get(toId);
      const kind = associationType(type, toType, typeId);
      if (to && kind) this.links.associate(survivor, kind, to);
    }
    for (const [key, id] of this.mergedInto) if (id === primary.id || id === other.id) this.mergedInto.set(key, survivor.id);
    for (const id of merged) this.mergedInto.set(`${type}\u0000${id}`, survivor.id);
    return { status: 200, body: this.view(survivor) };
  }

  /** Remove a property definition (a field the portal does not have). */
  removeProperty(objectType: string, name: string): void {
    this.store(objectType)?.properties.delete(name);
  }

  records(objectType: string): FakeHubSpotRecord[] {
    const s = this.store(objectType);
    if (!s) return [];
    return [...s.records.values()].map((r) => ({
      id: r.id,
      properties: Object.fromEntries(r.properties),
      createdAt: new Date(r.createdAt).toISOString(),
      updatedAt: new Date(r.updatedAt).toISOString(),
      associations: Object.fromEntries([...r.associations].map(([t, m]) => [t, [...m].flatMap(([id, types]) => [...types].map((typeId) => ({ id, typeId })))])),
    }));
  }

  /** Every association of one record, from its side; [] for a record that does not exist. */
  associations(objectType: string, id: string): FakeHubSpotAssociation[] {
    return this.links.list(objectType, id);
  }

  /** Serve one authorised, unthrottled request. */
  route(req: FakeRequest): FakeResponse {
    const p = req.path.split('/').filter(Boolean);
    const body = asBody(req.body);
    if (p[0] !== 'crm') return errorBody(404, 'OBJECT_NOT_FOUND', `No route for ${req.method} ${req.path}`);
    if (p[1] === 'v3' && p[2] === 'objects' && p[3]) {
      const type = p[3];
      if (req.method === 'POST' && p[4] === 'batch' && p.length === 6) {
        const inputs = asArray(body.inputs);
        if (inputs.length > BATCH_LIMIT) {
          return errorBody(400, 'VALIDATION_ERROR', `Batch input limit exceeded: ${inputs.length} inputs, the maximum is ${BATCH_LIMIT}.`);
        }
        if (p[5] === 'upsert') return this.batchUpsert(type, inputs);
        if (p[5] === 'create') return this.batchCreate(type, inputs);
        if (p[5] === 'read') return this.batchRead(type, body);
        if (p[5] === 'update') return this.batchUpdate(type, inputs);
      }
      if (req.method === 'POST' && p[4] === 'search' && p.length === 5) return this.search(type, body);
      if (req.method === 'POST' && p[4] === 'merge' && p.length === 5) return this.merge(type, String(body.primaryObjectId ?? ''), String(body.objectIdToMerge ?? ''));
      if (req.method === 'POST' && p.length === 4) return this.singleCreate(type, body);
      if (req.method === 'GET' && p.length === 5) return this.getById(type, p[4]!, req.query);
    }
    if (p[1] === 'v4' && p[2] === 'associations' && p.length === 6 && p[5] === 'labels' && req.method === 'GET') return this.links.labels(p[3]!, p[4]!);
    if (p[1] === 'v4' && p[2] === 'associations' && p.length === 7 && p[5] === 'batch' && req.method === 'POST') {
      if (p[6] === 'read') return this.links.read(p[3]!, p[4]!, body);
      if (p[6] === 'create') return this.links.create(p[3]!, p[4]!, body);
    }
    if (p[1] === 'v3' && p[2] === 'pipelines' && p.length === 4 && req.method === 'GET') {
      if ((objectTypeAliases[p[3]!] ?? p[3]) !== 'deals') return errorBody(400, 'VALIDATION_ERROR', `Unable to infer object type from: ${p[3]!}`);
      return { status: 200, body: pipelinesView(this.pipelines, new Date(0).toISOString()) };
    }
    if (p[1] === 'v3' && p[2] === 'properties' && p[3]) {
      if (req.method === 'GET' && p.length === 4) return this.listProperties(p[3]);
      if (req.method === 'GET' && p.length === 5) return this.getProperty(p[3], p[4]!);
      if (req.method === 'POST' && p.length === 4) return this.createProperty(p[3], body);
    }
    return errorBody(404, 'OBJECT_NOT_FOUND', `No route for ${req.method} ${req.path}`);
  }

  private unknownType(type: string): FakeResponse {
    return errorBody(400, 'VALIDATION_ERROR', `Unable to infer object type from: ${type}`);
  }

  /** Problems with one input's properties, as HubSpot words them; null when valid. `record`: the one it updates. */
  private invalidProperties(store: ObjectStore, props: Body, creating: boolean, record?: StoredRecord): { message: string; extra: Body } | null {
    // A stage written alone is held to the pipeline the deal is in.
    const siblings = record?.properties.get('pipeline') && props.pipeline === undefined ? { ...props, pipeline: record.properties.get('pipeline') } : props;
    const values: PropertyProblem[] = [];
    for (const name of Object.keys(props)) {
      const def = store.properties.get(name);
      if (!def) return refused([{ name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` }]);
      if (def.readOnly || def.calculated) return refused([{ name, error: 'READ_ONLY_VALUE', message: `"${name}" is a read only property; its value cannot be set.` }]);
      const v = props[name];
      if (v !== null && typeof v === 'object') return refused([{ name, error: 'INVALID_OPTION', message: `${JSON.stringify(v)} is not a valid value for "${name}"` }]);
      const problem = v === null || v === undefined ? null : checkPropertyValue(name, def, String(v), this.pipelines, siblings);
      if (problem) values.push(problem);
    }
    if (values.length > 0) return refused(values);
    if (creating) {
      for (const name of store.required) {
        if (props[name] === undefined || props[name] === null || props[name] === '') {
          return refused([{ name, error: 'REQUIRED_PROPERTY', message: `Property "${name}" is required` }]);
        }
      }
    }
    return null;
  }

  private uniqueConflict(type: string, store: ObjectStore, props: Body, selfId: string | null): FakeResponse | null {
    for (const [name, value] of Object.entries(props)) {
      if (!store.properties.get(name)?.unique || value === null || value === '') continue;
      this.indexProperty(store, name);
      const holder = store.records.lookup(name, String(value)).find((r) => r.id !== selfId);
      if (holder) {
        const status = this.options.uniqueConflictStatus ?? 409;
        const label = singular[type] ?? type;
        return errorBody(status, status === 409 ? 'CONFLICT' : 'VALIDATION_ERROR', `${label.charAt(0).toUpperCase()}${label.slice(1)} already exists. Existing ID: ${holder.id}`);
      }
    }
    return null;
  }

  private write(record: StoredRecord, props: Body, t: number): void {
    for (const [name, value] of Object.entries(props)) record.properties.set(name, value === null ? '' : String(value));
    record.properties.set('lastmodifieddate', new Date(t).toISOString());
    record.updatedAt = t;
  }

  private newRecord(t: number): StoredRecord {
    const id = String(this.nextId++);
    const iso = new Date(t).toISOString();
    return { id, properties: new Map([['hs_object_id', id], ['createdate', iso], ['lastmodifieddate', iso]]), createdAt: t, updatedAt: t, associations: new Map() };
  }

  /**
   * A record as HubSpot answers it. With `only`, the three default properties and those asked for;
   * given `store`, a property the object does not define is left out ("If a requested property isn't
   * defined, it won't be included in the response", crm-contacts-v3 guide) and one without a value is null.
   */
  private view(r: StoredRecord, only?: string[], store?: ObjectStore): Body {
    const base = ['hs_object_id', 'createdate', 'lastmodifieddate'];
    const props: Record<string, string | null> = {};
    if (only) {
      for (const p of [...base, ...only]) if (!store || store.properties.has(p)) props[p] = r.properties.get(p) ?? null;
    } else {
      for (const [k, v] of r.properties) props[k] = v;
    }
    return { id: r.id, properties: props, createdAt: new Date(r.createdAt).toISOString(), updatedAt: new Date(r.updatedAt).toISOString(), archived: false };
  }

  private batchEnvelope(results: Body[], errors: Body[], okStatus: number): FakeResponse {
    return batchEnvelope(new Date(this.now()).toISOString(), results, errors, okStatus);
  }

  private batchUpsert(type: string, inputs: unknown[]): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    const parsed = inputs.map(asBody);
    for (const input of parsed) {
      const idProperty = typeof input.idProperty === 'string' ? input.idProperty : undefined;
      if (!idProperty || !store.properties.has(idProperty)) {
        return errorBody(400, 'VALIDATION_ERROR', propertyError(String(idProperty), 'PROPERTY_DOESNT_EXIST', `Property "${String(idProperty)}" does not exist`));
      }
      if (!store.properties.get(idProperty)!.unique) {
        return errorBody(400, 'VALIDATION_ERROR', `Unable to perform update/upsert by non-unique ${idProperty} property`);
      }
      if (typeof input.id !== 'string' || input.id === '') return errorBody(400, 'VALIDATION_ERROR', 'Each input needs a non-empty id.');
    }
    const ids = parsed.map((i) => `${String(i.idProperty)}\u0000${String(i.id)}`);
    const dupes = [...new Set(ids.filter((id, n) => ids.indexOf(id) !== n))];
    if (dupes.length > 0 && (this.options.duplicateIdsInBatch ?? 'error') === 'error') {
      return errorBody(400, 'VALIDATION_ERROR', `Duplicate IDs found in batch input: [${dupes.map((d) => d.split('\u0000')[1]).join(', ')}]. IDs must be unique`);
    }
    // Real HubSpot fails the whole upsert batch on one bad property: the engine splits to isolate it.
    for (const input of parsed) {
      const problem = this.invalidProperties(store, asBody(input.properties), false, this.byProperty(store, input.idProperty as string, input.id as string));
      if (problem) return errorBody(400, 'VALIDATION_ERROR', problem.message, problem.extra);
    }
    // HubSpot fails the whole upsert batch with a 409 naming only the first conflict.
    if ((this.options.batchConflicts ?? 'reject-batch') === 'reject-batch') {
      for (const input of parsed) {
        const existing = this.byProperty(store, input.idProperty as string, input.id as string);
        const conflict = this.uniqueConflict(type, store, asBody(input.properties), existing?.id ?? '');
        if (conflict) return conflict;
      }
    }
    const t = this.now();
    const results: Body[] = [];
    const errors: Body[] = [];
    for (const input of parsed) {
      const idProperty = input.idProperty as string;
      const value = input.id as string;
      const props = asBody(input.properties);
      const existing = this.byProperty(store, idProperty, value);
      const conflict = this.uniqueConflict(type, store, props, existing?.id ?? '');
      const trace = typeof input.objectWriteTraceId === 'string' ? input.objectWriteTraceId : undefined;
      if (conflict || (!existing && this.invalidProperties(store, props, true))) {
        const message = conflict ? String(asBody(conflict.body).message) : this.invalidProperties(store, props, true)!.message;
        errors.push({ status: 'error', category: conflict ? 'CONFLICT' : 'VALIDATION_ERROR', message, context: { ids: [value], ...(trace ? { objectWriteTraceId: [trace] } : {}) }, errors: [], links: {} });
        continue;
      }
      const record = existing ?? this.newRecord(t);
      if (existing) store.records.update(record, (r) => this.write(r, { ...props, [idProperty]: value }, t));
      else {
        this.write(record, { ...props, [idProperty]: value }, t);
        store.records.put(record);
      }
      results.push({ ...this.view(record), new: !existing, ...(trace ? { objectWriteTraceId: trace } : {}) });
    }
    return this.batchEnvelope(results, errors, 200);
  }

  /**
   * POST …/batch/update, by HubSpot id or by a unique `idProperty` given per input: one refused
   * property value fails the whole batch; an id no record holds is never created: it gets a 207
   * OBJECT_NOT_FOUND error naming it in `context.ids` (the batch read's body, which third-party
   * fixtures of batch/update show too) [I: HubSpot's reference documents the 207, not this body].
   */
  private batchUpdate(type: string, inputs: unknown[]): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    const parsed = inputs.map(asBody);
    for (const input of parsed) {
      const record = this.find(store, String(input.id ?? ''), typeof input.idProperty === 'string' ? input.idProperty : undefined);
      const problem = this.invalidProperties(store, asBody(input.properties), false, record);
      if (problem) return errorBody(400, 'VALIDATION_ERROR', problem.message, problem.extra);
    }
    const t = this.now();
    const results: Body[] = [];
    const missing: string[] = [];
    const traces: string[] = [];
    for (const input of parsed) {
      const id = String(input.id ?? '');
      const trace = typeof input.objectWriteTraceId === 'string' ? input.objectWriteTraceId : undefined;
      const record = this.find(store, id, typeof input.idProperty === 'string' ? input.idProperty : undefined);
      if (!record) {
        missing.push(id);
        if (trace) traces.push(trace);
        continue;
      }
      store.records.update(record, (r) => this.write(r, asBody(input.properties), t));
      results.push({ ...this.view(record), ...(trace ? { objectWriteTraceId: trace } : {}) });
    }
    // The missing inputs' trace ids ride in the error's context next to their ids (as third-party
    // fixtures of batch/update record it, rudderlabs/rudder-transformer) [I: not in HubSpot's reference].
    const errors = notFound(type, missing).map((e) => (traces.length > 0 ? { ...e, context: { ...asBody(e.context), objectWriteTraceId: traces } } : e));
    return this.batchEnvelope(results, errors, 200);
  }

  private batchCreate(type: string, inputs: unknown[]): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    const parsed = inputs.map(asBody);
    const traces = parsed.map((i) => (typeof i.objectWriteTraceId === 'string' ? i.objectWriteTraceId : undefined));
    // Partial (207) results only when every input carries a unique trace id; otherwise one bad input fails the call.
    const traced = traces.every((t) => t !== undefined) && new Set(traces).size === traces.length;
    const fromType = objectTypeAliases[type] ?? type;
    const links = parsed.map((input) => this.links.checkInline(fromType, asArray(input.associations)));
    const problems = parsed.map((input, n): { category: string; message: string; context?: Record<string, string[]>; extra?: Body } | null => {
      const props = asBody(input.properties);
      const invalid = this.invalidProperties(store, props, true);
      if (invalid) return { category: 'VALIDATION_ERROR', message: invalid.message, extra: invalid.extra };
      const assoc = links[n]!;
      if (!Array.isArray(assoc)) return { category: 'VALIDATION_ERROR', ...assoc };
      const conflict = this.uniqueConflict(type, store, props, null);
      if (conflict) return { category: 'CONFLICT', message: String(asBody(conflict.body).message) };
      return null;
    });
    const firstProblem = problems.find((p) => p !== null);
    if (firstProblem && !traced) return errorBody(400, firstProblem.category, firstProblem.message, { ...firstProblem.extra, ...(firstProblem.context ? { context: firstProblem.context } : {}) });
    const t = this.now();
    const results: Body[] = [];
    const errors: Body[] = [];
    parsed.forEach((input, n) => {
      const problem = problems[n];
      if (problem) {
        errors.push({ status: 'error', category: problem.category, message: problem.message, context: { ...problem.context, objectWriteTraceId: [traces[n]!] }, errors: [], ...problem.extra, links: {} });
        return;
      }
      const record = this.newRecord(t);
      this.write(record, asBody(input.properties), t);
      store.records.put(record);
      for (const a of links[n] as { type: AssociationType; to: StoredRecord }[]) this.links.associate(record, a.type, a.to);
      results.push({ ...this.view(record), ...(traces[n] ? { objectWriteTraceId: traces[n] } : {}) });
    });
    return this.batchEnvelope(results, errors, 201);
  }

  private singleCreate(type: string, body: Body): FakeResponse {
    const r = this.batchCreate(type, [{ properties: body.properties, associations: body.associations }]);
    if (r.status !== 201) return r;
    return { status: 201, body: asArray(asBody(r.body).results)[0] };
  }

  private find(store: ObjectStore, id: string, idProperty?: string): StoredRecord | undefined {
    if (!idProperty || idProperty === 'hs_object_id') return store.records.get(id) ?? this.merged(store, id);
    return this.byProperty(store, idProperty, id);
  }

  /**
   * POST …/batch/read: by HubSpot id (no idProperty, or `hs_object_id`), by a unique property, or
   * contacts by `email` (HubSpot's one non-unique idProperty: "it can be used for contacts exclusively
   * with email", developers.hubspot.com/docs/api-reference/crm-contacts-v3/guide), matched without
   * regard to case [I: HubSpot keeps contact emails lowercase; the fake keeps what was written and
   * compares lowercase]. Answers only the requested properties plus hs_object_id, createdate and
   * lastmodifieddate, which HubSpot always sends (HubSpot/hubspot-api-python#357); 200 when every id
   * is found, else 207 with one OBJECT_NOT_FOUND error listing the others in `context.ids` (as asked),
   * also when none is found.
   */
  private batchRead(type: string, body: Body): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    const idProperty = typeof body.idProperty === 'string' ? body.idProperty : undefined;
    const byEmail = idProperty === 'email' && (objectTypeAliases[type] ?? type) === 'contacts';
    // [I] no public record of this refusal's exact body was found; the upsert's own is in batchUpsert.
    if (idProperty && !byEmail && !store.properties.get(idProperty)?.unique) {
      return errorBody(400, 'VALIDATION_ERROR', `Property "${idProperty}" is not a unique identifier property for ${type}.`);
    }
    const props = asArray(body.properties).map(String);
    const results: StoredRecord[] = [];
    const missing: string[] = [];
    for (const input of asArray(body.inputs).map(asBody)) {
      const id = String(input.id ?? '');
      const r = byEmail ? this.byEmail(store, id) : this.find(store, id, idProperty);
      if (r && !results.includes(r)) results.push(r);
      else if (!r) missing.push(id);
    }
    return this.batchEnvelope(results.map((r) => this.view(r, props, store)), notFound(type, missing), 200);
  }

  /** The record a merge made of the merged-away record `id` (of `store`'s type), if any. */
  private merged(store: ObjectStore, id: string): StoredRecord | undefined {
    const type = [...this.stores].find(([, st]) => st === store)?.[0];
    const to = type === undefined ? undefined : this.mergedInto.get(`${type}\u0000${id}`);
    return to === undefined ? undefined : store.records.get(to);
  }

    /** The oldest contact whose email is `value`, compared lowercase. */
  private byEmail(store: ObjectStore, value: string): StoredRecord | undefined {
    store.records.ensureIndex('email (lowercase)', (r) => r.properties.get('email')?.toLowerCase() || undefined);
    return store.records.lookup('email (lowercase)', value.toLowerCase())[0];
  }

  private getById(type: string, id: string, query: URLSearchParams): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    const r = this.find(store, id, query.get('idProperty') ?? undefined);
    if (!r) return errorBody(404, 'OBJECT_NOT_FOUND', 'Object not found.  objectId are usually numeric.');
    const props = query.getAll('properties').flatMap((p) => p.split(','));
    const view = this.view(r, props.length > 0 ? props : undefined);
    const assocTypes = query.getAll('associations').flatMap((p) => p.split(','));
    if (assocTypes.length > 0) {
      const associations: Body = {};
      for (const t of assocTypes) {
        const toType = objectTypeAliases[t] ?? t;
        const m = r.associations.get(toType);
        const from = objectTypeAliases[type] ?? type;
        // v3 names a primary association `deal_to_company` and the unlabeled one beside it
        // `deal_to_company_unlabeled` (a real answer on community.hubspot.com, td-p/658333).
        const hasPrimary = associationTypesBetween(from, toType).some((d) => d.label === 'Primary');
        const name = (typeId: number) => {
          const base = `${singular[from]}_to_${singular[toType]}`;
          return hasPrimary && associationType(from, toType, typeId)?.label === null ? `${base}_unlabeled` : base;
        };
        if (m && m.size > 0) associations[toType] = { results: [...m].flatMap(([aid, types]) => [...types].map((typeId) => ({ id: aid, type: name(typeId) }))) };
      }
      view.associations = associations;
    }
    return { status: 200, body: view };
  }

  private search(type: string, body: Body): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    return searchRecords(store.records, body, this.now() - (this.options.searchLagMs ?? 0), (r, props) => this.view(r, props), (name) => this.indexProperty(store, name));
  }

  private propertyView(type: string, name: string, p: PropertyDef): Body {
    return propertyView(name, p, `${singular[objectTypeAliases[type] ?? type] ?? type}information`);
  }

  private listProperties(type: string): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    return { status: 200, body: { results: [...store.properties].map(([name, p]) => this.propertyView(type, name, p)) } };
  }

  private getProperty(type: string, name: string): FakeResponse {
    const p = this.store(type)?.properties.get(name);
    if (!p) return errorBody(404, 'OBJECT_NOT_FOUND', `Unable to find property with name: ${name}`);
    return { status: 200, body: this.propertyView(type, name, p) };
  }

  private createProperty(type: string, body: Body): FakeResponse {
    const store = this.store(type);
    if (!store) return this.unknownType(type);
    const name = typeof body.name === 'string' ? body.name : '';
    if (!/^[a-z][a-z0-9_]*$/.test(name)) return errorBody(400, 'VALIDATION_ERROR', `Invalid property name: "${name}"`);
    if (!body.label || !body.type || !body.fieldType || !body.groupName) {
      return errorBody(400, 'VALIDATION_ERROR', 'Property definitions need name, label, type, fieldType and groupName.');
    }
    if (store.properties.has(name)) return errorBody(409, 'OBJECT_ALREADY_EXISTS', `Property named '${name}' already exists.`);
    const unique = body.hasUniqueValue === true;
    const canonical = objectTypeAliases[type] ?? type;
    if (unique && (canonical === 'notes' || canonical === 'tasks')) {
      return errorBody(400, 'VALIDATION_ERROR', `Unique value properties are not supported for ${canonical}.`);
    }
    const options = asArray(body.options).map(asBody).filter((o) => typeof o.value === 'string').map((o) => ({ value: String(o.value), label: typeof o.label === 'string' ? o.label : String(o.value) }));
    store.properties.set(name, propertyDef({ unique, type: String(body.type), fieldType: String(body.fieldType), options }, true));
    if (unique) this.indexProperty(store, name);
    return { status: 201, body: this.propertyView(type, name, store.properties.get(name)!) };
  }
}
