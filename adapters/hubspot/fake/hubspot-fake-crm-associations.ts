/**
 * The associations of fakeHubSpot's portal: the v4 association endpoints (batch create, batch
 * read, labels) and the inline associations of a create, applied to the records the portal
 * (hubspot-fake-crm.ts) holds. The rules themselves (which type ids each pair has, HubSpot's
 * bodies) are data in hubspot-fake-associations.ts.
 */
import type { FakeResponse } from '../../testing/fake-http.js';
import {
  associationType, associationTypeFrom, associationTypesBetween, checkAssociationSpec, duplicateAssociationMessage, invalidObjectContext, OBJECT_TYPE_IDS,
  primaryOwner, unlabeledCompanion, type AssociationType,
} from './hubspot-fake-associations.js';
import { asArray, asBody, BATCH_LIMIT, errorBody, objectTypeAliases, singular, type Body, type StoredRecord } from './hubspot-fake-records.js';

/** What the associations need from the portal. */
export interface AssociationHost {
  /** Whether the portal has this object type (canonical plural name). */
  has(objectType: string): boolean;
  /** One record by its HubSpot id. */
  get(objectType: string, id: string): StoredRecord | undefined;
  unknownType(objectType: string): FakeResponse;
  envelope(results: Body[], errors: Body[], okStatus: number): FakeResponse;
  /** Associations per `from` id in one page of a batch read. */
  readonly pageSize: number;
  /** The status of a batch create without errors (FakeHubSpotOptions.associationCreateStatus). */
  readonly createStatus: 200 | 201;
}

/** One association of a record, as `fake.associations(objectType, id)` lists it. */
export interface FakeHubSpotAssociation {
  /** The associated record's object type (`companies`, ...). */
  toObjectType: string;
  toId: string;
  /** HUBSPOT_DEFINED association type id, from this record's side (note->contact 202). */
  typeId: number;
  /** `null` for the unlabeled type, `Primary` for a primary company. */
  label: string | null;
}

export class FakeHubSpotAssociations {
  constructor(private readonly host: AssociationHost) {}

  /** Every association of one record, from its side; [] for a record that does not exist. */
  list(objectType: string, id: string): FakeHubSpotAssociation[] {
    const from = objectTypeAliases[objectType] ?? objectType;
    const record = this.host.get(from, id);
    if (!record) return [];
    return [...record.associations].flatMap(([toObjectType, m]) => [...m].flatMap(([toId, types]) =>
      [...types].map((typeId) => ({ toObjectType, toId, typeId, label: associationType(from, toObjectType, typeId)?.label ?? null }))));
  }

  /** A deleted record's associations go with it, on the records it was associated with. */
  forget(objectType: string, record: StoredRecord): void {
    for (const [toType, ids] of record.associations) for (const toId of ids.keys()) this.host.get(toType, toId)?.associations.get(objectType)?.delete(record.id);
  }

  private link(a: StoredRecord, toType: string, b: StoredRecord, typeId: number): void {
    const m = a.associations.get(toType) ?? new Map<string, Set<number>>();
    const types = m.get(b.id) ?? new Set<number>();
    types.add(typeId);
    m.set(b.id, types);
    a.associations.set(toType, m);
  }

  /**
   * Associate two existing records with a type valid for the pair, from both sides. A labeled type
   * brings its unlabeled companion (HubSpot always lists the unlabeled type), and a primary label
   * moves off the owner's previous primary record. Re-creating an existing association changes nothing.
   */
  associate(from: StoredRecord, t: AssociationType, to: StoredRecord): void {
    const owner = primaryOwner(t);
    if (owner) {
      const [side, otherType, ownType] = owner === 'from' ? [from, t.to, t.typeId] : [to, t.from, t.inverse];
      const keep = owner === 'from' ? to.id : from.id;
      for (const [otherId, types] of side.associations.get(otherType) ?? []) {
        if (otherId === keep || !types.delete(ownType)) continue;
        const sideType = owner === 'from' ? t.from : t.to;
        this.host.get(otherType, otherId)?.associations.get(sideType)?.get(side.id)?.delete(owner === 'from' ? t.inverse : t.typeId);
      }
    }
    for (const type of [unlabeledCompanion(t), t]) {
      if (!type) continue;
      this.link(from, t.to, to, type.typeId);
      this.link(to, t.from, from, type.inverse);
    }
  }

  /** An input's inline associations, checked against the pair each type id defines: the links to make, or the problem. */
  checkInline(fromType: string, associations: unknown[]): { type: AssociationType; to: StoredRecord }[] | { message: string; context?: Record<string, string[]> } {
    const out: { type: AssociationType; to: StoredRecord }[] = [];
    for (const a of associations.map(asBody)) {
      const toId = String(asBody(a.to).id ?? '');
      const specs = asArray(a.types).map(asBody);
      if (specs.length === 0) return { message: 'Invalid input JSON: each association needs at least one type' };
      for (const spec of specs) {
        const problem = checkAssociationSpec(fromType, undefined, spec);
        if (problem) return problem;
        const type = associationTypeFrom(fromType, Number(spec.associationTypeId))!;
        const to = this.host.get(type.to, toId);
        if (!to) return { message: 'One or more associations are invalid', context: invalidObjectContext(type.to, toId) };
        out.push({ type, to });
      }
    }
    return out;
  }


  read(fromType: string, toType: string, body: Body): FakeResponse {
    const canonical = objectTypeAliases[fromType] ?? fromType;
    const to = objectTypeAliases[toType] ?? toType;
    if (!this.host.has(canonical) || !this.host.has(to)) return this.host.unknownType(this.host.has(canonical) ? toType : fromType);
    const pageSize = this.host.pageSize ?? 500;
    const canonicalFrom = objectTypeAliases[fromType] ?? fromType;
    const results: Body[] = [];
    const errors: Body[] = [];
    for (const input of asArray(body.inputs).map(asBody)) {
      const id = String(input.id ?? '');
      const all = [...(this.host.get(canonical, id)?.associations.get(to) ?? new Map<string, Set<number>>())];
      if (all.length === 0) {
        // HubSpot's 207 error, as answered for a deal with no company: "No company is associated with
        // deal 515690208449.", context { fromObjectId, fromObjectType: ["deal"], toObjectType: ["company"] }.
        const fromName = singular[canonical] ?? canonical;
        const toName = singular[to] ?? to;
        errors.push({
          status: 'error', category: 'OBJECT_NOT_FOUND', subCategory: 'crm.associations.NO_ASSOCIATIONS_FOUND',
          message: `No ${toName} is associated with ${fromName} ${id}.`, context: { fromObjectId: [id], fromObjectType: [fromName], toObjectType: [toName] }, errors: [], links: {},
        });
        continue;
      }
      const start = Number(input.after ?? 0) || 0;
      const page = all.slice(start, start + pageSize);
      const result: Body = {
        from: { id },
        to: page.map(([toId, types]) => ({
          toObjectId: Number(toId),
          associationTypes: [...types].map((typeId) => ({ category: 'HUBSPOT_DEFINED', typeId, label: associationType(canonicalFrom, to, typeId)?.label ?? null })),
        })),
      };
      if (start + pageSize < all.length) result.paging = { next: { after: String(start + pageSize), link: null } };
      results.push(result);
    }
    return this.host.envelope(results, errors, 200);
  }

  /**
   * v4 batch create. Every type must be one HubSpot defines for the pair, and no association may
   * appear twice, or the whole batch fails with 400; a record that does not exist fails its input
   * (207). An association that already exists is answered as created and left as it is [I: HubSpot
   * documents no error for it]. Success is 201, as the v4 reference and every SDK's codegen specify
   * (@hubspot/api-client 13's v4 `batchApi.create` maps 201 and 207); no v4 answer other than 201
   * is on record. The v3 association batch create has answered 200 since August 2025
   * (HubSpot/hubspot-api-nodejs#656, hubspot-api-php#506, hubspot-api-python#448, all v3):
   * `associationCreateStatus: 200` answers v4 that way too, to check a client copes.
   */
  create(fromType: string, toType: string, body: Body): FakeResponse {
    const from = objectTypeAliases[fromType] ?? fromType;
    const to = objectTypeAliases[toType] ?? toType;
    if (!this.host.has(from) || !this.host.has(to)) return this.host.unknownType(this.host.has(from) ? toType : fromType);
    const inputs = asArray(body.inputs).map(asBody);
    if (inputs.length > BATCH_LIMIT) return errorBody(400, 'VALIDATION_ERROR', `Batch input limit exceeded: ${inputs.length} inputs, the maximum is ${BATCH_LIMIT}.`);
    const seen = new Set<string>();
    const repeated: string[] = [];
    for (const input of inputs) {
      const specs = asArray(input.types).map(asBody);
      if (specs.length === 0) return errorBody(400, 'VALIDATION_ERROR', 'Invalid input JSON: each association needs at least one type');
      for (const spec of specs) {
        const problem = checkAssociationSpec(from, to, spec);
        if (problem) return errorBody(400, 'VALIDATION_ERROR', problem.message, problem.context ? { context: problem.context } : {});
        const key = `${String(asBody(input.from).id ?? '')}->${String(asBody(input.to).id ?? '')}:${String(spec.associationCategory)}=${Number(spec.associationTypeId)}`;
        if (seen.has(key)) repeated.push(key);
        seen.add(key);
      }
    }
    if (repeated.length > 0) return errorBody(400, 'VALIDATION_ERROR', duplicateAssociationMessage(repeated));
    const results: Body[] = [];
    const errors: Body[] = [];
    for (const input of inputs) {
      const fromId = String(asBody(input.from).id ?? '');
      const toId = String(asBody(input.to).id ?? '');
      const a = this.host.get(from, fromId);
      const b = this.host.get(to, toId);
      if (!a || !b) {
        const context = a ? invalidObjectContext(to, toId) : invalidObjectContext(from, fromId);
        errors.push({ status: 'error', category: 'VALIDATION_ERROR', message: 'One or more associations are invalid', context, errors: [], links: {} });
        continue;
      }
      const types = asArray(input.types).map((spec) => associationType(from, to, Number(asBody(spec).associationTypeId))!);
      for (const t of types) this.associate(a, t, b);
      results.push({
        fromObjectTypeId: OBJECT_TYPE_IDS[from] ?? from, fromObjectId: Number(fromId),
        toObjectTypeId: OBJECT_TYPE_IDS[to] ?? to, toObjectId: Number(toId), labels: types.flatMap((t) => (t.label ? [t.label] : [])),
      });
    }
    return this.host.envelope(results, errors, this.host.createStatus);
  }

  /** `GET /crm/v4/associations/{from}/{to}/labels`: the pair's types, unlabeled first (`label: null`). */
  labels(fromType: string, toType: string): FakeResponse {
    const from = objectTypeAliases[fromType] ?? fromType;
    const to = objectTypeAliases[toType] ?? toType;
    if (!this.host.has(from) || !this.host.has(to)) return this.host.unknownType(this.host.has(from) ? toType : fromType);
    return { status: 200, body: { results: associationTypesBetween(from, to).map((t) => ({ category: 'HUBSPOT_DEFINED', typeId: t.typeId, label: t.label })) } };
  }
}
