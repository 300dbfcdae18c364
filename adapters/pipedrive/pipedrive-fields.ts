/**
 * Pipedrive's fields: the v2 `personFields` / `organizationFields` / `dealFields` /
 * `activityFields` definitions, read once per entity when a configured name needs them (a custom
 * field given by its name), translated into field definitions for `crm-upsert schema pull`, and
 * the wire form of a write's values (enumeration and set fields take option ids, numbers stay numbers).
 */
import type { FieldDefinition, FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { ConfigError } from '../../src/errors.js';
import { isCustomFieldKey, type PipedriveConfig, type RecordEntity } from './pipedrive-config.js';

/** A field as GET /api/v2/{entity}Fields answers it (the parts read). */
export interface PipedriveField {
  field_code: string;
  field_name: string;
  field_type: string;
  is_custom_field?: boolean;
  options?: { id: number; label: string }[] | null;
}

/** The fields endpoint of each entity (notes have none: their only field is `content`). */
export const FIELDS_PATH: Record<RecordEntity | 'activity', string> = {
  person: '/api/v2/personFields',
  organization: '/api/v2/organizationFields',
  deal: '/api/v2/dealFields',
  activity: '/api/v2/activityFields',
};

/**
 * Standard fields an object's `fields` may name, per entity, with no fields request: in v2 they
 * sit at the root of the body. `email` and `phone` are this library's shorthand for the person's
 * primary address and number (v2 `emails` / `phones` arrays).
 */
export const STANDARD_FIELDS: Record<RecordEntity | 'activity' | 'note', ReadonlySet<string>> = {
  person: new Set(['name', 'first_name', 'last_name', 'email', 'phone', 'owner_id', 'visible_to', 'label_ids', 'marketing_status', 'birthday', 'job_title', 'notes']),
  organization: new Set(['name', 'owner_id', 'visible_to', 'label_ids', 'address', 'website', 'industry', 'annual_revenue', 'employee_count']),
  deal: new Set(['title', 'value', 'currency', 'stage_id', 'pipeline_id', 'status', 'probability', 'expected_close_date', 'owner_id', 'lost_reason', 'visible_to', 'label_ids', 'close_time', 'won_time', 'lost_time']),
  activity: new Set(['subject', 'type', 'note', 'due_date', 'due_time', 'duration', 'done', 'busy', 'priority', 'owner_id', 'public_description', 'location']),
  note: new Set(['content', 'add_time', 'pinned_to_person_flag', 'pinned_to_organization_flag', 'pinned_to_deal_flag']),
};

/** How a configured field name travels: at the body's root (standard) or under `custom_fields` by its key. */
export type WireField = { standard: string } | { custom: string };

/** Configured names resolved to wire fields for one entity, from the names alone where possible. */
export function staticWireField(entity: RecordEntity | 'activity' | 'note', name: string): WireField | undefined {
  if (STANDARD_FIELDS[entity].has(name)) return { standard: name };
  if (isCustomFieldKey(name)) return { custom: name };
  return undefined;
}

/** A configured name found among the entity's fields: a standard field by its code, a custom one by its code or its name (exactly one). */
export function wireFieldIn(fields: readonly PipedriveField[], entity: string, name: string): WireField | undefined {
  const byCode = fields.find((f) => f.field_code === name);
  if (byCode) return byCode.is_custom_field ? { custom: byCode.field_code } : { standard: byCode.field_code };
  const named = fields.filter((f) => f.is_custom_field && f.field_name === name);
  if (named.length > 1) {
    throw new ConfigError(`pipedrive: ${named.length} custom ${entity} fields are named "${name}" (keys ${named.map((f) => f.field_code).join(', ')}): configure the field by its 40-character key`);
  }
  return named[0] ? { custom: named[0].field_code } : undefined;
}

/** A Pipedrive field as a field definition. */
export function pipedriveFieldDefinition(f: PipedriveField): FieldDefinition {
  const options = (f.options ?? []).map((o) => ({ value: String(o.id), label: o.label }));
  switch (f.field_type) {
    case 'varchar':
    case 'varchar_auto':
      return { type: 'string', maxLength: 255 };
    case 'text':
    case 'address':
      return { type: 'string' };
    case 'double':
    case 'monetary':
      return { type: 'number' };
    case 'int':
    case 'user':
    case 'org':
    case 'people':
    case 'stage':
      return { type: 'integer' };
    case 'enum':
    case 'visible_to':
      return options.length > 0 ? { type: 'enumeration', options } : { type: 'integer' };
    case 'set':
      return { type: 'enumeration', options, multiple: true };
    case 'date':
      return { type: 'date' };
    case 'phone':
      return { type: 'phone' };
    default:
      return { type: 'string' };
  }
}

/** Decimal text without its leading zeros, trailing fractional zeros and a bare point. */
const canonical = (t: string) => t.replace(/^(-?)0+(?=\d)/, '$1').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');

/**
 * The number that decimal text is, when a JSON number (a double) holds every digit of it; undefined
 * otherwise (`12345678901234567890`, 17 significant digits and more): such text is sent as it is,
 * for Pipedrive to refuse naming the field, never rounded into another value.
 */
function exactNumber(text: string): number | undefined {
  if (!/^-?\d+(\.\d+)?$/.test(text)) return undefined;
  const n = Number(text);
  const back = String(n);
  return Number.isFinite(n) && !/e/i.test(back) && canonical(back) === canonical(text) ? n : undefined;
}

/**
 * A value as Pipedrive's strict v2 validation takes it (no string-to-number coercion): an
 * enumeration's option id as a number, a set's ids as an array of numbers (`;`-joined in the
 * engine's wire form; an empty set is a clear, `null`: Pipedrive refuses `[]`), a number's digits as a number.
 */
export function wireValue(value: string | number | boolean | null, definition: FieldDefinition | undefined): unknown {
  if (value === null || !definition) return value;
  const num = (v: string | number) => (typeof v === 'number' ? v : exactNumber(v.trim()) ?? v);
  if (definition.type === 'enumeration' && definition.multiple) {
    const parts = String(value).split(';').map((s) => s.trim()).filter((s) => s !== '');
    return parts.length === 0 ? null : parts.map(num);
  }
  if (definition.type === 'enumeration' || definition.type === 'number' || definition.type === 'integer') return typeof value === 'boolean' ? value : num(value);
  return value;
}

/** Reads an entity's fields (every page); the adapter and check-setup both use it. */
export type FieldsReader = (entity: RecordEntity | 'activity') => Promise<PipedriveField[]>;

/**
 * `crm-upsert schema pull` for Pipedrive: the definitions of every configured object's
 * allowlisted fields (notes have no definitions to read: their `content` is HTML text).
 */
export async function pullPipedriveFields(section: PipedriveConfig, read: FieldsReader, now: Date): Promise<FieldDefinitionsFile> {
  const cache = new Map<string, Promise<PipedriveField[]>>();
  const fieldsOf = (entity: RecordEntity | 'activity') => {
    if (!cache.has(entity)) cache.set(entity, read(entity));
    return cache.get(entity)!;
  };
  const objects: FieldDefinitionsFile['objects'] = {};
  for (const [object, spec] of Object.entries(section.objects)) {
    if (spec.entity === 'note') {
      objects[object] = {};
      continue;
    }
    const fields = await fieldsOf(spec.entity);
    const out: Record<string, FieldDefinition> = {};
    for (const name of spec.fields) {
      const wire = name === 'email' || name === 'phone' ? undefined : wireFieldIn(fields, spec.entity, name);
      if (name === 'email' && spec.entity === 'person') out[name] = { type: 'email' };
      else if (name === 'phone' && spec.entity === 'person') out[name] = { type: 'phone' };
      if (!wire) continue;
      const code = 'custom' in wire ? wire.custom : wire.standard;
      const f = fields.find((x) => x.field_code === code);
      if (f) out[name] = pipedriveFieldDefinition(f);
    }
    objects[object] = out;
  }
  return { crm: 'pipedrive', apiVersion: 'v2', pulledAt: now.toISOString().slice(0, 10), objects };
}
