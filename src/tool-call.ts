/**
 * `toolCallAction(adapter, object, args, { for })`: a model's tool call, made against the schema
 * `toolSchema` gave for the same dialect, turned into the action the engine applies. What a null
 * means follows the dialect:
 *
 * - `openai`: strict mode requires every property, so a model says "not given" with a null: a
 *   null field is left out of the action (the record keeps its value). A field is emptied by
 *   naming it in `clear`.
 * - `json-schema`, `anthropic`: properties are optional, so a field left out is not given and a
 *   null empties it, as in an action. `clear` empties fields too, and is the only way for a field
 *   whose strict schema takes no null (a defined field: an enumeration, a date, a number).
 *
 * In every dialect a null for an optional argument other than a field (`links`, `clear`,
 * `idempotencyKey`, `occurredAt`, `intent`) is "not given": `links: null` is no links.
 */
import type { Action } from '../schemas/action.js';
import type { ValidationIssue } from '../schemas/issues.js';
import type { CrmAdapter } from './adapter.js';
import { ConfigError, ValidationError } from './errors.js';
import { parseArgs, toAction, type ToolArgs } from './mcp/arguments.js';
import type { ToolSpec } from './mcp/tool-schemas.js';
import { SCHEMA_DIALECTS, specOf, type SchemaDialect } from './tool-schema.js';

export interface ToolCallOptions {
  /** The dialect of the schema the model was given (`toolSchema`'s `for`): it decides what a null means. Default `json-schema`. */
  for?: SchemaDialect;
  /** The action's `source`: idempotency keys are scoped by it, so give each agent its own. Default `tool-call`. */
  source?: string;
  /** Clock for a keyless call's `occurredAt` (its dedupe bucket and window), epoch ms. Default Date.now. */
  now?: () => number;
}

export const DEFAULT_TOOL_CALL_SOURCE = 'tool-call';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The arguments with each null for an optional argument (other than a field) left out. */
function withoutNullArguments(tool: ToolSpec, raw: Json): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(raw)) {
    const optional = Object.hasOwn(tool.input.shape, name) && tool.input.shape[name]!.safeParse(undefined).success;
    if (value === null && optional) continue;
    out[name] = value;
  }
  return out;
}

/** A tool call's arguments as an action, or every issue with them (each naming the argument). */
export function toolCallToAction(
  tool: ToolSpec,
  raw: unknown,
  o: { dialect: SchemaDialect; source: string; callTime: string },
): { ok: true; action: Action; args: ToolArgs } | { ok: false; issues: ValidationIssue[] } {
  if (!isObject(raw)) {
    const sent = raw === null ? 'null' : Array.isArray(raw) ? 'a list' : typeof raw;
    return { ok: false, issues: [{ path: '', message: `the arguments of ${tool.name} must be an object, not ${sent}` }] };
  }
  // A field given a value and named in clear, read from the arguments as sent so that it is
  // listed with every other problem of the call.
  const named = Array.isArray(raw.clear) && tool.input.shape.clear !== undefined ? [...new Set(raw.clear.filter((n): n is string => typeof n === 'string'))] : [];
  const sentFields = isObject(raw.fields) ? raw.fields : {};
  const both: ValidationIssue[] = named
    .filter((name) => Object.hasOwn(sentFields, name) && sentFields[name] !== null && sentFields[name] !== undefined)
    .map((name) => ({ path: `fields.${name}`, message: 'is given a value and also named in clear: give it a value or empty it, not both' }));
  const parsed = parseArgs(tool, withoutNullArguments(tool, raw));
  if (!parsed.ok || both.length > 0) return { ok: false, issues: [...(parsed.ok ? [] : parsed.issues), ...both] };
  const given = parsed.args;
  // Only openai's strict schemas make the model send null for a field it means to leave alone.
  const fields = o.dialect === 'openai' ? Object.fromEntries(Object.entries(given.fields).filter(([, v]) => v !== null)) : given.fields;
  const clear = [...new Set(given.clear ?? [])];
  const args: ToolArgs = { ...given, fields: { ...fields, ...Object.fromEntries(clear.map((name) => [name, null])) } };
  delete args.clear;
  return { ok: true, action: toAction(tool, args, o.source, o.callTime), args };
}

/**
 * The action of a tool call to `object`'s write tool, its arguments made against
 * `toolSchema(adapter, object, { for })`: an object, or the JSON text a provider returns (OpenAI's
 * `function.arguments`). Apply it with `sync.apply`, which checks and normalizes the values.
 * Throws a `ValidationError` naming each argument at fault and why (nothing to apply), a
 * `ConfigError` for an object that cannot be written or an unknown dialect.
 */
export function toolCallAction(adapter: CrmAdapter, object: string, args: unknown, options: ToolCallOptions = {}): Action {
  const dialect = options.for ?? 'json-schema';
  if (!SCHEMA_DIALECTS.includes(dialect)) throw new ConfigError(`toolCallAction: unknown dialect "${String(dialect)}"; known: ${SCHEMA_DIALECTS.join(', ')}`);
  const tool = specOf(adapter, object, 'toolCallAction');
  let raw = args;
  if (typeof args === 'string') {
    try {
      raw = JSON.parse(args) as unknown;
    } catch {
      throw new ValidationError([{ path: '', message: `the arguments of ${tool.name} are not valid JSON text` }]);
    }
  }
  const now = options.now ?? Date.now;
  const result = toolCallToAction(tool, raw, { dialect, source: options.source ?? DEFAULT_TOOL_CALL_SOURCE, callTime: new Date(now()).toISOString() });
  if (!result.ok) throw new ValidationError(result.issues);
  return result.action;
}
