/**
 * `crm-upsert schema pull` for Salesforce: one `GET /sobjects/{name}/describe` per configured
 * sObject, and each allowlisted field's describe translated into the CRM-neutral definition
 * (schemas/field-definitions.ts). Fields the org does not have (or this user cannot see) are left
 * out; check-setup names them.
 *
 * Describe's field shape (DescribeSObjectResult.fields, as jsforce 3.10.16 types it): `name`,
 * `type`, `length`, `precision` and `scale` (digits in all and after the point of a double,
 * currency or percent; 0 on other types), `picklistValues: [{ value, label, active, defaultValue,
 * validFor }]`, `restrictedPicklist`, `createable`, `updateable`. Record types can narrow a picklist further
 * (`/ui-api/object-info/{obj}/picklist-values/{recordTypeId}/{field}`); describe lists the
 * values of the whole field, so a value one record type does not allow is still accepted here.
 */
import type { FieldDefinition, FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import type { SalesforceConfig } from './salesforce-config.js';

/** The describe properties read here. */
export interface DescribeField {
  name: string;
  type: string;
  length?: number;
  precision?: number;
  scale?: number;
  picklistValues?: ReadonlyArray<{ value: string; label?: string | null; active?: boolean }>;
  restrictedPicklist?: boolean;
  createable?: boolean;
  updateable?: boolean;
}

export interface DescribeResult {
  fields?: DescribeField[];
}

const NUMBER_TYPES = new Set(['double', 'currency', 'percent']);
const SAME_TYPES = new Set(['email', 'phone', 'url', 'boolean', 'date', 'datetime']);
const TEXT_TYPES = new Set(['string', 'textarea', 'combobox', 'encryptedstring', 'email', 'phone', 'url']);

/** A double, currency or percent field's precision and scale, when describe gives them. */
function digitsOf(f: DescribeField): Pick<FieldDefinition, 'precision' | 'scale'> {
  if (!NUMBER_TYPES.has(f.type) || typeof f.precision !== 'number' || f.precision <= 0) return {};
  return { precision: f.precision, ...(typeof f.scale === 'number' && f.scale >= 0 && f.scale <= f.precision ? { scale: f.scale } : {}) };
}

/**
 * One describe field as a definition. A combobox (Task Subject) is text: its values are only
 * suggestions. A lookup (reference) and the types with no neutral counterpart are plain strings.
 */
export function fieldDefinitionOf(f: DescribeField): FieldDefinition {
  const readOnly = f.createable === false && f.updateable === false ? { readOnly: true } : {};
  if (f.type === 'picklist' || f.type === 'multipicklist') {
    const options = (f.picklistValues ?? []).filter((p) => p.active !== false).map((p) => ({ value: p.value, label: p.label ?? p.value }));
    return {
      type: 'enumeration',
      options,
      ...(f.type === 'multipicklist' ? { multiple: true } : {}),
      restricted: f.restrictedPicklist === true,
      ...readOnly,
    };
  }
  const type: FieldDefinition['type'] = NUMBER_TYPES.has(f.type)
    ? 'number'
    : f.type === 'int' || f.type === 'long'
      ? 'integer'
      : SAME_TYPES.has(f.type)
        ? (f.type as FieldDefinition['type'])
        : 'string';
  const maxLength = TEXT_TYPES.has(f.type) && typeof f.length === 'number' && f.length > 0 ? { maxLength: f.length } : {};
  return { type, ...maxLength, ...digitsOf(f), ...readOnly };
}

/** The day `now` falls on in UTC: `YYYY-MM-DD`. */
export const pulledAt = (now: Date) => now.toISOString().slice(0, 10);

/**
 * The definitions of every configured object's allowlisted fields, `describe` called once per
 * distinct sObject (a note and a task both on Task cost one request).
 */
export async function pullSalesforceFields(
  section: Pick<SalesforceConfig, 'objects' | 'apiVersion'>,
  describe: (sobject: string) => Promise<DescribeResult>,
  options: { now: Date; apiVersion: string },
): Promise<FieldDefinitionsFile> {
  const described = new Map<string, Map<string, DescribeField>>();
  const objects: FieldDefinitionsFile['objects'] = {};
  for (const [object, spec] of Object.entries(section.objects)) {
    let byName = described.get(spec.sobject);
    if (!byName) {
      const result = await describe(spec.sobject);
      byName = new Map((result.fields ?? []).map((f) => [f.name, f]));
      described.set(spec.sobject, byName);
    }
    const fields: Record<string, FieldDefinition> = {};
    for (const name of spec.fields) {
      const f = byName.get(name);
      if (f) fields[name] = fieldDefinitionOf(f);
    }
    objects[object] = fields;
  }
  return { crm: 'salesforce', apiVersion: options.apiVersion, pulledAt: pulledAt(options.now), objects };
}
