/**
 * Field values against their definitions (field-definitions.ts), before anything is claimed.
 * Each value is checked for its type; with `normalize` (the default) a value is first brought to
 * the CRM's form where that cannot change its meaning:
 *
 * - surrounding whitespace trimmed (not from free text: a `string` is sent as given);
 * - an enumeration text matched to one option by `matchOption`: exact value, then exact label,
 *   then value ignoring case, then label ignoring case; several options at the first level that
 *   matches is refused, naming them. A multi-select given as an array or as `a; b` is joined with `;`;
 * - a number keeps every digit: numeric text with nothing else ("12000", "-3.50") is written as
 *   its decimal text (no `+`, no leading zeros, `0.5` for `.5`), a number when a double prints it
 *   back exactly and the text otherwise, never a rounded double; past a definition's `precision`
 *   or `scale` it is refused. A JS number past 2^53 is refused (its digits may already be
 *   rounded). Anything with a currency sign, a unit or a thousands separator is refused, never guessed;
 * - "true" / "false" become booleans;
 * - dates and date-times are read part by part and never rolled over (Feb 30, Feb 29 of a common
 *   year, hour 24, minute 60, second 60 are refused with the reason). A date is `YYYY-MM-DD`; a
 *   date-time at midnight in its own offset (or epoch ms at midnight UTC) becomes the date it
 *   names there; any other time of day on a date is refused. A date-time in UTC with `Z` and
 *   seconds is sent as given; one with another offset becomes the same moment in UTC, a date
 *   alone its midnight UTC, epoch ms its ISO form. Digits finer than a millisecond are refused
 *   unless zeros. Any other date text ("next Friday", "28/11/2026") is refused.
 *
 * A pipeline stage (a definition with `pipelineField`) is resolved within the action's pipeline:
 * see pipeline-stages.ts.
 *
 * `normalized` lists a value only when its text changed: "12000" sent as the number 12000, or a
 * value already in the CRM's form, is not listed. Without `normalize` a value must already be in
 * the CRM's form (a date-time with any offset is). A null is sent as it is (it clears the field).
 * What cannot be made valid is an issue naming the field, the reason and, for an enumeration, the
 * allowed values (the first 20, and how many more).
 */
import { matchingOptions, visibleOptionValues, type FieldDefinition, type FieldOption } from './field-definitions.js';
import type { ValidationIssue } from './issues.js';
import { checkStage } from './pipeline-stages.js';

type Value = string | number | boolean | null;

/** One value whose text the normalization changed: the field, what the model sent and what is written. */
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
// An ISO 8601 date-time with seconds optional, a fraction optional, and an offset (Z or ±hh:mm).
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))$/i;
// The CRMs' own form of a date-time: UTC, with seconds, at most milliseconds.
const CRM_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;
const NUMERIC = /^([+-]?)(\d*)(?:\.(\d+))?$/;
const DAY_MS = 86_400_000;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const DATE_HELP = 'an ISO 8601 date, YYYY-MM-DD';
const DATETIME_HELP = 'an ISO 8601 date-time with its offset, e.g. 2026-11-28T10:00:00Z';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysIn = (y: number, m: number) => (m === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : DAYS[m - 1]!);

/** Why year-month-day names no day of the calendar, or undefined when it names one. Never rolled over. */
function notADay(y: number, m: number, d: number): string | undefined {
  if (m < 1 || m > 12) return `there is no month ${pad(m)}`;
  const days = daysIn(y, m);
  return d < 1 || d > days ? `${MONTHS[m - 1]} ${y} has ${days} days` : undefined;
}

interface DateTime {
  y: number;
  m: number;
  d: number;
  h: number;
  min: number;
  s: number;
  /** The fraction of a second as written, without its point ('' when none). */
  fraction: string;
  /** Minutes east of UTC. */
  offset: number;
  /** The offset as written: `Z`, `-05:00`. */
  zone: string;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; why: string } | undefined;

/**
 * An ISO 8601 date-time read field by field, with each part in its range: Feb 30, hour 24,
 * minute 60 or second 60 is refused with its reason, never rolled over into the next day, hour or
 * minute as `Date` does. Undefined when the text is not shaped like a date-time with an offset.
 */
function parseDateTime(text: string): Parsed<DateTime> {
  const x = ISO_DATETIME.exec(text);
  if (!x) return undefined;
  const [y, m, d, h, min] = [x[1], x[2], x[3], x[4], x[5]].map(Number) as [number, number, number, number, number];
  const s = x[6] === undefined ? 0 : Number(x[6]);
  const day = notADay(y, m, d);
  if (day) return { ok: false, why: `is not a day of the calendar (${day})` };
  if (h > 23) return { ok: false, why: `is not a time of day (hour ${h}: hours run 00 to 23)` };
  if (min > 59) return { ok: false, why: `is not a time of day (minute ${min}: minutes run 00 to 59)` };
  if (s > 59) return { ok: false, why: `is not a time of day (second ${s}: seconds run 00 to 59; the CRM stores no leap second)` };
  const [oh, om] = [Number(x[10] ?? 0), Number(x[11] ?? 0)];
  if (oh > 23 || om > 59) return { ok: false, why: `has no valid offset (${x[9]}${x[10]}:${x[11]})` };
  const zone = x[8] ? 'Z' : `${x[9]}${x[10]}:${x[11]}`;
  return { ok: true, value: { y, m, d, h, min, s, fraction: x[7] ?? '', offset: (x[9] === '-' ? -1 : 1) * (oh * 60 + om), zone } };
}

/** The same moment in UTC, in the CRMs' form (seconds always, the fraction as written); undefined outside years 0000-9999. */
function utcText(t: DateTime, fraction: string): string | undefined {
  const at = new Date(0);
  at.setUTCFullYear(t.y, t.m - 1, t.d);
  at.setUTCHours(t.h, t.min - t.offset, t.s, 0);
  const y = at.getUTCFullYear();
  if (y < 0 || y > 9999) return undefined;
  return `${pad(y, 4)}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}T${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}${fraction ? `.${fraction}` : ''}Z`;
}

function asDate(v: unknown, normalize: boolean): Result {
  if (typeof v === 'number') {
    if (!normalize) return no(`must be ${DATE_HELP} (got a number)`);
    return Number.isInteger(v) && v % DAY_MS === 0 && Math.abs(v) < 8.64e15 ? ok(new Date(v).toISOString().slice(0, 10)) : no(`must be ${DATE_HELP}; ${v} is not a date (as epoch milliseconds it is not midnight UTC)`);
  }
  if (typeof v !== 'string') return no(`must be ${DATE_HELP} (got ${kind(v)})`);
  const text = normalize ? v.trim() : v;
  const date = ISO_DATE.exec(text);
  if (date) {
    const day = notADay(Number(date[1]), Number(date[2]), Number(date[3]));
    return day ? no(`must be ${DATE_HELP}; ${JSON.stringify(v)} is not a day of the calendar (${day})`) : ok(text);
  }
  const at = normalize ? parseDateTime(text) : undefined;
  if (at && !at.ok) return no(`must be ${DATE_HELP}; ${JSON.stringify(v)} ${at.why}`);
  if (at?.ok) {
    const t = at.value;
    // Midnight where it was written names that day; any other time names a moment, and which
    // day a date field should hold for it depends on whose day is meant.
    if (t.h === 0 && t.min === 0 && t.s === 0 && /^0*$/.test(t.fraction)) return ok(`${pad(t.y, 4)}-${pad(t.m)}-${pad(t.d)}`);
    return no(`must be ${DATE_HELP}; ${JSON.stringify(v)} has a time of day (${pad(t.h)}:${pad(t.min)}${t.s > 0 || t.fraction !== '' ? `:${pad(t.s)}${t.fraction ? `.${t.fraction}` : ''}` : ''} at ${t.zone}), and which day it means depends on a time zone: send the day as YYYY-MM-DD`);
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
  const at = parseDateTime(text);
  if (at && !at.ok) return no(`must be ${DATETIME_HELP}; ${JSON.stringify(v)} ${at.why}`);
  if (at?.ok) {
    const t = at.value;
    // The CRMs keep milliseconds: finer digits other than zeros would be dropped by the CRM.
    if (/[1-9]/.test(t.fraction.slice(3))) return no(`must be ${DATETIME_HELP}; ${JSON.stringify(v)} is finer than a millisecond, which the CRM does not keep`);
    if (!normalize || CRM_DATETIME.test(text)) return ok(text);
    const utc = utcText(t, t.fraction.slice(0, 3));
    return utc === undefined ? no(`must be ${DATETIME_HELP}; ${JSON.stringify(v)} is outside the years 0000 to 9999 in UTC`) : ok(utc);
  }
  const date = normalize ? ISO_DATE.exec(text) : null;
  if (date) {
    const day = notADay(Number(date[1]), Number(date[2]), Number(date[3]));
    return day ? no(`must be ${DATETIME_HELP}; ${JSON.stringify(v)} is not a day of the calendar (${day})`) : ok(`${text}T00:00:00Z`);
  }
  return no(`must be ${DATETIME_HELP}; ${JSON.stringify(v)} is not one${/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(text) ? ' (it has no offset: which moment it means depends on a time zone)' : ''}`);
}

/**
 * A JS number as the decimal text JSON would print, without an exponent (a number small enough
 * to print as `1e-7` is written out). Only finite numbers under 2^53 reach here.
 */
function numberText(n: number): string {
  const s = String(n);
  const e = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!e) return s;
  const digits = `${e[2]}${e[3] ?? ''}`;
  const point = e[2]!.length + Number(e[4]);
  const body = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : `${digits.slice(0, point).padEnd(point, '0')}${digits.length > point ? `.${digits.slice(point)}` : ''}`;
  return `${e[1]}${body}`;
}

/**
 * Numeric text written the way JSON writes a number: no `+`, no leading zeros, `0.5` for `.5`,
 * no minus on zero. Every digit given is kept, trailing zeros of a fraction too.
 */
function decimalText(text: string): string | undefined {
  const x = NUMERIC.exec(text);
  if (!x || (x[2] === '' && x[3] === undefined)) return undefined;
  const whole = x[2]!.replace(/^0+(?=\d)/, '') || '0';
  const zero = /^0*$/.test(whole) && /^0*$/.test(x[3] ?? '');
  return `${x[1] === '-' && !zero ? '-' : ''}${whole}${x[3] !== undefined ? `.${x[3]}` : ''}`;
}

/** Digits before the point (none for 0.x) and decimal places that are not trailing zeros. */
function digitsOf(text: string): { whole: number; places: number } {
  const [whole, fraction = ''] = text.replace(/^-/, '').split('.') as [string, string?];
  return { whole: whole === '0' ? 0 : whole.length, places: fraction.replace(/0+$/, '').length };
}

function asNumber(d: FieldDefinition, v: unknown, normalize: boolean): Result {
  const integer = d.type === 'integer';
  const what = integer ? 'a whole number' : 'a number';
  let text: string | undefined;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return no(`must be ${what} (got ${v})`);
    // Past 2^53 a double no longer holds every whole number: the digits may be rounded already.
    if (Math.abs(v) > Number.MAX_SAFE_INTEGER) return no(`${v} is a JSON number past 2^53 (9007199254740991), where a double no longer holds every whole number and the digits may already be rounded: send its digits as text to keep every one`);
    text = numberText(v);
  } else if (typeof v === 'string' && normalize) {
    text = decimalText(v.trim());
  }
  if (text === undefined) {
    return no(typeof v === 'string' ? `must be ${what} with no currency sign, unit or thousands separator (got ${JSON.stringify(v)})` : `must be ${what} (got ${kind(v)})`);
  }
  if (integer && text.includes('.')) {
    if (!/\.0+$/.test(text)) return no(`must be a whole number (got ${text})`);
    text = text.replace(/\.0+$/, '');
  }
  const { whole, places } = digitsOf(text);
  const scale = integer ? 0 : d.scale;
  if (scale !== undefined && places > scale) return no(`${text} has ${places} decimal places; the CRM keeps ${scale} and would round it`);
  if (d.precision !== undefined && whole > d.precision - (scale ?? 0)) {
    return no(`${text} has ${whole} digits before the decimal point; the CRM holds ${d.precision - (scale ?? 0)} (precision ${d.precision}, scale ${scale ?? 0})`);
  }
  if (typeof v === 'number' && !normalize) return ok(v);
  // A number whose JSON is exactly this text travels as a number; any other (more digits than
  // a double holds, trailing zeros) as the text itself, which the adapters send digit for digit.
  return ok(String(Number(text)) === text ? Number(text) : text);
}

function asBoolean(v: unknown, normalize: boolean): Result {
  if (typeof v === 'boolean') return ok(v);
  if (normalize && typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return ok(v.trim().toLowerCase() === 'true');
  return no(`must be true or false (got ${typeof v === 'string' ? JSON.stringify(v) : kind(v)})`);
}

/** What `matchOption` found for a text: one option's value, several candidates, or none. */
export type OptionMatch =
  | { kind: 'found'; value: string }
  | { kind: 'ambiguous'; candidates: FieldOption[] }
  | { kind: 'none' };

/**
 * The option `text` names (`matchingOptions`' order: exact value; normalizing, exact label, then
 * value and label ignoring case). Several options at the level that matches (two labels alike,
 * values differing only in case) are `ambiguous`: no guess is made between them.
 */
export function matchOption(options: FieldDefinition['options'], text: string, normalize: boolean): OptionMatch {
  const all: FieldOption[] = (options ?? []).map((o) => (typeof o === 'string' ? { value: o } : o));
  const hits = matchingOptions(all, text, normalize).filter((o, i, found) => found.findIndex((p) => p.value === o.value) === i);
  if (hits.length === 1) return { kind: 'found', value: hits[0]!.value };
  if (hits.length > 1) return { kind: 'ambiguous', candidates: hits };
  return { kind: 'none' };
}

const candidateList = (candidates: readonly FieldOption[]) =>
  candidates.map((o) => (o.label !== undefined && o.label !== o.value ? `${JSON.stringify(o.value)} (${o.label})` : JSON.stringify(o.value))).join(', ');

/**
 * The allowed values of an enumeration, as a message shows them. Values that are bare numbers (a
 * CRM's option ids, such as Pipedrive's, or a custom pipeline's stage ids) say nothing alone: each
 * is shown with its label, `"12" (Qualified)`.
 */
function allowedOptions(d: FieldDefinition): string {
  const values = visibleOptionValues(d);
  if (values.length === 0 || !values.every((v) => /^\d+$/.test(v))) return allowedList(values);
  const label = new Map((d.options ?? []).flatMap((o) => (typeof o === 'string' || o.label === undefined ? [] : [[o.value, o.label] as const])));
  const shown = values.slice(0, SHOWN_OPTIONS).map((v) => (label.has(v) && label.get(v) !== v ? `${JSON.stringify(v)} (${label.get(v)})` : JSON.stringify(v))).join(', ');
  return values.length > SHOWN_OPTIONS ? `${shown} (and ${values.length - SHOWN_OPTIONS} more)` : shown;
}

function asEnumeration(d: FieldDefinition, v: unknown, normalize: boolean): Result {
  const restricted = d.restricted !== false;
  // Hidden options are accepted but not suggested: the CRM's own forms no longer offer them.
  const allowed = () => `; allowed: ${allowedOptions(d)}`;
  const one = (item: unknown): Result => {
    const text = normalize ? (typeof item === 'number' ? String(item) : typeof item === 'string' ? item.trim() : item) : item;
    if (typeof text !== 'string') return no(`must be one of the allowed values (got ${kind(item)})${allowed()}`);
    const match = matchOption(d.options, text, normalize);
    if (match.kind === 'found') return ok(match.value);
    if (match.kind === 'ambiguous') return no(`${JSON.stringify(text)} matches more than one option: ${candidateList(match.candidates)}; send the value of the one meant`);
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
    case 'integer':
      return asNumber(d, v, normalize);
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

const textOf = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v));

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
    // Reported only when the text changed: "12000" written as 12000, or a valid value in the
    // CRM's form, is not news to whoever sent it.
    if (textOf(r.value) !== textOf(value)) normalized.push({ field, from: value, to: r.value });
  }
  return { fields: out, normalized, issues };
}
