/**
 * Per-object checks that need the adapter's configuration: the object exists, has the right
 * kind for the op, the target is an allowed parent, every link is to an object this one may be
 * associated with (at most `maxLinks` of them, no two on one CRM field), and every field is on
 * the allowlist.
 */
import type { Action, Link } from './action.js';
import type { FieldDefinition } from './field-definitions.js';
import type { ValidationIssue } from './issues.js';

/** A logical object, as the engine sees it (the adapter's options add the CRM specifics). */
export interface ObjectSpec {
  /** `record`: upserted by its external-id field. `activity`: created on a parent record, carrying the action key. */
  kind: 'record' | 'activity';
  /** The allowlist: the only CRM property names an action may write. */
  fields: readonly string[];
  /** activity only: the logical parent objects it may attach to (its `target` and its `links`). */
  parents?: readonly string[];
  /** record only: the logical record objects it may link to. */
  links?: readonly string[];
  /**
   * Where a CRM keeps one associated record per field (Salesforce lookups): linked object -> the
   * field a link to it sets. Two references on one field in one action are refused. Absent: a
   * record may be associated with any number of records of an object (HubSpot).
   */
  slots?: Readonly<Record<string, string>>;
  /** record only: fields a read answers besides the allowlist (`readFields` in the config); never written. */
  readFields?: readonly string[];
  /** record only: unique CRM fields a read may match on instead of the external id (`lookupBy`: `['email']`). */
  lookupBy?: readonly string[];
  /**
   * record only: what an upsert does when the record this ledger wrote before (the write carries
   * its `knownId`) is gone from the CRM, deleted or merged away since. `create` (the default, also
   * when absent): the CRM's upsert writes it again and the outcome says `recreated`. `skip`: it is
   * not written; the action fails with `RECORD_GONE` (not retryable), naming the id it had. Records
   * never written through the ledger are upserted either way.
   */
  onMissing?: 'create' | 'skip';
  /** What the CRM accepts as each field's value, for the fields that have a definition (field-definitions.ts). */
  definitions?: Readonly<Record<string, FieldDefinition>>;
}

export interface ObjectCheckOptions {
  /** Longest string value accepted, in characters. Default 65,536 (HubSpot's note body limit). */
  maxFieldLength?: number;
  /** Most links one action may carry, after duplicates are merged. Default 10. */
  maxLinks?: number;
}

export const DEFAULT_MAX_FIELD_LENGTH = 65_536;
export const DEFAULT_MAX_LINKS = 10;

/** A list value is joined the CRM's way (`a;b`) only for a field defined as a multi-select. */
const isMultiSelect = (d: FieldDefinition | undefined) => d?.type === 'enumeration' && d.multiple === true;

const sameRef = (a: Link, b: Link) => a.object === b.object && a.externalId === b.externalId;
const refText = (r: Link) => `${r.object} ${JSON.stringify(r.externalId)}`;

/**
 * The action's links as written: duplicates merged (first one kept), a create's link to its own
 * target dropped (the target is associated anyway). Undefined when none is left.
 */
export function distinctLinks(action: Pick<Action, 'links' | 'target'>): Link[] | undefined {
  const out: Link[] = [];
  for (const link of action.links ?? []) {
    if (action.target && sameRef(link, action.target)) continue;
    if (!out.some((l) => sameRef(l, link))) out.push(link);
  }
  return out.length > 0 ? out : undefined;
}

/** The rejection of a link to an object `object` may not be associated with (also the MCP tools' wording). */
export const cannotLinkMessage = (object: string, linked: string, allowed: readonly string[]) =>
  `"${object}" cannot link to "${linked}"; allowed: ${allowed.join(', ') || '(none)'}`;

/** The rejection of a create whose target is not one of the activity's parents (also the MCP tools' wording). */
export const cannotAttachMessage = (object: string, target: string, parents: readonly string[]) =>
  `"${object}" cannot attach to "${target}"; allowed: ${parents.join(', ') || '(none)'}`;

function checkLinks(action: Action, spec: ObjectSpec, objects: Readonly<Record<string, ObjectSpec>>, maxLinks: number): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const allowed = (spec.kind === 'activity' ? spec.parents : spec.links) ?? [];
  const self = action.op === 'upsert' ? { object: action.object, externalId: action.externalId ?? '' } : undefined;
  (action.links ?? []).forEach((link, i) => {
    if (!allowed.includes(link.object)) {
      issues.push({ path: `links.${i}.object`, message: cannotLinkMessage(action.object, link.object, allowed) });
    } else if (objects[link.object]?.kind !== 'record') {
      issues.push({ path: `links.${i}.object`, message: `"${link.object}" is not a configured record object` });
    } else if (self && sameRef(link, self)) {
      issues.push({ path: `links.${i}`, message: `a record cannot link to itself (${refText(link)})` });
    }
  });
  if (issues.length > 0) return issues;
  const links = distinctLinks(action) ?? [];
  if (links.length > maxLinks) return [{ path: 'links', message: `${links.length} distinct links; at most ${maxLinks} per action` }];
  // One CRM field holds one reference: a Task has one Who and one What, a Contact one Account.
  const taken = new Map<string, Link>();
  const refs = [...(action.target ? [action.target] : []), ...links];
  for (const ref of refs) {
    const field = spec.slots?.[ref.object];
    if (field === undefined) continue;
    const first = taken.get(field);
    if (first) {
      const i = (action.links ?? []).findIndex((l) => sameRef(l, ref));
      issues.push({ path: `links.${i}`, message: `${refText(first)} and ${refText(ref)} both set ${field}, which holds one record; send one of them` });
    } else taken.set(field, ref);
  }
  return issues;
}

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
      issues.push({ path: 'target.object', message: cannotAttachMessage(action.object, action.target.object, parents) });
    } else if (objects[action.target.object]?.kind !== 'record') {
      issues.push({ path: 'target.object', message: `"${action.target.object}" is not a configured record object` });
    }
  }
  if (action.links !== undefined) issues.push(...checkLinks(action, spec, objects, options.maxLinks ?? DEFAULT_MAX_LINKS));
  const max = options.maxFieldLength ?? DEFAULT_MAX_FIELD_LENGTH;
  const allowed = new Set(spec.fields);
  for (const [name, value] of Object.entries(action.fields)) {
    if (!allowed.has(name)) {
      issues.push({ path: `fields.${name}`, message: `not on the allowlist for "${action.object}" (allowed: ${spec.fields.join(', ')})` });
    } else if (typeof value === 'string' && value.length > max) {
      issues.push({ path: `fields.${name}`, message: `value is ${value.length} characters; the limit is ${max}` });
    } else if (Array.isArray(value) && !isMultiSelect(spec.definitions?.[name])) {
      issues.push({ path: `fields.${name}`, message: `a list of values is only for a multi-select field with a field definition${spec.definitions?.[name] ? '' : ' (crm-upsert schema pull)'}; send one value` });
    }
  }
  return issues;
}
