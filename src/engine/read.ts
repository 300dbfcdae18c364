/**
 * sync.read: records of one object by their external ids (or a `lookupBy` field), batched to the
 * CRM's limits, each group retried like a write (Retry-After waited, 5xx and resets backed off,
 * 4xx not retried), never through a search index, never touching the ledger, never cached.
 * Only the object's allowlisted and `readFields` fields are answered, whatever the CRM sends.
 */
import { adapterReads, type Fields, type ReadLink, type ReadRequest, type ReadResult } from '../adapter.js';
import { ConfigError, CrmError, ValidationError } from '../errors.js';
import type { ValidationIssue } from '../../schemas/issues.js';
import type { ObjectSpec } from '../../schemas/objects.js';
import { withRetry } from '../retry.js';
import type { EngineContext } from './types.js';

export interface ReadOptions {
  /** Answer only these fields (each one of the object's allowlist or `readFields`). Default: all of them. */
  fields?: readonly string[];
  /** Also answer the records it is linked to (of the objects its config links to). Default false. */
  links?: boolean;
  /** Match the ids on this `lookupBy` field (`'email'`) instead of the external id. Default: the external id. */
  by?: string;
}

/** One answer per id asked, in the order asked; `id` is the value asked for. */
export type ReadAnswer =
  | { id: string; found: true; recordId: string; externalId?: string; fields: Fields; links?: ReadLink[] }
  | { id: string; found: false; matches?: number; reason?: string };

/** The fields a read of this object may answer: the allowlist, then `readFields`. */
export const readableFields = (spec: ObjectSpec): string[] => [...new Set([...spec.fields, ...(spec.readFields ?? [])])];

function requestFor(object: string, spec: ObjectSpec | undefined, options: ReadOptions, objects: string): ReadRequest {
  const issues: ValidationIssue[] = [];
  if (!spec) throw new ValidationError([{ path: 'object', message: `unknown object "${object}"; configured: ${objects}` }]);
  if (spec.kind !== 'record') throw new ValidationError([{ path: 'object', message: `"${object}" is an activity object; only record objects are read` }]);
  const readable = readableFields(spec);
  (options.fields ?? []).forEach((f, i) => {
    if (!readable.includes(f)) issues.push({ path: `fields.${i}`, message: `"${f}" is not readable on "${object}" (readable: ${readable.join(', ')}; add it to the object's readFields)` });
  });
  if (options.by !== undefined && !(spec.lookupBy ?? []).includes(options.by)) {
    issues.push({ path: 'by', message: `"${object}" cannot be read by "${options.by}"; ${spec.lookupBy?.length ? `lookupBy: ${spec.lookupBy.join(', ')}` : 'its config names no lookupBy field'}` });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return { ...(options.by !== undefined ? { by: options.by } : {}), fields: options.fields ? [...new Set(options.fields)] : readable, links: options.links === true && (spec.links ?? []).length > 0 };
}

function checkIds(ids: unknown): string[] {
  if (!Array.isArray(ids)) throw new ValidationError([{ path: 'ids', message: 'must be an array of strings' }]);
  const issues = ids.flatMap((id, i): ValidationIssue[] => (typeof id === 'string' && id.trim().length > 0 ? [] : [{ path: `ids.${i}`, message: 'must be a non-empty string' }]));
  if (issues.length > 0) throw new ValidationError(issues);
  return ids as string[];
}

/** Keep what the config lets a read answer, and the links only to objects it names. */
function filtered(result: ReadResult, request: ReadRequest, spec: ObjectSpec): ReadResult {
  if (!result.found) return { found: false, ...(result.matches !== undefined ? { matches: result.matches } : {}), ...(result.reason !== undefined ? { reason: result.reason } : {}) };
  const fields: Fields = {};
  for (const f of request.fields) fields[f] = Object.hasOwn(result.fields, f) ? result.fields[f]! : null;
  const links = request.links ? { links: (result.links ?? []).filter((l) => (spec.links ?? []).includes(l.object)) } : {};
  return { found: true, recordId: result.recordId, ...(result.externalId !== undefined ? { externalId: result.externalId } : {}), fields, ...links };
}

export async function readRecords(ctx: EngineContext, object: string, ids: readonly string[], options: ReadOptions = {}): Promise<ReadAnswer[]> {
  const { adapter } = ctx;
  const spec = Object.hasOwn(adapter.objects, object) ? adapter.objects[object] : undefined;
  const request = requestFor(object, spec, options, Object.keys(adapter.objects).join(', ') || '(none configured)');
  const asked = checkIds(ids);
  if (!adapterReads(adapter)) throw new ConfigError(`the ${adapter.name} adapter does not read records`);
  const distinct = [...new Set(asked)];
  const answers = new Map<string, ReadResult>();
  for (const group of distinct.length > 0 ? adapter.planReads(object, distinct, request) : []) {
    ctx.quota.check();
    const results = await withRetry(async () => {
      try {
        const results = await adapter.readRecords(object, group, request);
        if (results.length !== group.length) throw new CrmError(`the ${adapter.name} adapter answered ${results.length} of ${group.length} ids read; read again`, { vendor: adapter.name, kind: 'transient' });
        return results;
      } catch (err) {
        const crm = err instanceof CrmError ? err : adapter.classifyError(err);
        ctx.quota.note(crm);
        throw crm;
      }
    }, { ...ctx.retry, sleep: ctx.sleep });
    group.forEach((id, i) => answers.set(id, filtered(results[i]!, request, spec!)));
  }
  return asked.map((id) => ({ id, ...answers.get(id)! }) as ReadAnswer);
}
