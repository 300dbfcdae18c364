/**
 * Per-object checks that need the adapter's configuration: the object exists, has the right
 * kind for the op, the target is an allowed parent, and every field is on the allowlist.
 */
import type { Action } from './action.js';
import type { ValidationIssue } from './issues.js';

/** A logical object, as the engine sees it (the adapter's options add the CRM specifics). */
export interface ObjectSpec {
  /** `record`: upserted by its external-id field. `activity`: created on a parent record, carrying the action key. */
  kind: 'record' | 'activity';
  /** The allowlist: the only CRM property names an action may write. */
  fields: readonly string[];
  /** activity only: the logical parent objects it may attach to. */
  parents?: readonly string[];
}

export interface ObjectCheckOptions {
  /** Longest string value accepted, in characters. Default 65,536 (HubSpot's note body limit). */
  maxFieldLength?: number;
}

export const DEFAULT_MAX_FIELD_LENGTH = 65_536;

export function checkAgainstObjects(
  action: Action,
  objects: Readonly<Record<string, ObjectSpec>>,
  options: ObjectCheckOptions = {},
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const known = Object.keys(objects).join(', ') || '(none configured)';
  const spec = Object.hasOwn(objects, action.object) ? objects[action.object] : undefined;
  if (!spec) return [{ path: 'object', message: `unknown object "${action.object}"; configured: ${known}` }];
  const wantKind = action.op === 'upsert' ? 'record' : 'activity';
  if (spec.kind !== wantKind) {
    issues.push({ path: 'op', message: `op "${action.op}" needs a ${wantKind} object; "${action.object}" is a ${spec.kind}` });
  }
  if (action.target) {
    const parents = spec.parents ?? [];
    if (!parents.includes(action.target.object)) {
      issues.push({ path: 'target.object', message: `"${action.object}" cannot attach to "${action.target.object}"; allowed: ${parents.join(', ') || '(none)'}` });
    } else if (objects[action.target.object]?.kind !== 'record') {
      issues.push({ path: 'target.object', message: `"${action.target.object}" is not a configured record object` });
    }
  }
  const max = options.maxFieldLength ?? DEFAULT_MAX_FIELD_LENGTH;
  const allowed = new Set(spec.fields);
  for (const [name, value] of Object.entries(action.fields)) {
    if (!allowed.has(name)) {
      issues.push({ path: `fields.${name}`, message: `not on the allowlist for "${action.object}" (allowed: ${spec.fields.join(', ')})` });
    } else if (typeof value === 'string' && value.length > max) {
      issues.push({ path: `fields.${name}`, message: `value is ${value.length} characters; the limit is ${max}` });
    }
  }
  return issues;
}
