/**
 * The tools an MCP client sees, generated from the configured objects with the action's own zod
 * schemas (schemas/action.ts) and the objects' field allowlists: a record object gets
 * `upsert_<object>`, an activity object `create_<object>`, and each tool's `fields` admits exactly
 * the allowlisted fields. What the tool schema accepts, the engine accepts.
 */
import { z } from 'zod';
import { actionSchema, fieldValueSchema } from '../../schemas/action.js';
import { visibleOptionValues, type FieldDefinition } from '../../schemas/field-definitions.js';
import { DEFAULT_MAX_LINKS, type ObjectSpec } from '../../schemas/objects.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_BUCKET_MS } from '../key.js';
import { OutcomeStatus } from '../outcome.js';

/** One generated tool: its name, what it does, and the strict schema of its arguments. */
export interface ToolSpec {
  /** `upsert_contact`, `create_note`. */
  name: string;
  /** A human title (`Create a note`). */
  title: string;
  /** What the model reads: the allowlist, and what a repeated call does. */
  description: string;
  /** The engine op the tool's calls become. */
  op: 'upsert' | 'create';
  /** The logical object (the adapter's `objects` key). */
  object: string;
  /** The object's spec: its allowlist and parents. */
  spec: ObjectSpec;
  /** The arguments, strict: unknown arguments and fields off the allowlist are refused. */
  input: z.ZodObject;
}

export interface ToolSchemaOptions {
  /** The CRM: its adapter's name (`hubspot`); the descriptions say it as people write it (`HubSpot`). */
  crm: string;
  /** The dedupe window keyless creates fall under, ms (0: off). */
  windowMs: number;
  /** The period bucket of keyless creates, ms. Default: the window (or 10 min when it is off), as in the engine. */
  bucketMs?: number;
  /** get_<object> tools are served beside these (the adapter reads records), so the descriptions point to them. Default false. */
  reads?: boolean;
}

const shape = actionSchema.shape;
const idSchema = shape.externalId.unwrap();
const keySchema = shape.eventId.unwrap();
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

export const minutes = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1_000)} s`);

function fieldsSchema(object: string, spec: ObjectSpec, crm: string) {
  const fields = Object.fromEntries(spec.fields.map((f) => [f, fieldValueSchema.optional().describe(`${crm} property "${f}" of ${object}.`)]));
  return z.strictObject(fields).describe(`The ${object} fields to write. Only these are allowed: ${spec.fields.join(', ')}. A string, number, boolean or null each: leave a field out to keep what the record holds, null empties it.`);
}

/** `clear` of an upsert tool: the fields to empty, by name (a strict schema may not let a field be null). */
function clearArg(object: string, spec: ObjectSpec) {
  if (spec.fields.length === 0) return {};
  return {
    clear: z.array(z.enum(spec.fields as [string, ...string[]])).optional().describe(
      `Fields of this ${object} to empty (their values removed), by name: ${spec.fields.join(', ')}. Only the fields named here are emptied; a field named here must not also be given a value in fields.`,
    ),
  };
}

const idempotencyKey = (what: string) =>
  keySchema.optional().describe(
    `Your key for this ${what}: any string you choose once per intended action (a UUID, or your task id + step). Calling again with the same key returns the first result and writes nothing, even if the other arguments changed. Reusing it for a different record is refused.`,
  );

/** `links` of a tool whose object may be associated with these record objects (none: no argument). */
function linksArg(object: string, allowed: readonly string[]) {
  if (allowed.length === 0) return {};
  const link = z.strictObject({
    object: z.enum(allowed as [string, ...string[]]).describe('The kind of record to associate.'),
    externalId: idSchema.describe('That record\'s externalId (as given to its upsert tool).'),
  });
  return {
    links: z.array(link).optional().describe(
      `Other records this ${object} is associated with (${allowed.join(', ')}), by externalId: at most ${DEFAULT_MAX_LINKS}. ` +
      'Linking only adds associations, it never removes one; write the linked records first (their upsert tools).',
    ),
  };
}

const occurredAt = shape.occurredAt.unwrap().optional().describe('When the event behind this call happened (ISO 8601 with offset). Default: the time of the call.');

function upsertTool(object: string, spec: ObjectSpec, o: ToolSchemaOptions): ToolSpec {
  return {
    name: `upsert_${object}`,
    title: `Create or update a ${object}`,
    op: 'upsert',
    object,
    spec,
    description:
      `Create or update a ${o.crm} ${object} by its externalId (an upsert: the same externalId always writes the same record, never a second one). ` +
      `Allowed fields: ${spec.fields.join(', ')}. Pass an idempotencyKey so a retried call is a replay: it returns the first result and writes nothing. ` +
      'Without a key, a call whose values the record already holds is "unchanged" and sends nothing, and changed values are always written (the latest call wins). ' +
      `Before writing: describe_${object} lists its fields and allowed values${o.reads ? `; get_${object} shows what the record holds now` : ''}.`,
    input: z.strictObject({
      externalId: idSchema.describe(`Your id for this ${object}: the value of its external-id field in ${o.crm}.`),
      fields: fieldsSchema(object, spec, o.crm),
      ...clearArg(object, spec),
      ...linksArg(object, spec.links ?? []),
      idempotencyKey: idempotencyKey(`write`),
      occurredAt,
    }),
  };
}

function createTool(object: string, spec: ObjectSpec, parents: [string, ...string[]], o: ToolSchemaOptions): ToolSpec {
  const window = o.windowMs > 0 ? `an identical ${object} on the same record within ${minutes(o.windowMs)} is suppressed` : `only the same ${minutes(o.bucketMs ?? DEFAULT_BUCKET_MS)} time bucket protects it`;
  return {
    name: `create_${object}`,
    title: `Create a ${object}`,
    op: 'create',
    object,
    spec,
    description:
      `Create a ${o.crm} ${object} on a ${parents.join(' or ')} record, found by its externalId. ` +
      `A repeated call with the same idempotencyKey returns the first result (status "replayed") and creates nothing, even when the text differs. ` +
      `Without a key, ${window}. Allowed fields: ${spec.fields.join(', ')}. Before writing: describe_${object} lists its fields and allowed values.`,
    input: z.strictObject({
      target: z
        .strictObject({
          object: z.enum(parents).describe(`The kind of record the ${object} attaches to.`),
          externalId: idSchema.describe('That record\'s externalId (as given to its upsert tool).'),
        })
        .describe(`The record this ${object} attaches to.`),
      fields: fieldsSchema(object, spec, o.crm),
      ...(parents.length > 1 ? linksArg(object, parents) : {}),
      idempotencyKey: idempotencyKey(object),
      occurredAt,
      intent: shape.intent.unwrap().optional().describe(`A label telling apart two different ${object}s on one record at the same time (e.g. "call-summary" and "follow-up"); part of what makes two keyless calls the same.`),
    }),
  };
}

/** The CRMs' names as people write them; an adapter of another name is named as it names itself. */
const CRM_LABELS: Readonly<Record<string, string>> = { hubspot: 'HubSpot', salesforce: 'Salesforce', pipedrive: 'Pipedrive' };

/** The tools for `objects`, in their order: upserts for records, creates for activities that have a parent. */
export function toolSpecs(objects: Readonly<Record<string, ObjectSpec>>, given: ToolSchemaOptions): ToolSpec[] {
  const options = { ...given, crm: CRM_LABELS[given.crm] ?? given.crm };
  const tools: ToolSpec[] = [];
  for (const [object, spec] of Object.entries(objects)) {
    if (spec.kind === 'record') tools.push(upsertTool(object, { ...spec, links: (spec.links ?? []).filter((l) => objects[l]?.kind === 'record') }, options));
    else {
      const parents = (spec.parents ?? []).filter((p) => objects[p]?.kind === 'record');
      // An activity with no parent record configured cannot be created: no tool.
      if (parents.length > 0) tools.push(createTool(object, spec, parents as [string, ...string[]], options));
    }
  }
  for (const t of tools) {
    if (!TOOL_NAME.test(t.name)) throw new ConfigError(`object "${t.object}" gives the tool name "${t.name}": MCP tool names use only letters, digits, _ and -`);
  }
  return tools;
}

/**
 * The schema handed to the SDK for a tool: it advertises the strict JSON Schema of `input` (what
 * `tools/list` shows) but lets every argument through, so the handler validates them itself: a
 * bad argument then gets the engine's `path: reason` form and a structured `rejected` result
 * instead of the SDK's own error text.
 */
export function advertisedSchema(input: z.ZodObject, definitions?: Readonly<Record<string, FieldDefinition>>): z.ZodObject {
  const { $schema: _drop, ...json } = z.toJSONSchema(input, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  withFieldRules(json, definitions);
  return z.looseObject({}).meta(json);
}

/** Replaces, in a tool's JSON Schema, each defined field's generic value schema with its rule (fieldRule). */
export function withFieldRules(json: Record<string, unknown>, definitions: Readonly<Record<string, FieldDefinition>> | undefined): void {
  const fields = (json.properties as Record<string, { properties?: Record<string, unknown> }> | undefined)?.fields?.properties;
  if (fields && definitions) for (const name of Object.keys(fields)) if (definitions[name]) fields[name] = fieldRule(name, definitions[name]!, fields[name] as { description?: string });
}

/** Enumerations longer than this are advertised as a plain string (their values checked on our side). */
export const MAX_ADVERTISED_OPTIONS = 250;

/**
 * A defined field as a tool schema shows it: its type, an enumeration's values (labels in the
 * description), a date's format. The engine still checks and normalizes what the model sends.
 */
export function fieldRule(name: string, d: FieldDefinition, base: { description?: string } = {}): Record<string, unknown> {
  const about = base.description ?? `Property "${name}".`;
  // Options hidden in the CRM are accepted when written but not offered to a model; a stage names
  // its pipeline: two pipelines may each have a "Closed Won".
  const labels = (d.options ?? []).flatMap((o) => (typeof o !== 'string' && !o.hidden && o.label && o.label !== o.value ? [`${o.value} = ${o.label}${o.pipeline !== undefined ? ` (pipeline ${o.pipeline})` : ''}`] : []));
  const values = visibleOptionValues(d);
  switch (d.type) {
    case 'enumeration': {
      // Every option hidden: no enumeration to offer (an empty one admits nothing); the engine still checks.
      if (values.length === 0 && (d.options ?? []).length > 0) return { type: 'string', description: about };
      if (d.multiple) return { type: 'string', description: `${about} Values joined with ";", each one of: ${values.join(', ')}.` };
      if (values.length > MAX_ADVERTISED_OPTIONS || d.restricted === false) {
        return { type: 'string', description: `${about} ${d.restricted === false ? 'Known values' : `One of ${values.length} values`}: ${values.slice(0, 50).join(', ')}${values.length > 50 ? ', ...' : ''}.` };
      }
      return { type: 'string', enum: values, description: labels.length > 0 ? `${about} ${labels.join('; ')}.` : about };
    }
    case 'date':
      return { type: 'string', format: 'date', description: `${about} A date, YYYY-MM-DD.` };
    case 'datetime':
      return { type: 'string', format: 'date-time', description: `${about} An ISO 8601 date-time with its offset.` };
    case 'number':
      return { type: 'number', description: `${about} A number: no currency sign, unit or thousands separator.` };
    case 'integer':
      return { type: 'integer', description: about };
    case 'boolean':
      return { type: 'boolean', description: about };
    case 'email':
      return { type: 'string', format: 'email', description: about };
    case 'url':
      return { type: 'string', format: 'uri', description: about };
    default:
      return { type: 'string', description: d.maxLength ? `${about} At most ${d.maxLength} characters.` : about };
  }
}

const statusValues = Object.values(OutcomeStatus) as [OutcomeStatus, ...OutcomeStatus[]];

const errorSchema = z
  .object({
    code: z.string().describe('VALIDATION, KEY_CONFLICT, CRM, LEDGER, ...'),
    message: z.string(),
    path: z.string().optional().describe('The argument at fault, e.g. fields.email.'),
    retryable: z.boolean().optional(),
  })
  .describe('Why the call was rejected or failed.');

/** One argument at fault in a rejected call, in a form an agent can repair its call from. */
export const problemSchema = z.object({
  path: z.string().describe('The argument at fault, e.g. fields.lifecyclestage.'),
  field: z.string().describe('The CRM field at fault (lifecyclestage for fields.lifecyclestage); the argument\'s path when it is not a field.'),
  reason: z.string(),
  allowed: z.array(z.string()).optional().describe('An enumeration field: its allowed values (the first 20; describe_<object> lists them all).'),
});
export type Problem = z.infer<typeof problemSchema>;

/** The structured result of every write tool. */
export const callResultSchema = z.object({
  status: z.enum(statusValues).describe('created | updated | unchanged | superseded | replayed | suppressed | in_flight | rejected | failed'),
  key: z.string().describe('The ledger key of this call (empty when the arguments were refused): pass it, or your idempotencyKey, to get_outcome.'),
  idempotencyKey: z.string().optional(),
  recordId: z.string().optional().describe('The CRM record id.'),
  error: errorSchema.optional(),
  dedupe: z
    .object({
      occurredAt: z.string().describe('The time this call was judged by (occurredAt, or the time of the call).'),
      windowMs: z.number().describe('The dedupe window, ms (0 for upserts: their externalId is their key).'),
      bucketStart: z.string().optional().describe('Creates: start of the time bucket of this call.'),
      bucketEnd: z.string().optional().describe('Creates: end of the time bucket of this call (exclusive).'),
    })
    .optional()
    .describe('What protects a call made without an idempotencyKey: identical creates in the same time bucket, or within the window of each other, are one; an upsert is written unless the record already holds its values.'),
  normalized: z
    .array(z.object({ field: z.string(), from: z.unknown(), to: z.union([z.string(), z.number(), z.boolean(), z.null()]) }))
    .optional()
    .describe('Values of this call brought to the CRM\'s form before the write (what you sent, what was written): send them that way next time.'),
  problems: z.array(problemSchema).optional().describe('rejected: each argument at fault and why; fix them and call again (nothing was written).'),
  recreated: z
    .object({ previousId: z.string().describe('The CRM id this record had when it was last written through this ledger.') })
    .optional()
    .describe('created: the record had been written before and was gone from the CRM (deleted or merged away), so it was created again under a new id.'),
  superseded: z
    .array(z.string())
    .optional()
    .describe('Fields of this call left to a newer value: a newer event (a later occurredAt) already set them, so they were not sent. On status superseded: every field of the call.'),
  newerAt: z.string().optional().describe('With superseded: the time of the newest event whose value stands.'),
});
export type CallResult = z.infer<typeof callResultSchema>;

/** The structured result of get_outcome. */
export const outcomeReportSchema = z.object({
  key: z.string().describe('The ledger key looked up.'),
  status: z.enum([...statusValues, 'not_found']).describe('What the earlier call ended as; in_flight while it is still being written; not_found when nothing was recorded (nothing was written under it).'),
  recordId: z.string().optional(),
  error: errorSchema.optional(),
  attempts: z.number().optional().describe('How many times the key was claimed.'),
  updatedAt: z.string().optional(),
  leaseUntil: z.string().optional().describe('in_flight: when the holder\'s claim runs out if it is not renewed.'),
});
export type OutcomeReport = z.infer<typeof outcomeReportSchema>;

export const getOutcomeInput = z.strictObject({
  key: z.string().min(1).max(500).describe('The key a write tool returned, or the idempotencyKey you passed to it.'),
});
