/**
 * The read tools an MCP client sees beside the write tools, generated from the same configured
 * objects: `describe_<object>` for every object (its fields, which of them may be written, their
 * types and allowed values, from the config and loaded field definitions: no CRM call) and,
 * when the adapter reads records, `get_<object>` for every record object (sync.read: only the
 * allowlisted and `readFields` fields, never a ledger entry). An agent describes, gets, then
 * writes with an idempotencyKey.
 */
import { z } from 'zod';
import { actionSchema } from '../../schemas/action.js';
import { FIELD_TYPES, type FieldDefinition } from '../../schemas/field-definitions.js';
import type { ValidationIssue } from '../../schemas/issues.js';
import type { ObjectSpec } from '../../schemas/objects.js';
import { readableFields, type ReadOptions } from '../engine/read.js';
import { ConfigError } from '../errors.js';
import { issuesOf } from './arguments.js';
import { problemSchema } from './tool-schemas.js';

/** Most ids one get_<object> call reads (HubSpot's batch read limit; the engine splits further where a CRM needs it). */
export const MAX_READ_IDS = 100;

/** One generated read tool. */
export interface ReadToolSpec {
  /** `get_contact`, `describe_note`. */
  name: string;
  title: string;
  description: string;
  kind: 'get' | 'describe';
  /** The logical object (the adapter's `objects` key). */
  object: string;
  /** The object's spec (links and parents narrowed to configured record objects). */
  spec: ObjectSpec;
  /** The arguments, strict. */
  input: z.ZodObject;
  /** The structured result's schema. */
  output: z.ZodObject;
  /** get: the arguments that name the records; exactly one is given (externalId, externalIds, then the lookupBy fields). */
  lookups: string[];
}

export interface ReadToolOptions {
  /** The CRM's name as the descriptions say it (`hubspot`). */
  crm: string;
  /** Make get_<object> tools (the adapter has planReads and readRecords). Default true. */
  reads?: boolean;
}

const idSchema = actionSchema.shape.externalId.unwrap();
const RESERVED = ['externalId', 'externalIds', 'fields', 'links'];
const fieldValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const errorSchema = z.object({
  code: z.string().describe('VALIDATION, CRM, CONFIG, ...'),
  message: z.string(),
  path: z.string().optional().describe('The argument at fault.'),
  retryable: z.boolean().optional(),
});

function getInput(object: string, spec: ObjectSpec, crm: string): z.ZodObject {
  const readable = readableFields(spec) as [string, ...string[]];
  const lookupBy = spec.lookupBy ?? [];
  const links = spec.links ?? [];
  const ways = ['externalId', 'externalIds', ...lookupBy].join(', ');
  return z.strictObject({
    externalId: idSchema.optional().describe(`The ${object}'s externalId (as given to upsert_${object}). Give exactly one of: ${ways}.`),
    externalIds: z
      .array(idSchema)
      .min(1, 'must name at least 1 externalId')
      .max(MAX_READ_IDS, `must name at most ${MAX_READ_IDS} externalIds; read the rest in another call`)
      .optional()
      .describe(`Up to ${MAX_READ_IDS} ${object} externalIds, answered in this order. Give exactly one of: ${ways}.`),
    ...Object.fromEntries(lookupBy.map((f) => [f, idSchema.optional().describe(`Find the ${object} whose ${crm} field "${f}" is exactly this value. Give exactly one of: ${ways}.`)])),
    fields: z
      .array(z.enum(readable, { error: (issue) => `${JSON.stringify(issue.input)} is not readable on "${object}" (readable: ${readable.join(', ')})` }))
      .min(1, 'must name at least 1 field (leave it out for all of them)')
      .optional()
      .describe(`Answer only these fields. Default: all readable ones (${readable.join(', ')}).`),
    ...(links.length > 0 ? { links: z.boolean().optional().describe(`Also answer the ${links.join(', ')} records it is associated with (their externalIds). Default false.`) } : {}),
  });
}

function getOutput(object: string, spec: ObjectSpec): z.ZodObject {
  const readable = readableFields(spec);
  const record = z.object({
    id: z.string().describe('The value asked for (an externalId, or the lookup value).'),
    found: z.boolean(),
    recordId: z.string().optional().describe(`found: the ${object}'s CRM record id.`),
    externalId: z.string().optional().describe('found: its externalId (absent when it has none, as a record made in the CRM\'s own screens).'),
    fields: z.strictObject(Object.fromEntries(readable.map((f) => [f, fieldValue.optional()]))).optional().describe('found: the fields asked for; null when the record holds no value.'),
    links: z.array(z.object({ object: z.string(), recordId: z.string(), externalId: z.string().optional() })).optional().describe('links: true: the records it is associated with.'),
    matches: z.number().int().optional().describe('Not found because the lookup value names this many records: none is answered; read by externalId instead.'),
    reason: z.string().optional().describe('Not found because the value was never sent: no request to the CRM can carry it (too long).'),
  });
  return z.object({
    records: z.array(record).optional().describe('One answer per id asked, in order; absent when the call was refused or failed.'),
    error: errorSchema.optional().describe('Why the call was refused or failed.'),
    problems: z.array(problemSchema).optional().describe('A refused call: each argument at fault and why.'),
  });
}

/** A field as describe_<object> answers it. */
export const describedFieldSchema = z.object({
  name: z.string(),
  writable: z.boolean().describe('On the write tool\'s allowlist and not read-only in the CRM.'),
  readable: z.boolean().describe('Answered by get_<object>.'),
  type: z.enum(FIELD_TYPES).optional().describe('What the CRM stores (from its field definitions, and the checks an adapter always makes, such as a HubSpot contact\'s email; absent otherwise).'),
  allowed: z.array(z.string()).optional().describe('enumeration: the allowed values (labels are accepted too).'),
  allowedCount: z.number().int().optional().describe('enumeration: how many values there are when more than the ones listed.'),
  labels: z.record(z.string(), z.string()).optional().describe('enumeration: value -> label, where they differ.'),
  hidden: z.array(z.string()).optional().describe('enumeration: values the CRM hides from its forms; not in allowed, still accepted when written and found in records.'),
  multiple: z.boolean().optional().describe('enumeration: several values at once, joined with ";".'),
  restricted: z.boolean().optional().describe('enumeration: false when other values are accepted too.'),
  maxLength: z.number().int().optional().describe('The most characters the CRM stores.'),
});
export type DescribedField = z.infer<typeof describedFieldSchema>;

export const describeOutput = z.object({
  object: z.string(),
  kind: z.enum(['record', 'activity']).describe('record: upserted by its externalId; activity: created on a record.'),
  fields: z.array(describedFieldSchema),
  lookupBy: z.array(z.string()).optional().describe('record: fields get_<object> can find it by besides its externalId.'),
  links: z.array(z.string()).optional().describe('record: the objects it can be associated with (the write tool\'s links).'),
  parents: z.array(z.string()).optional().describe('activity: the objects it can be created on (the write tool\'s target).'),
  tools: z.object({ read: z.string().optional(), write: z.string().optional() }).describe('The tools for this object.'),
});
export type Described = z.infer<typeof describeOutput>;

function getTool(object: string, spec: ObjectSpec, o: ReadToolOptions): ReadToolSpec {
  for (const f of spec.lookupBy ?? []) {
    if (RESERVED.includes(f)) throw new ConfigError(`object "${object}" has the lookupBy field "${f}", which is also an argument of get_${object}; it cannot be one of ${RESERVED.join(', ')}`);
  }
  const lookups = ['externalId', 'externalIds', ...(spec.lookupBy ?? [])];
  const by = spec.lookupBy?.length ? `, or by ${spec.lookupBy.join(' or ')}` : '';
  return {
    name: `get_${object}`,
    title: `Read ${object} records`,
    kind: 'get',
    object,
    spec,
    lookups,
    description:
      `Read ${o.crm} ${object} records as they are now: by externalId, by up to ${MAX_READ_IDS} externalIds${by} (exactly one of these). ` +
      `Answers only these fields: ${readableFields(spec).join(', ')}. Reads only: writes nothing and records nothing. ` +
      `Order: describe_${object} (fields, allowed values), get_${object}, then upsert_${object} with an idempotencyKey. ` +
      'A record not found is found: false; a lookup value that names several records answers none (matches: how many).',
    input: getInput(object, spec, o.crm),
    output: getOutput(object, spec),
  };
}

function describeTool(object: string, spec: ObjectSpec, o: ReadToolOptions): ReadToolSpec {
  const write = spec.kind === 'record' ? `upsert_${object}` : (spec.parents ?? []).length > 0 ? `create_${object}` : undefined;
  const get = spec.kind === 'record' && o.reads !== false ? `, then get_${object} to see the record` : '';
  const then = write ? `, then ${write} with an idempotencyKey` : ` (no write tool: it has no parent record configured)`;
  return {
    name: `describe_${object}`,
    title: `Describe a ${object}`,
    kind: 'describe',
    object,
    spec,
    lookups: [],
    description:
      `What a ${o.crm} ${object} holds and accepts: its fields (which you may write, their types and allowed values) and what it ${spec.kind === 'record' ? 'links to' : 'attaches to'}. ` +
      `Answers from the configuration: no CRM call. Call it first${get}${then}.`,
    input: z.strictObject({}),
    output: describeOutput,
  };
}

/** The read tools for `objects`: describe_ for each object, get_ for each record object when the adapter reads. */
export function readToolSpecs(objects: Readonly<Record<string, ObjectSpec>>, options: ReadToolOptions): ReadToolSpec[] {
  const tools: ReadToolSpec[] = [];
  const records = (names: readonly string[] | undefined) => (names ?? []).filter((n) => objects[n]?.kind === 'record');
  for (const [object, raw] of Object.entries(objects)) {
    const spec = raw.kind === 'record' ? { ...raw, links: records(raw.links) } : { ...raw, parents: records(raw.parents) };
    tools.push(describeTool(object, spec, options));
    if (spec.kind === 'record' && options.reads !== false) tools.push(getTool(object, spec, options));
  }
  for (const t of tools) {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(t.name)) throw new ConfigError(`object "${t.object}" gives the tool name "${t.name}": MCP tool names use only letters, digits, _ and -`);
    if (t.name === 'get_outcome') throw new ConfigError(`object "${t.object}" gives the tool name "get_outcome", which looks up earlier calls; give the object another name`);
  }
  return tools;
}

/** A get_<object> call's validated arguments as sync.read's. */
export interface GetRequest {
  ids: string[];
  options: ReadOptions;
}

/**
 * get_<object>'s arguments. The schema is one flat object with every way to name records
 * optional, and "exactly one" checked here rather than as a JSON Schema `oneOf`: clients and
 * model providers handle `oneOf` unevenly (some drop it, some refuse the tool), while a flat
 * strict object is read the same everywhere, and this check names the arguments at fault.
 */
export function parseGetArgs(tool: ReadToolSpec, raw: unknown): { ok: true; request: GetRequest } | { ok: false; issues: ValidationIssue[] } {
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) return { ok: false, issues: issuesOf(tool, parsed.error, raw ?? {}) };
  const args = parsed.data as Record<string, unknown>;
  const given = tool.lookups.filter((k) => args[k] !== undefined);
  const ways = tool.lookups.join(', ');
  if (given.length === 0) return { ok: false, issues: [{ path: '', message: `name the records: give exactly one of ${ways}` }] };
  if (given.length > 1) return { ok: false, issues: given.slice(1).map((k) => ({ path: k, message: `is given together with ${given[0]}: give exactly one of ${ways}` })) };
  const way = given[0]!;
  const value = args[way] as string | string[];
  const options: ReadOptions = {
    ...(way !== 'externalId' && way !== 'externalIds' ? { by: way } : {}),
    ...(args.fields !== undefined ? { fields: args.fields as string[] } : {}),
    ...(args.links === true ? { links: true } : {}),
  };
  return { ok: true, request: { ids: Array.isArray(value) ? value : [value], options } };
}

/** Most allowed values describe_<object> lists per field. */
export const MAX_DESCRIBED_OPTIONS = 250;

function describedField(name: string, spec: ObjectSpec, d: FieldDefinition | undefined, readable: boolean): DescribedField {
  const allowlisted = spec.fields.includes(name);
  const out: DescribedField = { name, writable: allowlisted && d?.readOnly !== true, readable };
  if (!d) return out;
  out.type = d.type;
  if (d.maxLength !== undefined) out.maxLength = d.maxLength;
  if (d.type !== 'enumeration') return out;
  const all = (d.options ?? []).map((x) => (typeof x === 'string' ? { value: x, label: undefined, hidden: false } : x));
  // Hidden options are offered apart, as the write tool's schema leaves them out of its enumeration.
  const options = all.filter((x) => !x.hidden);
  const hidden = all.filter((x) => x.hidden).map((x) => x.value);
  if (hidden.length > 0) out.hidden = hidden.slice(0, MAX_DESCRIBED_OPTIONS);
  out.allowed = options.slice(0, MAX_DESCRIBED_OPTIONS).map((x) => x.value);
  if (options.length > MAX_DESCRIBED_OPTIONS) out.allowedCount = options.length;
  const labels = options.slice(0, MAX_DESCRIBED_OPTIONS).filter((x) => x.label !== undefined && x.label !== x.value);
  if (labels.length > 0) out.labels = Object.fromEntries(labels.map((x) => [x.value, x.label!]));
  if (d.multiple) out.multiple = true;
  if (d.restricted === false) out.restricted = false;
  return out;
}

/** describe_<object>'s answer: the allowlist (then readFields, read-only) with what the loaded definitions say of each. */
export function describeObject(tool: ReadToolSpec, reads: boolean): Described {
  const { spec, object } = tool;
  const names = spec.kind === 'record' ? readableFields(spec) : [...spec.fields];
  const record = spec.kind === 'record';
  return {
    object,
    kind: spec.kind,
    fields: names.map((n) => describedField(n, spec, spec.definitions && Object.hasOwn(spec.definitions, n) ? spec.definitions[n] : undefined, record && reads)),
    ...(record && spec.lookupBy?.length ? { lookupBy: [...spec.lookupBy] } : {}),
    ...(record ? { links: [...(spec.links ?? [])] } : { parents: [...(spec.parents ?? [])] }),
    tools: {
      ...(record && reads ? { read: `get_${object}` } : {}),
      ...(record ? { write: `upsert_${object}` } : (spec.parents ?? []).length > 0 ? { write: `create_${object}` } : {}),
    },
  };
}
