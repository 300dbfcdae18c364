/**
 * The association rules of fakeHubSpot, as data: the HUBSPOT_DEFINED association types between
 * the standard sales objects, and the exact bodies HubSpot answers when a request breaks them.
 * Pure functions only; hubspot-fake-crm.ts applies them to records.
 *
 * Sources (read 2026-12):
 * - Type ids: @hubspot/api-client 13.5 `AssociationTypes` (lib/src/enums/AssociationTypes.js):
 *   1 primaryContactToCompany / 2 primaryCompanyToContact, 3 dealToContact / 4 contactToDeal,
 *   5 primaryDealToCompany / 6 primaryCompanyToDeal, 189-192, 201-204, 213-216 (notes and tasks),
 *   279 contactToCompany / 280, 341 dealToCompany / 342, 449-451 same-object. So deal->company is
 *   341 (5 is the *primary* label) and contact->company 279 (1 is the primary).
 * - Labels: HubSpot's v4 docs (an unlabeled type exists for every associated pair and is
 *   returned with `label: null`; a primary association is listed alongside it), and a real
 *   `GET /crm/v4/associations/0-1/0-2/labels` answer posted on community.hubspot.com
 *   (t5/APIs-Integrations/Association-s-typeId-field-is-not-unique/td-p/1166801):
 *   `{"results":[{"category":"HUBSPOT_DEFINED","typeId":279,"label":null},{"category":"HUBSPOT_DEFINED","typeId":1,"label":"Primary"}]}`.
 */

/** HubSpot's object type ids (`0-1` contacts, ...), as the v4 endpoints answer them. */
export const OBJECT_TYPE_IDS: Readonly<Record<string, string>> = { contacts: '0-1', companies: '0-2', deals: '0-3', notes: '0-46', tasks: '0-27' };

export interface AssociationType {
  from: string;
  to: string;
  typeId: number;
  /** `null` for the unlabeled type; `Primary` for the one primary company. */
  label: string | null;
  /** The type id of the same association read from the other side. */
  inverse: number;
}

const pair = (from: string, to: string, typeId: number, inverse: number, label: string | null = null): AssociationType[] => [
  { from, to, typeId, label, inverse },
  { from: to, to: from, typeId: inverse, label, inverse: typeId },
];

/** Every HUBSPOT_DEFINED type the fake knows, in both directions. */
export const ASSOCIATION_TYPES: readonly AssociationType[] = [
  ...pair('contacts', 'companies', 279, 280),
  ...pair('contacts', 'companies', 1, 2, 'Primary'),
  ...pair('deals', 'companies', 341, 342),
  ...pair('deals', 'companies', 5, 6, 'Primary'),
  ...pair('deals', 'contacts', 3, 4),
  ...pair('notes', 'contacts', 202, 201),
  ...pair('notes', 'companies', 190, 189),
  ...pair('notes', 'deals', 214, 213),
  ...pair('tasks', 'contacts', 204, 203),
  ...pair('tasks', 'companies', 192, 191),
  ...pair('tasks', 'deals', 216, 215),
  { from: 'contacts', to: 'contacts', typeId: 449, label: null, inverse: 449 },
  { from: 'companies', to: 'companies', typeId: 450, label: null, inverse: 450 },
  { from: 'deals', to: 'deals', typeId: 451, label: null, inverse: 451 },
];

/** The types from `from` to `to` (canonical plural names), unlabeled first: what the labels endpoint lists. */
export function associationTypesBetween(from: string, to: string): AssociationType[] {
  return ASSOCIATION_TYPES.filter((t) => t.from === from && t.to === to);
}

/** The type `typeId` from `from` to `to`, if HubSpot defines it for that pair. */
export function associationType(from: string, to: string, typeId: number): AssociationType | undefined {
  return ASSOCIATION_TYPES.find((t) => t.from === from && t.to === to && t.typeId === typeId);
}

/** The type `typeId` leaving `from`, whatever its target (the inline associations of a create name no target type). */
export function associationTypeFrom(from: string, typeId: number): AssociationType | undefined {
  return ASSOCIATION_TYPES.find((t) => t.from === from && t.typeId === typeId);
}

/**
 * A primary label holds one record at a time on the side that has it: a contact or deal has one
 * primary company (HubSpot's docs: the API "supports changing which company is considered the
 * primary"). Returns the side that owns the primary label (`from` or `to`), or null.
 */
export function primaryOwner(t: AssociationType): 'from' | 'to' | null {
  if (t.label !== 'Primary') return null;
  return t.to === 'companies' ? 'from' : 'to';
}

/** The unlabeled type that always accompanies a labeled one between the same pair. */
export function unlabeledCompanion(t: AssociationType): AssociationType | undefined {
  if (t.label === null) return undefined;
  return ASSOCIATION_TYPES.find((u) => u.from === t.from && u.to === t.to && u.label === null);
}

export interface AssociationSpecProblem {
  message: string;
  context?: Record<string, string[]>;
}

/**
 * Why `spec` cannot associate a `from` record to a `to` record (canonical names), or null. `to`
 * undefined: the inline `associations` of a create, where the target type follows from the type id.
 */
export function checkAssociationSpec(from: string, to: string | undefined, spec: { associationCategory?: unknown; associationTypeId?: unknown }): AssociationSpecProblem | null {
  const typeId = Number(spec.associationTypeId);
  const category = String(spec.associationCategory ?? '');
  if (!Number.isInteger(typeId) || category === '') {
    return { message: 'Invalid input JSON: Some required fields were not set: [associationCategory, associationTypeId]' };
  }
  const defined = category === 'HUBSPOT_DEFINED' ? ASSOCIATION_TYPES.filter((t) => t.typeId === typeId) : [];
  if (defined.length === 0) {
    // A real answer for an id the portal does not define (reported for `USER_DEFINED=3` on v4).
    const name = `${category}=${typeId}`;
    return { message: 'One or more associations are invalid', context: { associationSpec: [name], INVALID_ASSOCIATION_TYPE_ID: [`${name} is not a valid association definition id`] } };
  }
  if (defined.some((t) => t.from === from && (to === undefined || t.to === to))) return null;
  // [I] Wording seen in a third-party HubSpot emulator's tests for a type id of another pair
  // ("invalid from object type 0-47 for associations to be created. expected: 0-1"); the
  // to-side message is the same rule mirrored.
  const other = defined[0]!;
  if (!defined.some((t) => t.from === from)) {
    return { message: `invalid from object type ${OBJECT_TYPE_IDS[from] ?? from} for associations to be created. expected: ${OBJECT_TYPE_IDS[other.from] ?? other.from}` };
  }
  const expected = defined.find((t) => t.from === from)!;
  return { message: `invalid to object type ${OBJECT_TYPE_IDS[to!] ?? to} for associations to be created. expected: ${OBJECT_TYPE_IDS[expected.to] ?? expected.to}` };
}

/**
 * The body for a target record that does not exist, verbatim from a real answer
 * (HubSpot/hubspot-api-nodejs#646): 400 VALIDATION_ERROR "One or more associations are invalid"
 * with `context: {"INVALID_OBJECT_IDS":["CONTACT=38374264688 is not valid"],"objectId":[…],"objectType":["CONTACT"]}`.
 */
export function invalidObjectContext(objectType: string, id: string): Record<string, string[]> {
  const name = SINGULAR[objectType]?.toUpperCase() ?? objectType.toUpperCase();
  return { INVALID_OBJECT_IDS: [`${name}=${id} is not valid`], objectId: [id], objectType: [name] };
}

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal', notes: 'note', tasks: 'task' };

/**
 * [I] A v4 batch that names one association twice (same from, to and type) fails whole: HubSpot
 * "does not allow multiple references to the same association within the same batch"
 * (segmentio/action-destinations#3336, which shows no body). The wording mirrors HubSpot's
 * verified upsert message for repeated ids ("Duplicate IDs found in batch input: [...]").
 */
export function duplicateAssociationMessage(keys: string[]): string {
  return `Duplicate associations found in batch input: [${keys.join(', ')}]. Associations must be unique`;
}
