/**
 * The action parse of the prepare stage: a direct check of the common shape first, zod for
 * everything else. The direct check only ever accepts: it answers an action exactly when zod
 * would accept it and produce the same value (the same keys in the same order), and hands every
 * input it is not sure of (any undefined, a missing or extra key, any rule broken) to zod, which
 * then accepts or rejects it with its issues as before. Replays pay for validation on every
 * action, and zod's generic walk is most of that cost.
 */
import { z } from 'zod';
import { actionSchema, MAX_LINKS_PARSED, type Action, type Link } from '../../schemas/action.js';
import { isWellFormed } from '../../schemas/unicode.js';

const KEYS = new Set(['source', 'eventId', 'occurredAt', 'op', 'object', 'externalId', 'target', 'intent', 'fields', 'links']);
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
// The same check as the schema's `occurredAt`.
const occurredAtSchema = z.iso.datetime({ offset: true });

/** No C0 control character and no DEL (a surrogate is never one, so code units suffice). */
function printable(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

const isIdentifier = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= max && printable(v) && isWellFormed(v);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function isFieldValue(v: unknown): boolean {
  if (typeof v === 'string') return isWellFormed(v);
  if (typeof v === 'number') return Number.isFinite(v);
  return v === null || typeof v === 'boolean';
}

function fieldsOk(fields: unknown): fields is Record<string, unknown> {
  if (!isRecord(fields)) return false;
  for (const name of Object.keys(fields)) {
    if (name === '' || FORBIDDEN.has(name) || !isWellFormed(name) || !isFieldValue(fields[name])) return false;
  }
  return true;
}

/** A record reference (`target`, a link) exactly as the schema's strict object takes it. */
function refOf(v: unknown): Link | undefined {
  if (!isRecord(v) || Object.keys(v).length !== 2) return undefined;
  return isIdentifier(v.object, 100) && isIdentifier(v.externalId, 255) ? { object: v.object, externalId: v.externalId } : undefined;
}

/** The links as zod would output them; undefined when any is not sure. */
function linksOf(v: unknown): Link[] | undefined {
  if (!Array.isArray(v) || v.length > MAX_LINKS_PARSED) return undefined;
  const out: Link[] = [];
  for (const item of v) {
    const ref = refOf(item);
    if (!ref) return undefined;
    out.push(ref);
  }
  return out;
}

/** The action when the direct check is sure zod would answer it; undefined hands it to zod. */
export function parseDirect(v: unknown): Action | undefined {
  if (!isRecord(v)) return undefined;
  for (const k of Object.keys(v)) if (!KEYS.has(k) || v[k] === undefined) return undefined;
  const { source, eventId, occurredAt, op, object, externalId, target, intent, fields } = v;
  const links = v.links === undefined ? undefined : linksOf(v.links);
  if (v.links !== undefined && links === undefined) return undefined;
  if (!isIdentifier(source, 200) || !isIdentifier(object, 100) || !fieldsOk(fields)) return undefined;
  if (eventId !== undefined && !isIdentifier(eventId, 500)) return undefined;
  if (intent !== undefined && !isIdentifier(intent, 100)) return undefined;
  if (occurredAt !== undefined && !occurredAtSchema.safeParse(occurredAt).success) return undefined;
  let aim: { object: string; externalId: string } | undefined;
  if (op === 'upsert') {
    if (!isIdentifier(externalId, 255) || target !== undefined) return undefined;
  } else if (op === 'create') {
    if (externalId !== undefined) return undefined;
    aim = refOf(target);
    if (!aim) return undefined;
  } else {
    return undefined;
  }
  // zod's output order: the schema's keys, present ones only.
  return {
    source,
    ...(eventId !== undefined ? { eventId } : {}),
    ...(occurredAt !== undefined ? { occurredAt: occurredAt as string } : {}),
    op,
    object,
    ...(externalId !== undefined ? { externalId } : {}),
    ...(aim ? { target: aim } : {}),
    ...(intent !== undefined ? { intent } : {}),
    fields: { ...fields },
    ...(links !== undefined ? { links } : {}),
  } as Action;
}

export type ParsedAction = { success: true; data: Action } | { success: false; error: z.ZodError };

/** `actionSchema.safeParse`, answered directly for the common valid shape. */
export function parseAction(value: unknown): ParsedAction {
  const action = parseDirect(value);
  if (action) return { success: true, data: action };
  const parsed = actionSchema.safeParse(value);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, error: parsed.error };
}
