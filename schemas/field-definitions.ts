/**
 * Field definitions: what the CRM accepts as a value of each allowlisted field, CRM-neutral.
 * `crm-upsert schema pull` writes them to a file (crm-upsert.fields.json, reviewed and committed
 * like a lockfile) from HubSpot's properties API or Salesforce's describe; a field definition can
 * also be written by hand in an object's `fields` list, to narrow what the CRM would accept.
 *
 * Wire forms are the same on both CRMs: a date is `YYYY-MM-DD`, a date-time an ISO 8601 string in
 * UTC, a multi-select its values joined with `;`, a number its decimal text digit for digit (a
 * HubSpot property string, a Salesforce JSON number).
 */
import { z } from 'zod';

export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'enumeration', 'date', 'datetime', 'email', 'phone', 'url'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** An allowed value of an enumeration: its value on the wire and the label people see. */
export const fieldOptionSchema = z.strictObject({
  value: z.string(),
  label: z.string().optional(),
  /** A pipeline stage: the id of the pipeline it belongs to (see `pipelineField`). */
  pipeline: z.string().optional(),
  /**
   * Hidden in the CRM (HubSpot's `hidden`: not shown in its forms, bots and meeting pages) yet
   * still taken in a write: accepted as a value, left out of the enumerations tool schemas offer
   * a model. Default false.
   */
  hidden: z.boolean().optional(),
});
export type FieldOption = z.infer<typeof fieldOptionSchema>;

export const fieldDefinitionShape = {
  type: z.enum(FIELD_TYPES),
  /** enumeration: the allowed values (a plain string is a value with no label). */
  options: z.array(z.union([z.string(), fieldOptionSchema])).optional(),
  /** enumeration: several values at once (HubSpot checkbox, Salesforce multipicklist), `;`-joined. */
  multiple: z.boolean().optional(),
  /** enumeration: false when the CRM accepts values outside `options` (an unrestricted Salesforce picklist). Default true. */
  restricted: z.boolean().optional(),
  /** string types: the longest value the CRM stores, in characters. */
  maxLength: z.number().int().positive().optional(),
  /** number, integer: the most digits the CRM stores, before and after the point together (Salesforce `precision`). */
  precision: z.number().int().positive().optional(),
  /** number: the most digits the CRM stores after the point (Salesforce `scale`); more would be rounded. */
  scale: z.number().int().nonnegative().optional(),
  /** The CRM does not let an integration write it (calculated, read-only). */
  readOnly: z.boolean().optional(),
  /**
   * enumeration of pipeline stages (HubSpot `dealstage`, `hs_pipeline_stage`): the field of the same
   * object that holds the pipeline (`pipeline`, `hs_pipeline`). Its options carry their `pipeline`,
   * and a stage is resolved within the pipeline an action gives (pipeline-stages.ts). Default none.
   */
  pipelineField: z.string().min(1).optional(),
};

/** One field's definition, as the file holds it. */
export const fieldDefinitionSchema = z.strictObject(fieldDefinitionShape);
export type FieldDefinition = z.infer<typeof fieldDefinitionSchema>;

/** A definition written by hand in an object's `fields` list: the field's name and its rules. */
export const inlineFieldDefinitionSchema = z.strictObject({ name: z.string().min(1, 'must not be empty'), ...fieldDefinitionShape });
export type InlineFieldDefinition = z.infer<typeof inlineFieldDefinitionSchema>;

/** crm-upsert.fields.json. */
export const fieldDefinitionsFileSchema = z.strictObject({
  /** The CRM the definitions were read from: `hubspot`, `salesforce`. */
  crm: z.string().min(1),
  /** The API the definitions were read through (`crm/v3`, `60.0`). */
  apiVersion: z.string().min(1),
  /** The day they were read, `YYYY-MM-DD`. */
  pulledAt: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD'),
  /** Logical object -> allowlisted field -> its definition. */
  objects: z.record(z.string().min(1), z.record(z.string().min(1), fieldDefinitionSchema)),
});
export type FieldDefinitionsFile = z.infer<typeof fieldDefinitionsFileSchema>;

/** The option values of a definition (labels dropped), hidden ones included: every value the CRM accepts. */
export const optionValues = (d: FieldDefinition): string[] => (d.options ?? []).map((o) => (typeof o === 'string' ? o : o.value));

/** The option values a model is offered: those not hidden in the CRM. */
export const visibleOptionValues = (d: FieldDefinition): string[] => (d.options ?? []).flatMap((o) => (typeof o === 'string' ? [o] : o.hidden ? [] : [o.value]));

const fold = (s: string) => s.trim().toLowerCase();

/**
 * The options `text` names, level by level, the first level with a match deciding: exact value;
 * then, normalizing, exact label, value ignoring case and surrounding spaces, label likewise. The
 * level found may hold several options (two labels alike): the caller refuses to guess between
 * them. Every option matcher (enumerations, pipeline stages) goes through this one order.
 */
export function matchingOptions<O extends FieldOption>(options: readonly O[], text: string, normalize: boolean): O[] {
  const t = normalize ? text.trim() : text;
  const levels: ((o: O) => boolean)[] = [
    (o) => o.value === t,
    (o) => o.label === t,
    (o) => fold(o.value) === fold(t),
    (o) => o.label !== undefined && fold(o.label) === fold(t),
  ];
  for (const level of normalize ? levels : levels.slice(0, 1)) {
    const hits = options.filter(level);
    if (hits.length > 0) return hits;
  }
  return [];
}

/** The option values hidden in the CRM, still accepted in a write. */
export const hiddenOptionValues = (d: FieldDefinition): string[] => (d.options ?? []).flatMap((o) => (typeof o !== 'string' && o.hidden ? [o.value] : []));

/**
 * The file as `schema pull` writes it: objects, fields and keys sorted, options in the CRM's own
 * order (it is meaningful: pipeline stages), two-space JSON and a final newline, so a pull that
 * found nothing new leaves the file byte for byte the same.
 */
export function formatFieldDefinitions(file: FieldDefinitionsFile): string {
  const sortKeys = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
    }
    return value;
  };
  return `${JSON.stringify(sortKeys(fieldDefinitionsFileSchema.parse(file)), null, 2)}\n`;
}
