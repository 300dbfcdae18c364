/**
 * Field values against their definitions (field-definitions.ts), before anything is claimed.
 * Each value is checked for its type; with `normalize` (the default) a value is first brought to
 * the CRM's form where that cannot change its meaning:
 *
 * - surrounding whitespace trimmed (not from free text: a `string` is sent as given);
 * - an enumeration value matched case-insensitively, or by its label, becomes the CRM's value;
 *   a multi-select given as an array or as `a; b` is joined with `;`;
 * - a numeric string with nothing else ("12000", "-3.5") becomes a number; anything with a
 *   currency sign, a unit or a thousands separator is refused, never guessed;
 * - "true" / "false" become booleans;
 * - an ISO 8601 date stays `YYYY-MM-DD`, a date-time at midnight UTC (or epoch ms at midnight
 *   UTC) becomes that date; an ISO 8601 date-time with an offset (or epoch ms) becomes ISO UTC,
 *   a date alone its midnight UTC. Any other date text ("next Friday", "28/11/2026") is refused.
 *
 * A pipeline stage (a definition with `pipelineField`) is resolved within the action's pipeline:
 * see pipeline-stages.ts.
 *
 * Without `normalize` a value must already be in the CRM's form. A null is sent as it is (it
 * clears the field). What cannot be made valid is an issue naming the field, the reason and, for
 * an enumeration, the allowed values (the first 20, and how many more).
 */
import { optionValues, type FieldDefinition } from './field-definitions.js';
import type { ValidationIssue } from './issues.js';
import { checkStage } from './pipeline-stages.js';

type Value = string | number | boolean | null;

/** One value the normalization changed: the field, what the model sent and what is written. */
export interface Normalized {
  field: string;
  from: unknown;
  to: Value;
}

export interface ValueCheck {
  /** The fields as they will be written (normalized), when there is no issue. */
  fields: Record<string, Value>;
  normalized: Normalized[];
  issues: ValidationIssue[];
}

const SHOWN_OPTIONS = 20;

/** The allowed values, as a message shows them: the first 20 and how many more. */
export function allowedList(values: readonly string[]): string {
  const shown = values.slice(0, SHOWN_OPTIONS).map((v) => JSON.stringify(v)).join(', ');
  return values.length > SHOWN_OPTIONS ? `${shown} (and ${values.length - SHOWN_OPTIONS} more)` : shown;
}

type Result = { ok: true; value: Value } | { ok: false; reason: string };
const ok = (value: Value): Result => ({ ok: true, value });
const no = (reason: string): Result => ({ ok: false, reason });
const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'string' ? 'text' : `a ${typeof v}`);

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// An ISO 8601 date-time with seconds optional, fractions optional, and an offset (Z or ±hh:mm).
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const NUMERIC = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;
const DAY_MS = 86_400_000;

function calendarDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

const DATE_HELP = 'an ISO 8601 date, YYYY-MM-DD';
const DATETIME_HELP = 'an ISO 8601 date-time with its offset, e.g. 2026-11-28T10:00:00Z';

function asDate(v: unknown, normalize: boolean): Result {
  if (typeof v === 'number') {
    if (!normalize) return no(`must be ${DATE_HELP} (got a number)`);
    return Number.isInteger(v) && v % DAY_MS === 0 ? ok(new Date(v).toISOString().slice(0, 10)) : no(`must be ${DATE_HELP}; ${v} is not a date (as epoch milliseconds it is not midnight UTC)`);
  }
  if (typeof v !== 'string') return no(`must be ${DATE_HELP} (got ${kind(v)})`);
  const text = normalize ? v.trim() : v;
  if (calendarDate(text)) return ok(text);
  if (normalize && ISO_DATETIME.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms) && ms % DAY_MS === 0) return ok(new Date(ms).toISOString().slice(0, 10));
    return no(`must be ${DATE_HELP}; ${JSON.stringify(v)} is a date-time that is not midnight UTC (which day it means depends on a time zone)`);
  }
  return no(`must be ${DATE_HELP}; ${JSON.stringify(v)} is not one`);
}

function asDateTime(v: unknown, normalize: boolean): Result {
  if (typeof v === 'number') {
    if (!normalize) return no(`must be ${DATETIME_HELP} (got a number)`);
    return Number.isInteger(v) && Math.abs(v) < 8.64e15 ? ok(new Date(v).toISOString()) : no(`must be ${DATETIME_HELP}; ${v} is not epoch milliseconds`);
  }
  if (typeof v !== 'string') return no(`must be ${DATETIME_HELP} (got ${kind(v)})`);
  const text = normalize ? v.trim() : v;
  if (ISO_DATETIME.test(text) && !Number.isNaN(Date.parse(text))) return ok(normalize ? new Date(Date.parse(text)).toISOString() : text);
  if (normalize && calendarDate(text)) return ok(`${text}T00:00:00.000Z`);
  return no(`must be ${DATETIME_HELP}; ${JSON.stringify(v)} is not one${/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(text) ? ' (it has no offset: which moment it means depends on a time zone)' : ''}`);
}

function asNumber(v: unknown, normalize: boolean, integer: boolean): Result {
  let n: number | undefined;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && normalize && NUMERIC.test(v.trim())) n = Number(v.trim());
  const what = integer ? 'a whole number' : 'a number';
  if (n === undefined || !Number.isFinite(n)) {
    return no(typeof v === 'string' ? `must be ${what} with no currency sign, unit or thousands separator (got ${JSON.stringify(v)})` : `must be ${what} (got ${kind(v)})`);
  }
  if (integer && !Number.isInteger(n)) return no(`must be a whole number (got ${n})`);
  return ok(n);
}

function asBoolean(v: unknown, normalize: boolean): Result {
  if (typeof v === 'boolean') return ok(v);
  if (normalize && typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return ok(v.trim().toLowerCase() === 'true');
  return no(`must be true or false (got ${typeof v === 'string' ? JSON.stringify(v) : kind(v)})`);
}

/** The option `text` names: its value, else (normalizing) its value or label case-insensitively. */
function matchOption(d: FieldDefinition, text: string, normalize: boolean): string | undefined {
  const options = (d.options ?? []).map((o) => (typeof o === 'string' ? { value: o, label: undefined } : o));
  if (options.some((o) => o.value === text)) return text;
  if (!normalize) return undefined;
  const t = text.trim().toLowerCase();
  return options.find((o) => o.value.toLowerCase() === t)?.value ?? options.find((o) => o.label?.trim().toLowerCase() === t)?.value;
}

function asEnumeration(d: FieldDefinition, v: unknown, normalize: boolean): Result {
  const restricted = d.restricted !== false;
  const allowed = () => `; allowed: ${allowedList(optionValues(d))}`;
  const one = (item: unknown): Result => {
    const text = normalize ? (typeof item === 'number' ? String(item) : typeof item === 'string' ? item.trim() : item) : item;
    if (typeof text !== 'string') return no(`must be one of the allowed values (got ${kind(item)})${allowed()}`);
    const found = matchOption(d, text, normalize);
    if (found !== undefined) return ok(found);
    if (!restricted) return ok(text);
    return no(`${JSON.stringify(text)} is not an allowed value${allowed()}`);
  };
  if (!d.multiple) return one(v);
  const items = Array.isArray(v) && normalize ? v : typeof v === 'string' ? (normalize ? v.split(';') : [v]) : undefined;
  if (!items) return no(`must be allowed values joined with ";" (got ${kind(v)})${allowed()}`);
  const values: string[] = [];
  for (const item of items) {
    if (normalize && typeof item === 'string' && item.trim() === '') continue;
    const r = one(item);
    if (!r.ok) return r;
    if (!values.includes(r.value as string)) values.push(r.value as string);
  }
  return ok(values.join(';'));
}

function asText(d: FieldDefinition, v: unknown, normalize: boolean): Result {
  if (typeof v !== 'string') return no(`must be text (got ${kind(v)})`);
  // Free text is sent as written; typed text (an email, a phone number, a URL) is trimmed.
  const text = normalize && d.type !== 'string' ? v.trim() : v;
  if (d.maxLength !== undefined && text.length > d.maxLength) return no(`is ${text.length} characters; the CRM stores at most ${d.maxLength}`);
  if (d.type === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text)) return no(`must be an email address (got ${JSON.stringify(v)})`);
  if (d.type === 'phone' && (!/^[+()\-.\s\d]+(?:\s*(?:x|ext\.?)\s*\d+)?$/i.test(text) || (text.match(/\d/g)?.length ?? 0) < 5)) return no(`must be a phone number (got ${JSON.stringify(v)})`);
  if (d.type === 'url' && (/\s/.test(text) || !/^(https?:\/\/)?[^\s/]+\.[^\s]+$/i.test(text))) return no(`must be a URL (got ${JSON.stringify(v)})`);
  return ok(text);
}

/** One value against its definition. */
export function checkValue(d: FieldDefinition, v: unknown, normalize: boolean): Result {
  if (d.readOnly) return no('is read-only in the CRM: it cannot be written');
  if (v === null) return ok(null);
  switch (d.type) {
    case 'number':
      return asNumber(v, normalize, false);
    case 'integer':
      return asNumber(v, normalize, true);
    case 'boolean':
      return asBoolean(v, normalize);
    case 'enumeration':
      return asEnumeration(d, v, normalize);
    case 'date':
      return asDate(v, normalize);
    case 'datetime':
      return asDateTime(v, normalize);
    default:
      return asText(d, v, normalize);
  }
}

/** The fields of one action against the definitions of its object (fields without one pass as they are). */
export function checkValues(fields: Readonly<Record<string, unknown>>, definitions: Readonly<Record<string, FieldDefinition>> | undefined, normalize = true): ValueCheck {
  const out: Record<string, Value> = {};
  const normalized: Normalized[] = [];
  const issues: ValidationIssue[] = [];
  for (const [field, value] of Object.entries(fields)) {
    const d = definitions && Object.hasOwn(definitions, field) ? definitions[field] : undefined;
    if (!d) {
      out[field] = value as Value;
      continue;
    }
    // A pipeline stage is resolved within the pipeline the same action gives (pipeline-stages.ts).
    const r = checkStage(d, value, fields, definitions!, normalize) ?? checkValue(d, value, normalize);
    if (!r.ok) {
      issues.push({ path: `fields.${field}`, message: r.reason });
      continue;
    }
    out[field] = r.value;
    if (!Object.is(r.value, value)) normalized.push({ field, from: value, to: r.value });
  }
  return { fields: out, normalized, issues };
}
