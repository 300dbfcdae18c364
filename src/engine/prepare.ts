/**
 * Stage 1, prepare: validate each input (zod, then the objects' allowlists and, with field
 * definitions, its values, normalized) and key it. Nothing is claimed or written for an input that
 * fails here; its outcome is `rejected` with the path and
 * the reason. A stored action being retried keeps the key it was first given.
 */
import { hash as digest } from 'node:crypto';
import type { Action } from '../../schemas/action.js';
import { checkAgainstObjects, distinctLinks } from '../../schemas/objects.js';
import { checkValues, type Normalized } from '../../schemas/values.js';
import { formatZodIssues } from '../../schemas/parse.js';
import { snapshotInput } from '../../schemas/snapshot.js';
import { windowId } from '../dedupe-window.js';
import { ValidationError } from '../errors.js';
import { extend } from '../extend.js';
import { contentHash, deriveKey, fingerprintOf } from '../key.js';
import { redactedChange, type Outcome } from '../outcome.js';
import { parseAction } from './parse-action.js';
import type { EngineContext, Planned } from './types.js';

export type Prepared =
  | { ok: true; action: Action; key: string; fingerprint: string; normalized?: Normalized[] }
  | { ok: false; key: string; error: ValidationError };

/** A key and an event time kept from an earlier attempt (`retryStored`). */
export interface StoredKey {
  key: string;
  at?: number;
}

const CLOCK_KEY_REASON =
  'no eventId and no occurredAt: its key would come from the clock, so a re-run after the window writes it again (set requireOccurredAt: false to accept clock buckets)';

const sha = (value: unknown) => digest('sha256', JSON.stringify(value), 'base64url').slice(0, 32);


/** Links as they are written: duplicates merged, a create's link to its target dropped, none left -> no `links` at all. */
function withDistinctLinks(action: Action): Action {
  if (action.links === undefined) return action;
  const { links: _given, ...rest } = action;
  const links = distinctLinks(action);
  return links ? { ...rest, links } : rest;
}

export function prepareAction(ctx: EngineContext, input: unknown, storedKey?: string): Prepared {
  // Read once into plain data: what is validated is what is written; an unreadable input is rejected alone.
  const snapshot = snapshotInput(input);
  if (!snapshot.ok) return { ok: false, key: storedKey ?? '', error: new ValidationError(snapshot.issues) };
  const parsed = parseAction(snapshot.value);
  if (!parsed.success) return { ok: false, key: storedKey ?? '', error: new ValidationError(formatZodIssues(parsed.error)) };
  const action = withDistinctLinks(parsed.data);
  if (storedKey === undefined && ctx.requireOccurredAt && action.eventId === undefined && action.occurredAt === undefined) {
    return { ok: false, key: '', error: new ValidationError([{ path: 'occurredAt', message: CLOCK_KEY_REASON }]) };
  }
  const key = storedKey ?? deriveKey(action, { bucketMs: ctx.bucketMs, now: ctx.now });
  const issues = checkAgainstObjects(parsed.data, ctx.adapter.objects, { maxFieldLength: ctx.maxFieldLength, maxLinks: ctx.maxLinks });
  if (issues.length > 0) return { ok: false, key, error: new ValidationError(issues) };
  // With field definitions, values are checked and normalized here, before the key is claimed:
  // the ledger, the unchanged mark and the dedupe window see what is written.
  const definitions = ctx.adapter.objects[action.object]!.definitions;
  if (!definitions) return { ok: true, action, key, fingerprint: fingerprintOf(action) };
  const values = checkValues(action.fields, definitions, ctx.normalize);
  if (values.issues.length > 0) return { ok: false, key, error: new ValidationError(values.issues) };
  // Written as checked, reported or not: "12000" goes out as the number 12000, whose text it is.
  const written = { ...action, fields: values.fields };
  return { ok: true, action: written, key, fingerprint: fingerprintOf(written), ...(values.normalized.length > 0 ? { normalized: values.normalized } : {}) };
}

function plan(ctx: EngineContext, index: number, p: Extract<Prepared, { ok: true }>, storedAt?: number): Planned {
  const { action, key, fingerprint } = p;
  const normalized = p.normalized ? { normalized: p.normalized } : {};
  const keyless = action.eventId === undefined;
  const at = action.occurredAt !== undefined ? Date.parse(action.occurredAt) : storedAt ?? ctx.clock.peek();
  // A keyless upsert is not windowed: its external id is its key.
  return { index, action, key, fingerprint, keyless, at, op: action.op, object: action.object, ...(action.op === 'upsert' ? { coalesceId: action.externalId } : {}), ...normalized };
}

/** The id of a record's "last written" mark: what this ledger last wrote to it and its CRM id. */
const markIdOf = (ctx: EngineContext, object: string, externalId: string | undefined) => `m1:${sha([ctx.adapter.name, object, externalId])}`;

/**
 * What only a key that goes on to claim needs, hashed then and not for a replay: an upsert's
 * "last written" mark id and the hash of its fields; a create's parent mark id (the claim reads
 * the parent's CRM id from it) and, keyless, its dedupe-window slot.
 */
export function forClaim(ctx: EngineContext, item: Planned): Planned {
  const { action } = item;
  if (action.op === 'upsert') return extend(item, { markId: markIdOf(ctx, action.object, action.externalId), fieldHash: contentHash(action.fields, action.links) });
  const parent = action.target ? { parentMarkId: markIdOf(ctx, action.target.object, action.target.externalId) } : {};
  return extend(item, item.keyless && ctx.windowMs > 0 ? { ...parent, windowId: windowId(ctx.adapter.name, action) } : parent);
}

/** The outcome of `item` as the caller gets it: with what normalization changed in its input. */
export const reported = (item: Planned, outcome: Outcome): Outcome =>
  item.normalized ? { ...outcome, normalized: item.normalized.map((n) => redactedChange(n)) } : outcome;

export function prepareAll(ctx: EngineContext, inputs: readonly unknown[], stored?: readonly (StoredKey | undefined)[]): { planned: Planned[]; rejected: Outcome[] } {
  const planned: Planned[] = [];
  const rejected: Outcome[] = [];
  inputs.forEach((input, index) => {
    const pinned = stored?.[index];
    const p = prepareAction(ctx, input, pinned?.key);
    if (p.ok) planned.push(plan(ctx, index, p, pinned?.at));
    else rejected[index] = { key: p.key, status: 'rejected', error: p.error.toJSON(), attempts: 0 };
  });
  return { planned, rejected };
}
