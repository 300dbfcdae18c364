/**
 * The bodies of Pipedrive's writes, built in one place: the adapter sends them and
 * `sync --dry-run` prints them, so the preview cannot drift from the request.
 *
 * Notes and activities have no custom fields, so an activity's idempotency key travels in its
 * text as a plain-text marker, `[crm-upsert key: v1:e:…]`, in a paragraph of its own: Pipedrive
 * sanitizes note HTML, but keeps text (the marker holds no markup, and its characters are escaped).
 */
import type { FieldDefinition } from '../../schemas/field-definitions.js';
import type { Fields } from '../../src/adapter.js';
import type { PipedriveActivityConfig, PipedriveRecordConfig, RecordEntity } from './pipedrive-config.js';
import { wireValue, type WireField } from './pipedrive-fields.js';

/** The v2 collection path of a record entity. */
export const RECORD_PATH: Record<RecordEntity, string> = { person: '/api/v2/persons', organization: '/api/v2/organizations', deal: '/api/v2/deals' };

export const createRequestLine = (spec: PipedriveRecordConfig) => `POST ${RECORD_PATH[spec.entity]}`;
export const updateRequestLine = (spec: PipedriveRecordConfig) => `PATCH ${RECORD_PATH[spec.entity]}/{id}`;
export const activityRequestLine = (spec: PipedriveActivityConfig) => (spec.entity === 'note' ? 'POST /api/v1/notes' : 'POST /api/v2/activities');

/** A record's v2 body: standard fields at the root, custom ones under `custom_fields`, relations as numbers. */
export function recordBody(
  fields: Fields,
  wire: (name: string) => WireField,
  definitions: Readonly<Record<string, FieldDefinition>> = {},
  relations: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    const w = wire(name);
    const v = wireValue(value, definitions[name]);
    if ('custom' in w) custom[w.custom] = v;
    // v2 persons hold addresses and numbers in arrays; the configured `email` / `phone` is the primary one.
    else if (w.standard === 'email') body.emails = v === null || v === '' ? [] : [{ value: v, primary: true, label: 'work' }];
    else if (w.standard === 'phone') body.phones = v === null || v === '' ? [] : [{ value: v, primary: true, label: 'work' }];
    else body[w.standard] = v;
  }
  for (const [field, id] of Object.entries(relations)) body[field] = idNumber(id);
  if (Object.keys(custom).length > 0) body.custom_fields = custom;
  return body;
}

/** The create body: the update body with the external id set in the id field. */
export function createBody(update: Record<string, unknown>, idFieldKey: string, externalId: string): Record<string, unknown> {
  return { ...update, custom_fields: { ...((update.custom_fields as Record<string, unknown> | undefined) ?? {}), [idFieldKey]: externalId } };
}

/** Pipedrive ids are integers on the wire. */
export const idNumber = (id: string): number | string => (/^\d+$/.test(id) ? Number(id) : id);

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unescapeHtml = (s: string) => s.replace(/&#(\d+);/g, (_m, n: string) => String.fromCodePoint(Number(n))).replace(/&#x([0-9a-f]+);/gi, (_m, n: string) => String.fromCodePoint(parseInt(n, 16))).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&');

/** The marker carrying an action's key in a note's content or an activity's note. */
export const keyMarker = (key: string): string => `<p>[crm-upsert key: ${escapeHtml(key)}]</p>`;

/** The key a note's content or an activity's note carries, read from its text (tags dropped, entities decoded). */
export function markedKey(html: unknown): string | undefined {
  if (typeof html !== 'string') return undefined;
  const text = unescapeHtml(html.replace(/<[^>]*>/g, ' '));
  const m = /\[crm-upsert key: ([^\]\s]+)\]/.exec(text);
  return m?.[1];
}

/** The text with the key marker after it (a paragraph of its own). */
const withMarker = (text: unknown, key: string) => `${typeof text === 'string' ? text : ''}${keyMarker(key)}`;

/**
 * A note (v1 `POST /notes`) or activity (v2 `POST /activities`) create: the action's fields, its
 * key marker in `content` / `note`, its target's and links' relation fields, and for an activity
 * with a person, that person as its primary participant.
 */
export function activityBody(spec: PipedriveActivityConfig, write: { key: string; fields: Fields }, relations: Readonly<Record<string, string>>, definitions: Readonly<Record<string, FieldDefinition>> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(write.fields)) body[name] = wireValue(value, definitions[name]);
  for (const [field, id] of Object.entries(relations)) body[field] = idNumber(id);
  if (spec.entity === 'note') {
    body.content = withMarker(body.content, write.key);
    return body;
  }
  body.type = spec.activityType ?? 'task';
  body.note = withMarker(body.note, write.key);
  if (relations.person_id !== undefined) body.participants = [{ person_id: idNumber(relations.person_id), primary: true }];
  return body;
}
