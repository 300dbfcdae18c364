/**
 * The action: one AI-generated CRM write. `crm-upsert schema` prints it as JSON Schema, so a
 * model can produce it through a tool call.
 */
import { z } from 'zod';
import { withNeeds, type FieldNeeds } from './parse.js';
import { isWellFormed } from './unicode.js';

export const LONE_SURROGATE_MESSAGE = 'contains a lone UTF-16 surrogate';

/**
 * Well-formed UTF-16 (every surrogate paired) as a JSON Schema pattern, for tool-call consumers.
 * It means the same with or without the regex `u` flag. Parsing uses `isWellFormed()` instead.
 */
const WELL_FORMED = '^(?:[^\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';
const PRINTABLE_WELL_FORMED = '^(?:[^\\u0000-\\u001F\\u007F\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';

/**
 * A string with a lone surrogate has no UTF-8 form: a request body would carry U+FFFD (another
 * record's id) and `encodeURIComponent` throws, failing every action batched with it.
 */
const wellFormed = <S extends z.ZodString>(schema: S) => schema.refine(isWellFormed, LONE_SURROGATE_MESSAGE);

/** Printable, non-empty, bounded identifiers (external ids may hold any Unicode but no control characters). */
const identifier = (max: number) =>
  wellFormed(
    z
      .string()
      .min(1, 'must not be empty')
      .max(max, `must be at most ${max} characters`)
      .refine((s) => ![...s].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f), 'must not contain control characters'),
  ).meta({ pattern: PRINTABLE_WELL_FORMED });

export const FIELD_VALUE_MESSAGE = 'must be a string, number, boolean, null or (for a multi-select field) a list of strings';

/** Most values in one multi-select list. */
export const MAX_LIST_VALUES = 500;

/**
 * A field value. A list of strings is for a multi-select field with a field definition: joined the
 * CRM's way (`a;b`) before it is written, refused anywhere else. One message for a value that is
 * none of them (an object, a list of numbers): zod's own would say only "Invalid input".
 */
export const fieldValueSchema = z.union(
  [
    wellFormed(z.string()).meta({ pattern: WELL_FORMED }),
    z.number().finite(),
    z.boolean(),
    z.null(),
    z.array(wellFormed(z.string()).meta({ pattern: WELL_FORMED })).max(MAX_LIST_VALUES, `must hold at most ${MAX_LIST_VALUES} values`),
  ],
  { error: (issue) => (issue.code !== 'invalid_union' ? undefined : typeof issue.input === 'number' ? 'must be a finite number' : FIELD_VALUE_MESSAGE) },
);

/** Names that would reach an object's prototype; zod's record drops `__proto__` silently, so look at the raw keys. */
const FORBIDDEN_FIELD_NAMES = ['__proto__', 'constructor', 'prototype'];

const fieldsSchema = z.preprocess((value, ctx) => {
  if (value !== null && typeof value === 'object') {
    for (const name of FORBIDDEN_FIELD_NAMES) {
      if (Object.hasOwn(value, name)) ctx.addIssue({ code: 'custom', path: [name], message: 'is not an allowed field name', input: value });
    }
  }
  return value;
}, z.record(wellFormed(z.string().min(1, 'field name must not be empty')).meta({ pattern: WELL_FORMED }), fieldValueSchema));

/** A hard bound on `links` before the configured limit (default 10) is checked against the objects. */
export const MAX_LINKS_PARSED = 100;

/** A record the action's record or activity is associated with: a configured record object and its external id. */
export const linkSchema = z.strictObject({ object: identifier(100), externalId: identifier(255) });
export type Link = z.infer<typeof linkSchema>;

const RECORD_REF = '{ "object": a configured record object, "externalId": its external id }';

/** What each field of an action needs, in words: a rejection says it when the field is missing or of the wrong type. */
export const ACTION_NEEDS: FieldNeeds = {
  '': 'an object: one action, with source, op, object and fields',
  source: 'a string naming the system the event came from, e.g. "zendesk"',
  eventId: 'a string: that system\'s id of the event',
  occurredAt: 'an ISO 8601 date-time string, e.g. 2026-11-29T10:00:00Z',
  op: '"upsert" for a record, "create" for an activity',
  object: 'a string naming a configured object, e.g. "contact"',
  externalId: 'a string: the value of the record\'s external-id field',
  target: `an object naming the record the activity attaches to: ${RECORD_REF}`,
  'target.object': 'a string naming a configured record object, e.g. "contact"',
  'target.externalId': 'a string: that record\'s external id',
  intent: 'a string labelling the action',
  fields: 'an object of CRM field names and their values, e.g. { "email": "ann@acme.io" }',
  links: `a list of the records it is associated with, each ${RECORD_REF}`,
  'links.*': `an object ${RECORD_REF}`,
  'links.*.object': 'a string naming a configured record object, e.g. "company"',
  'links.*.externalId': 'a string: that record\'s external id',
};

export const actionSchema = withNeeds(z
  .strictObject({
    source: identifier(200).describe("System the event came from: 'zendesk', 'gong', 'webhook:stripe'."),
    eventId: identifier(500).optional().describe("That system's event id: the natural idempotency key."),
    occurredAt: z.iso
      .datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-11-29T10:00:00Z' })
      .optional()
      .describe('ISO time of the event; the fallback key period bucket.'),
    op: z.enum(['upsert', 'create']).describe('upsert: a record keyed by externalId; create: an activity on a record.'),
    object: identifier(100).describe("Logical object from the adapter options: 'contact', 'note', 'task'."),
    externalId: identifier(255).optional().describe('upsert: value of the external-id field.'),
    target: z
      .strictObject({ object: identifier(100), externalId: identifier(255) })
      .optional()
      .describe('create: the record the activity attaches to.'),
    intent: identifier(100).optional().describe('Optional label separating two different actions on one record.'),
    fields: fieldsSchema.describe('CRM property names (allowlisted per object) and their values.'),
    links: z
      .array(linkSchema)
      .max(MAX_LINKS_PARSED, `must hold at most ${MAX_LINKS_PARSED} links`)
      .optional()
      .describe('Other records this record or activity is associated with, by their external ids (objects allowed per object in the config).'),
  })
  .superRefine((a, ctx) => {
    if (a.op === 'upsert') {
      if (a.externalId === undefined) ctx.addIssue({ code: 'custom', path: ['externalId'], message: 'is required for op "upsert"' });
      if (a.target !== undefined) ctx.addIssue({ code: 'custom', path: ['target'], message: 'is only for op "create"' });
    } else {
      if (a.target === undefined) ctx.addIssue({ code: 'custom', path: ['target'], message: 'is required for op "create"' });
      if (a.externalId !== undefined) ctx.addIssue({ code: 'custom', path: ['externalId'], message: 'is only for op "upsert"' });
    }
  }), ACTION_NEEDS);

export type Action = z.infer<typeof actionSchema>;

/** The action as JSON Schema (draft 2020-12), for LLM tool definitions. */
export function actionJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(actionSchema, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
}
