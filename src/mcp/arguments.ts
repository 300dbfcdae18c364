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
}

/** What naming a tool's arguments takes: its name, object, allowlist and strict arguments. */
export type ArgumentsOf = Pick<ToolSpec, 'name' | 'object' | 'spec' | 'input'>;

/** A tool's zod issues as `{ path, message }`, naming the argument and, for a field off the allowlist, the allowlist. */
export function issuesOf(tool: ArgumentsOf, error: z.ZodError): ValidationIssue[] {
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
    if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) {
      return [{ path: at, message: `is required (${issue.expected})` }];
    }
    return formatZodIssues({ issues: [issue] } as z.ZodError);
  });
}

/** The arguments, or every issue with them. */
export function parseArgs(tool: ToolSpec, raw: unknown): { ok: true; args: ToolArgs } | { ok: false; issues: ValidationIssue[] } {
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) return { ok: false, issues: issuesOf(tool, parsed.error) };
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
