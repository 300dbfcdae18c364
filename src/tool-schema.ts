/**
 * `toolSchema(adapter, object, { for })`: the arguments of a write to one object as a strict tool
 * schema for a model: the object's allowlisted fields (each defined field with its rule: an
 * enumeration's values, a date's format), its links as an enum of the objects allowed, and the
 * key and time of the event. The same arguments the MCP server's `upsert_<object>` /
 * `create_<object>` tools take. Each dialect stays inside what that provider accepts:
 *
 * - `json-schema`: draft 2020-12, `additionalProperties: false` everywhere.
 * - `openai` (strict structured outputs): every property listed in `required`, optional ones as
 *   `[T, "null"]` (a null means "not given", and the descriptions say so: an upsert's `clear`
 *   empties fields), no more than 1,000 enum values in all (the largest enumerations past that
 *   become plain strings, their values in the description).
 * - `anthropic` (strict tool use): no `minLength` / `maxLength` / `minimum` / `maximum` /
 *   `minItems` / `maxItems` (moved into the description; the engine enforces them), at most 16
 *   properties that use `anyOf` or a type array (the rest become strings; the engine still checks
 *   and normalizes).
 *
 * A field past a limit is a plain string whose description says so; the engine checks what
 * comes either way.
 */
import { z } from 'zod';
import type { CrmAdapter } from './adapter.js';
import { ConfigError } from './errors.js';
import { toolSpecs, withFieldRules, type ToolSpec } from './mcp/tool-schemas.js';

export type SchemaDialect = 'json-schema' | 'openai' | 'anthropic';
export const SCHEMA_DIALECTS: readonly SchemaDialect[] = ['json-schema', 'openai', 'anthropic'];

export interface ToolSchemaOptions {
  /** Which provider's rules the schema keeps to. Default `json-schema`. */
  for?: SchemaDialect;
}

/** The provider limits the dialects keep to. */
export const OPENAI_MAX_ENUM_VALUES = 1_000;
export const ANTHROPIC_MAX_UNION_PROPERTIES = 16;
/**
 * Anthropic refuses a request whose strict tools hold more optional parameters than this in all
 * ("Schemas contains too many optional parameters (87) ... (limit: 24)"): a budget shared by every
 * strict tool of the request, so one schema cannot keep to it alone. `optionalParameters` counts a
 * schema's share.
 */
export const ANTHROPIC_MAX_OPTIONAL_PARAMETERS = 24;
const BOUNDS = ['minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'maxItems'] as const;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every subschema of `node` (itself included), depth first. */
function* walk(node: unknown): Generator<Json> {
  if (Array.isArray(node)) for (const n of node) yield* walk(n);
  else if (isObject(node)) {
    yield node;
    for (const v of Object.values(node)) yield* walk(v);
  }
}

/** The write tool of `object`, from the adapter's objects (their allowlists, links and definitions). */
export function specOf(adapter: CrmAdapter, object: string, caller = 'toolSchema'): ToolSpec {
  const tool = toolSpecs(adapter.objects, { crm: adapter.name, windowMs: 0 }).find((t) => t.object === object);
  if (!tool) {
    const known = Object.keys(adapter.objects).join(', ');
    throw new ConfigError(`${caller}: "${object}" is not a configured object that can be written (configured: ${known})`);
  }
  return tool;
}

/** The tool's arguments as JSON Schema, each defined field carrying its rule. */
function baseSchema(tool: ToolSpec): Json {
  const { $schema: _drop, ...json } = z.toJSONSchema(tool.input, { target: 'draft-2020-12', io: 'input' }) as Json;
  withFieldRules(json, tool.spec.definitions);
  for (const node of walk(json)) if (node.type === 'object' && node.properties) node.additionalProperties = false;
  return json;
}

const describeMore = (node: Json, text: string) => (node.description = node.description ? `${node.description as string} ${text}` : text);

/** A field past a provider's limit: a plain string, the engine checks it. */
function asPlainString(node: Json, why: string): Json {
  const values = Array.isArray(node.enum) ? ` One of: ${(node.enum as unknown[]).filter((v) => v !== null).slice(0, 50).join(', ')}${(node.enum as unknown[]).length > 50 ? ', ...' : ''}.` : '';
  return { type: 'string', description: `${(node.description as string | undefined) ?? ''}${values} (${why}; checked when written.)`.trim() };
}

function forOpenAi(json: Json): Json {
  // The largest enumerations become strings until the schema holds at most 1,000 enum values.
  const fields = ((json.properties as Json).fields as Json).properties as Json;
  const enumCount = () => [...walk(json)].reduce((n, s) => n + (Array.isArray(s.enum) ? s.enum.length : 0), 0);
  const largest = Object.entries(fields).filter(([, s]) => Array.isArray((s as Json).enum)).sort(([, a], [, b]) => ((b as Json).enum as unknown[]).length - ((a as Json).enum as unknown[]).length);
  for (const [name, node] of largest) {
    if (enumCount() <= OPENAI_MAX_ENUM_VALUES) break;
    fields[name] = asPlainString(node as Json, `more values than a strict OpenAI schema holds`);
  }
  // Still over (more fields than that): clear's names stay in its description, checked when called.
  const clearItems = ((json.properties as Json).clear as Json | undefined)?.items as Json | undefined;
  if (clearItems && enumCount() > OPENAI_MAX_ENUM_VALUES) delete clearItems.enum;
  // Every property required; an optional one takes null as "not given".
  for (const node of walk(json)) {
    if (node.type !== 'object' || !isObject(node.properties)) continue;
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(node.properties)) {
      if (required.has(name)) continue;
      node.properties[name] = nullable(prop as Json);
    }
    node.required = Object.keys(node.properties);
  }
  return json;
}

function nullable(prop: Json): Json {
  if (typeof prop.type === 'string') {
    const out: Json = { ...prop, type: [prop.type, 'null'] };
    if (Array.isArray(prop.enum)) out.enum = [...prop.enum, null];
    return out;
  }
  if (Array.isArray(prop.anyOf)) return (prop.anyOf as Json[]).some((s) => s.type === 'null') ? prop : { ...prop, anyOf: [...prop.anyOf, { type: 'null' }] };
  return { anyOf: [prop, { type: 'null' }], ...(prop.description ? { description: prop.description } : {}) };
}

function forAnthropic(json: Json): Json {
  for (const node of walk(json)) {
    const bounds = BOUNDS.filter((b) => node[b] !== undefined);
    if (bounds.length === 0) continue;
    describeMore(node, `(${bounds.map((b) => `${b} ${String(node[b])}`).join(', ')})`);
    for (const b of bounds) delete node[b];
  }
  // At most 16 properties may use anyOf or a type array: the fields past that become strings.
  const usesUnion = (s: Json) => Array.isArray(s.anyOf) || Array.isArray(s.type);
  const fields = ((json.properties as Json).fields as Json).properties as Json;
  let unions = [...walk(json)].filter((s) => s !== json && usesUnion(s)).length;
  for (const [name, node] of Object.entries(fields)) {
    if (unions <= ANTHROPIC_MAX_UNION_PROPERTIES) break;
    if (!usesUnion(node as Json)) continue;
    fields[name] = asPlainString(node as Json, 'text here: send a number or true/false as text');
    unions -= 1;
  }
  return json;
}

/**
 * What a null and a field left out mean in each dialect, said where the model reads it: the
 * `fields` description, and in openai (where every field is sent) each field's and each optional
 * argument's own. `toolCallAction` reads a call the same way.
 */
function describeNulls(json: Json, tool: ToolSpec, dialect: SchemaDialect): void {
  const props = json.properties as Json;
  const clear = props.clear !== undefined;
  const fieldsNode = props.fields as Json;
  const rule = dialect === 'openai'
    ? clear
      ? 'Every field must be sent: null means "not given", and the record keeps that field\'s value (a null never empties a field; to empty one, name it in clear).'
      : 'Every field must be sent: null means "not given", and that field is not written.'
    : !clear
      ? 'A field left out is not written.'
      : dialect === 'anthropic'
        ? 'Leave a field out to keep what the record holds; to empty one, name it in clear (a null, where a field takes one, empties it too).'
        : 'Leave a field out to keep what the record holds; null empties it, and so does naming it in clear.';
  fieldsNode.description = `The ${tool.object} fields to write. Only these are allowed: ${tool.spec.fields.join(', ')}. ${rule}`;
  if (dialect !== 'openai') return;
  for (const node of Object.values((fieldsNode.properties as Json | undefined) ?? {})) {
    describeMore(node as Json, clear ? 'null: not written, the record keeps its value (to empty it, name it in clear).' : 'null: not written.');
  }
  const required = new Set(Object.keys(tool.input.shape).filter((name) => !tool.input.shape[name]!.safeParse(undefined).success));
  for (const [name, node] of Object.entries(props)) {
    if (required.has(name)) continue;
    describeMore(node as Json, name === 'links' ? 'null: no links.' : name === 'clear' ? 'null: empty none.' : 'null: not given.');
  }
}

/** The properties of `schema`, at every level, that are not in their object's `required`: its share of Anthropic's optional-parameter budget. */
export function optionalParameters(schema: Record<string, unknown>): number {
  let n = 0;
  for (const node of walk(schema)) {
    if (!isObject(node.properties)) continue;
    const required = new Set((node.required as string[] | undefined) ?? []);
    n += Object.keys(node.properties).filter((name) => !required.has(name)).length;
  }
  return n;
}

/** The strict schema of a write to `object` for `options.for`. */
export function toolSchema(adapter: CrmAdapter, object: string, options: ToolSchemaOptions = {}): Json {
  const dialect = options.for ?? 'json-schema';
  if (!SCHEMA_DIALECTS.includes(dialect)) throw new ConfigError(`toolSchema: unknown dialect "${String(dialect)}"; known: ${SCHEMA_DIALECTS.join(', ')}`);
  const tool = specOf(adapter, object);
  const json = baseSchema(tool);
  const schema = dialect === 'openai' ? forOpenAi(json) : dialect === 'anthropic' ? forAnthropic(json) : json;
  describeNulls(schema, tool, dialect);
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', title: tool.name, description: tool.description, ...schema };
}
