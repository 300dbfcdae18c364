/**
 * Idempotency keys. A key comes from the triggering event, never from run time, randomness or
 * model output, and never from `fields` (keyless upserts aside): a replay that carries different AI
 * text gets the same key.
 *
 *   v1:e:<hash>   the source's event id (+ op, object, record, intent: one event's fan-out differs)
 *   v1:f:<hash>   a create with no event id: source + object + record + op + intent + period bucket of occurredAt
 *   v1:u:<hash>   an upsert with no event id: its identity, its exact event time and the hash of its
 *                 fields and links. The external id is the record's natural key; what a keyless key stops is
 *                 the same values at the same time delivered again, never a later or corrected value.
 *   <parent>/<name-hash>   childKey: a step (model call, notification) under a parent key
 *
 * Printable ASCII, at most 100 characters; the `v1:` prefix lets the format evolve. `intent` is
 * what tells two different actions of one event on one record apart: in one call, actions under
 * one key whose fields or links differ are all rejected (engine/repeats.ts).
 */
import { hash as digest } from 'node:crypto';
import type { Action } from '../schemas/action.js';

export const KEY_VERSION = 'v1';
export const MAX_KEY_LENGTH = 100;

export interface KeyOptions {
  /** Period bucket for keyless actions, in ms. Default 10 minutes (the default dedupe window). */
  bucketMs?: number;
  /** Clock used only when a keyless action has no `occurredAt` at all. Default Date.now. */
  now?: () => number;
}

export type KeyedAction = Pick<Action, 'source' | 'eventId' | 'occurredAt' | 'op' | 'object' | 'externalId' | 'target' | 'intent'> & {
  /** Part of a keyless upsert's key only (absent: no fields). */
  fields?: Action['fields'];
  /** Part of a keyless upsert's key only, like its fields. */
  links?: Action['links'];
};

export const DEFAULT_BUCKET_MS = 10 * 60_000;

// One-shot digest: the same bytes as createHash().update().digest(), without a Hash object per key.
function hash(parts: readonly unknown[]): string {
  return digest('sha256', JSON.stringify(parts), 'base64url').slice(0, 40);
}

/**
 * Hash of fields as the CRM will store them (key order does not matter): a record's "last written"
 * mark holds it, and a keyless upsert's key includes it.
 */
export function fieldsHash(fields: Readonly<Record<string, unknown>>): string {
  return digest('sha256', JSON.stringify(Object.keys(fields).sort().map((k) => [k, fields[k]])), 'base64url').slice(0, 32);
}

/**
 * Hash of what a write puts on its record: its fields and, when it has any, its links (as a set:
 * their order does not matter). Without links it is `fieldsHash(fields)`, so marks written
 * before links existed still match.
 */
export function contentHash(fields: Readonly<Record<string, unknown>>, links?: readonly { object: string; externalId: string }[]): string {
  const base = fieldsHash(fields);
  if (!links || links.length === 0) return base;
  const refs = [...new Set(links.map((l) => JSON.stringify([l.object, l.externalId])))].sort();
  return digest('sha256', JSON.stringify([base, refs]), 'base64url').slice(0, 32);
}

/** The event time of a keyless action, epoch ms: its `occurredAt`, else the clock. */
const eventTime = (action: KeyedAction, options: KeyOptions) => (action.occurredAt !== undefined ? Date.parse(action.occurredAt) : (options.now ?? Date.now)());

/** What makes two actions "the same action": never the model-generated fields. */
export function identityOf(action: KeyedAction): string[] {
  return [
    action.source,
    action.op,
    action.object,
    action.externalId ?? '',
    action.target ? `${action.target.object}:${action.target.externalId}` : '',
    action.intent ?? '',
  ];
}

/** Hash of the identity, stored with each ledger entry to detect a key reused for another action. */
export function fingerprintOf(action: KeyedAction): string {
  return hash(['fp', ...identityOf(action)]);
}

/** The period bucket (epoch ms, floored) a keyless create falls into. */
export function periodBucket(action: KeyedAction, options: KeyOptions = {}): number {
  const bucketMs = options.bucketMs ?? DEFAULT_BUCKET_MS;
  return Math.floor(eventTime(action, options) / bucketMs) * bucketMs;
}

export function deriveKey(action: KeyedAction, options: KeyOptions = {}): string {
  if (action.eventId !== undefined) return `${KEY_VERSION}:e:${hash([action.eventId, ...identityOf(action)])}`;
  if (action.op === 'upsert') return `${KEY_VERSION}:u:${hash([eventTime(action, options), contentHash(action.fields ?? {}, action.links), ...identityOf(action)])}`;
  return `${KEY_VERSION}:f:${hash([periodBucket(action, options), ...identityOf(action)])}`;
}

/** The key of the event itself (for `handle`): source + event id only. */
export function eventKey(event: { source: string; eventId: string }): string {
  return `${KEY_VERSION}:h:${hash([event.source, event.eventId])}`;
}

/** A step under a parent key (`ctx.once('summarize', ...)`). Stable for the same parent and name. */
export function childKey(parent: string, name: string): string {
  const child = `${parent}/${hash([name]).slice(0, 16)}`;
  return child.length <= MAX_KEY_LENGTH ? child : `${KEY_VERSION}:c:${hash([parent, name])}`;
}
