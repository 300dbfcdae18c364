/**
 * A tool call's arguments: validated against the tool's strict schema and turned into the action
 * the engine applies. Validation issues come out as `{ path, reason }` naming the argument, with
 * the allowlist in the reason for a field that is not on it.
 */
import { globalRegistry, type z } from 'zod';
import type { Action } from '../../schemas/action.js';
import type { ValidationIssue } from '../../schemas/issues.js';
import { cannotAttachMessage, cannotLinkMessage } from '../../schemas/objects.js';
import { expectedWords, formatZodIssues, pathSegment, valueAt } from '../../schemas/parse.js';
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

/** The schema at `path` inside `schema` (through optional, default, object, list and record), if any. */
function schemaAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): z.core.$ZodType | undefined {
  let at: z.core.$ZodType | undefined = schema;
  for (let i = 0; at && i <= path.length; ) {
    const def = at._zod.def as { type: string; innerType?: z.core.$ZodType; shape?: Record<string, z.core.$ZodType>; element?: z.core.$ZodType; valueType?: z.core.$ZodType };
    if (def.innerType && (def.type === 'optional' || def.type === 'default' || def.type === 'nullable')) {
      at = def.innerType;
      continue;
    }
    if (i === path.length) break;
    const key = path[i++]!;
    at = def.type === 'object' ? (Object.hasOwn(def.shape!, key) ? def.shape![key as string] : undefined) : def.type === 'array' ? def.element : def.type === 'record' ? def.valueType : undefined;
  }
  return at;
}

/** What an argument needs, from its description in the tool's schema: `an object: the record this note attaches to`. */
function needOf(tool: ArgumentsOf, issue: z.core.$ZodIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  const at = schemaAt(tool.input, issue.path);
  const description = at ? globalRegistry.get(at)?.description : undefined;
  const first = description?.split(/(?<=\.)\s/)[0]?.replace(/\.$/, '');
  if (!first || first.length > 160) return undefined;
  return `${expectedWords(issue.expected)}: ${first[0]!.toLowerCase()}${first.slice(1)}`;
}

/**
 * A tool's zod issues as `{ path, message }`, in the words of the shared formatter: naming the
 * argument and what it needs, the allowlist for a field that is not on it, and for a link or a
 * target the tool does not offer, the engine's own wording (`"deal" cannot link to "note"; allowed: ...`).
 */
export function issuesOf(tool: ArgumentsOf, error: z.ZodError, input?: unknown): ValidationIssue[] {
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
    const sent = valueAt(input, issue.path);
    if (issue.code === 'invalid_value' && typeof sent === 'string') {
      const offered = issue.values.map(String);
      if (/^links\.\d+\.object$/.test(at)) return [{ path: at, message: cannotLinkMessage(tool.object, sent, offered) }];
      if (at === 'target.object') return [{ path: at, message: cannotAttachMessage(tool.object, sent, offered) }];
      if (issue.path[0] === 'clear') return [{ path: at, message: `${JSON.stringify(sent)} is not on the allowlist for "${tool.object}" (allowed: ${offered.join(', ')})` }];
    }
    const need = needOf(tool, issue);
    return formatZodIssues({ issues: [issue] }, { input, ...(need !== undefined ? { needs: { [at]: need } } : {}) });
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
