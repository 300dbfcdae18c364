/**
 * A tool call's arguments: validated against the tool's strict schema and turned into the action
 * the engine applies. Validation issues come out as `{ path, reason }` naming the argument, with
 * the allowlist in the reason for a field that is not on it.
 */
import type { z } from 'zod';
import type { Action } from '../../schemas/action.js';
import type { ValidationIssue } from '../../schemas/issues.js';
import { formatZodIssues, pathSegment } from '../../schemas/parse.js';
import type { ToolSpec } from './tool-schemas.js';

/** A write tool's validated arguments. */
export interface ToolArgs {
  /** upsert tools: the record's external id. */
  externalId?: string;
  /** create tools: the record the activity attaches to. */
  target?: { object: string; externalId: string };
  /** Allowlisted fields; an undefined value is left out. */
  fields: Record<string, string | number | boolean | null | undefined>;
  /** The agent's key: the action's event id. Absent: the call is keyless (bucket and window). */
  idempotencyKey?: string;
  /** The event's time. Default: the time of the call for a keyless call, none for a keyed one. */
  occurredAt?: string;
  /** create tools: the label separating two different activities on one record. */
  intent?: string;
  /** Further records the record or activity is associated with. */
  links?: { object: string; externalId: string }[];
  /** upsert tools: fields to empty, by name. */
  clear?: string[];
}

/** What naming a tool's arguments takes: its name, object, allowlist and strict arguments. */
export type ArgumentsOf = Pick<ToolSpec, 'name' | 'object' | 'spec' | 'input'>;

const KINDS: Record<string, string> = { string: 'a string', number: 'a number', boolean: 'true or false', object: 'an object', array: 'a list', int: 'a whole number' };

/** What a value is, as a reason says it: `a number`, `null`, `a list`. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return KINDS[typeof value] ?? typeof value;
}

/** The value at `path` in the raw arguments (undefined where there is none). */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let at = raw;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/**
 * A tool's zod issues as `{ path, message }`, naming the argument and, for a field off the
 * allowlist, the allowlist. `raw` (the arguments as sent) lets a reason say what was sent.
 */
export function issuesOf(tool: ArgumentsOf, error: z.ZodError, raw?: unknown): ValidationIssue[] {
  return error.issues.flatMap((issue): ValidationIssue[] => {
    const at = issue.path.map(pathSegment).join('.');
    if (issue.code === 'unrecognized_keys') {
      const reason = at === 'fields'
        ? `is not on the allowlist for "${tool.object}" (allowed: ${tool.spec.fields.join(', ')})`
        : at === ''
          ? `is not an argument of ${tool.name} (${Object.keys(tool.input.shape).length > 0 ? `arguments: ${Object.keys(tool.input.shape).join(', ')}` : 'it takes none'})`
          : 'is not a known property';
      return issue.keys.map((k) => ({ path: at ? `${at}.${pathSegment(k)}` : pathSegment(k), message: reason }));
    }
    // Only zod's own wording is replaced: a schema's custom message already says it in our words.
    const zodWording = /^Invalid (input|option)/.test(issue.message);
    if (issue.code === 'invalid_type' && zodWording) {
      const sent = valueAt(raw, issue.path);
      const expected = KINDS[issue.expected] ?? issue.expected;
      const missing = raw === undefined ? / received undefined$/.test(issue.message) : sent === undefined;
      if (missing) return [{ path: at, message: `is required (${issue.expected})` }];
      return [{ path: at, message: raw === undefined ? `must be ${expected}` : `must be ${expected}, not ${kindOf(sent)}` }];
    }
    if (issue.code === 'invalid_value' && zodWording && issue.values.length > 0) {
      const sent = JSON.stringify(valueAt(raw, issue.path)) ?? 'this value';
      const allowed = issue.values.map(String).join(', ');
      if (issue.path[0] === 'clear') return [{ path: at, message: `${sent} is not on the allowlist for "${tool.object}" (allowed: ${allowed})` }];
      return [{ path: at, message: `${sent} is not one of: ${allowed}` }];
    }
    return formatZodIssues({ issues: [issue] } as z.ZodError);
  });
}

/** The arguments, or every issue with them. */
export function parseArgs(tool: ToolSpec, raw: unknown): { ok: true; args: ToolArgs } | { ok: false; issues: ValidationIssue[] } {
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) return { ok: false, issues: issuesOf(tool, parsed.error, raw ?? {}) };
  return { ok: true, args: parsed.data as unknown as ToolArgs };
}

/**
 * The engine action of a call. With an idempotencyKey it is the event id, under the client's
 * source; without one the call's own time is its event time (its period bucket and window).
 */
export function toAction(tool: ToolSpec, args: ToolArgs, source: string, callTime: string): Action {
  const fields = Object.fromEntries(Object.entries(args.fields).filter(([, v]) => v !== undefined)) as Action['fields'];
  const occurredAt = args.occurredAt ?? (args.idempotencyKey === undefined ? callTime : undefined);
  return {
    source,
    ...(args.idempotencyKey !== undefined ? { eventId: args.idempotencyKey } : {}),
    ...(occurredAt !== undefined ? { occurredAt } : {}),
    op: tool.op,
    object: tool.object,
    ...(tool.op === 'upsert' ? { externalId: args.externalId! } : { target: args.target! }),
    ...(args.intent !== undefined ? { intent: args.intent } : {}),
    fields,
    ...(args.links !== undefined ? { links: args.links } : {}),
  };
}
