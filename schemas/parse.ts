/**
 * zod issues in words: every message names the field (its path) and says what it needs, for the
 * issue kinds a caller can hit (a missing field, a wrong type, an unknown key, a value off an enum,
 * too long or too short, a bad format). A message a schema sets itself is kept as it is; zod's own
 * English ("Invalid input: expected string, received undefined") never reaches a user.
 */
import type { z } from 'zod';
import type { ValidationIssue } from './issues.js';
import { escapeLoneSurrogates } from './unicode.js';

/** A path segment as text; a lone surrogate (which has no UTF-8 form) is written as `\uD800`. */
export const pathSegment = (key: PropertyKey): string => escapeLoneSurrogates(String(key));

const joinPath = (path: readonly PropertyKey[]) => path.map(pathSegment).join('.');

/**
 * What each field needs, in words, by path; `*` stands for any list index or key (`links.*.object`).
 * Said when the field is missing or of the wrong type, and its keys are the known properties an
 * unknown key is told about.
 */
export type FieldNeeds = Readonly<Record<string, string>>;

export interface FormatOptions {
  /** The value that was parsed: lets a message say what was sent (`got 5`, `got "delete"`). */
  input?: unknown;
  /** What the fields need, in words (default: the kind of value the schema expects). */
  needs?: FieldNeeds;
}

type Issue = z.core.$ZodIssue;

const needsBySchema = new WeakMap<object, FieldNeeds>();

/** Attach the words for its fields to a schema: `parseWith` and `formatZodIssues(..., { schema })` use them. */
export function withNeeds<S extends z.ZodType>(schema: S, needs: FieldNeeds): S {
  needsBySchema.set(schema, needs);
  return schema;
}

/** The words attached to `schema` by `withNeeds`, if any. */
export const needsOf = (schema: z.ZodType): FieldNeeds | undefined => needsBySchema.get(schema);

/** zod's own messages start so; a message set by a schema (`must not be empty`) does not. */
const ZOD_DEFAULT = /^(Invalid\b|Too (big|small)\b|Unrecognized key)/;

/** The value at `path` inside `input` (undefined when any step is missing). */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** The needs entry for a path: exact first, then with indexes and record keys as `*`. */
function needAt(needs: FieldNeeds | undefined, path: readonly PropertyKey[]): string | undefined {
  if (!needs) return undefined;
  const exact = joinPath(path);
  if (Object.hasOwn(needs, exact)) return needs[exact];
  for (const [pattern, words] of Object.entries(needs)) {
    const parts = pattern.split('.');
    if (parts.length === path.length && parts.every((p, i) => p === '*' || p === String(path[i]))) return words;
  }
  return undefined;
}

/** The properties `needs` knows directly under `path` (for an unknown key). */
function knownUnder(needs: FieldNeeds | undefined, path: readonly PropertyKey[]): string[] {
  if (!needs) return [];
  const names = new Set<string>();
  for (const pattern of Object.keys(needs)) {
    if (pattern === '') continue;
    const parts = pattern.split('.');
    if (parts.length === path.length + 1 && path.every((p, i) => parts[i] === '*' || parts[i] === String(p))) names.add(parts[path.length]!);
  }
  return [...names];
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  tuple: 'a list',
  object: 'an object',
  record: 'an object',
  map: 'a map',
  set: 'a set',
  date: 'a date',
  null: 'null',
  undefined: 'absent',
  symbol: 'a symbol',
  function: 'a function',
  nan: 'NaN',
};

/** zod's name of a kind of value in words: `string` -> `a string`, `record` -> `an object`. */
export const expectedWords = (expected: string): string => EXPECTED[expected] ?? `a ${expected}`;

/** What was sent, in a few words; a string's content is left out (it may be anything). */
function sentWords(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string': return 'a string';
    case 'number': return Number.isFinite(value) ? `the number ${value}` : `${value}`;
    case 'boolean': return `${value}`;
    case 'object': return 'an object';
    case 'bigint': return 'a whole number';
    default: return `a ${typeof value}`;
  }
}

/** zod's word for what it received (`received number`), for a caller that passed no input. */
const RECEIVED = /received (\w+)/;

const quote = (value: unknown) => {
  const text = typeof value === 'string' ? JSON.stringify(escapeLoneSurrogates(value)) : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

const listWords = (values: readonly unknown[]) => {
  const shown = values.slice(0, 20).map(quote);
  return `${shown.join(', ')}${values.length > shown.length ? `, ... (${values.length} in all)` : ''}`;
};

const plural = (n: number | bigint, one: string, many: string) => `${n} ${Number(n) === 1 ? one : many}`;

function sizeMessage(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>, value: unknown): string {
  const big = issue.code === 'too_big';
  const limit = big ? (issue as { maximum: number | bigint }).maximum : (issue as { minimum: number | bigint }).minimum;
  const bound = big ? (issue.inclusive === false ? 'less than' : 'at most') : issue.inclusive === false ? 'more than' : 'at least';
  switch (issue.origin) {
    case 'string': {
      if (!big && Number(limit) === 1 && issue.inclusive !== false) return 'must not be empty';
      const got = typeof value === 'string' ? ` (it is ${plural(value.length, 'character', 'characters')})` : '';
      return `must be ${bound} ${plural(limit, 'character', 'characters')}${got}`;
    }
    case 'array':
    case 'set': {
      if (!big && Number(limit) === 1 && issue.inclusive !== false) return 'must not be empty';
      const got = Array.isArray(value) ? ` (it has ${value.length})` : '';
      return `must hold ${bound} ${plural(limit, 'item', 'items')}${got}`;
    }
    case 'number':
    case 'int':
    case 'bigint': {
      const words = big ? (issue.inclusive === false ? 'less than' : 'at most') : issue.inclusive === false ? 'greater than' : 'at least';
      return `must be ${words} ${limit}${typeof value === 'number' ? ` (it is ${value})` : ''}`;
    }
    case 'date':
      return `must be ${big ? 'no later than' : 'no earlier than'} ${new Date(Number(limit)).toISOString()}`;
    default:
      return `must be ${bound} ${limit} in size`;
  }
}

const FORMATS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL, e.g. https://example.com',
  datetime: 'an ISO 8601 date-time, e.g. 2026-11-29T10:00:00Z',
  date: 'a date, e.g. 2026-11-29',
  time: 'a time, e.g. 10:00:00',
  duration: 'an ISO 8601 duration, e.g. PT15M',
  uuid: 'a UUID',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  json_string: 'a JSON string',
};

function formatMessage(issue: Extract<Issue, { code: 'invalid_format' }>): string {
  const i = issue as { format: string; pattern?: string; prefix?: string; suffix?: string; includes?: string };
  if (i.format === 'starts_with' && i.prefix !== undefined) return `must start with ${quote(i.prefix)}`;
  if (i.format === 'ends_with' && i.suffix !== undefined) return `must end with ${quote(i.suffix)}`;
  if (i.format === 'includes' && i.includes !== undefined) return `must contain ${quote(i.includes)}`;
  if (i.format === 'regex') return i.pattern ? `must match the pattern ${i.pattern}` : 'is not in the expected form';
  return `must be ${FORMATS[i.format] ?? `a valid ${i.format}`}`;
}

/** The kinds of value a union takes, when each of its branches failed on the type alone. */
function unionMessage(issue: Extract<Issue, { code: 'invalid_union' }>, value: unknown): string {
  const branches = (issue as { errors?: Issue[][] }).errors ?? [];
  const kinds = branches.map((b) => (b.length === 1 && b[0]!.code === 'invalid_type' && b[0]!.path.length === 0 ? expectedWords(b[0]!.expected) : undefined));
  if (kinds.length > 0 && kinds.every((k) => k !== undefined)) {
    const distinct = [...new Set(kinds)];
    const words = distinct.length === 1 ? distinct[0]! : `${distinct.slice(0, -1).join(', ')} or ${distinct.at(-1)!}`;
    return `must be ${words}${value !== undefined ? `; got ${sentWords(value)}` : ''}`;
  }
  return 'does not match any of the accepted forms';
}

/**
 * One issue's message in words (without its path). `options.input` is the whole value parsed,
 * `path` where the issue is inside it.
 */
export function issueMessage(issue: Issue, options: FormatOptions = {}): string {
  const path = issue.path;
  const has = options.input !== undefined;
  const value = has ? valueAt(options.input, path) : undefined;
  const own = !ZOD_DEFAULT.test(issue.message);
  switch (issue.code) {
    case 'invalid_type': {
      if (own) return issue.message;
      const need = needAt(options.needs, path) ?? expectedWords(issue.expected);
      const received = has ? (value === undefined ? 'undefined' : null) : (RECEIVED.exec(issue.message)?.[1] ?? null);
      if (received === 'undefined') return `is required (${need})`;
      const got = has ? sentWords(value) : received ? expectedWords(received) : undefined;
      return `must be ${need}${got ? `; got ${got}` : ''}`;
    }
    case 'invalid_value': {
      if (own) return issue.message;
      const got = has && value !== undefined ? `; got ${typeof value === 'string' ? quote(value) : sentWords(value)}` : '';
      if (value === undefined && has) return `is required (${needAt(options.needs, path) ?? (issue.values.length === 1 ? quote(issue.values[0]) : `one of ${listWords(issue.values)}`)})`;
      return issue.values.length === 1 ? `must be ${quote(issue.values[0])}${got}` : `must be one of ${listWords(issue.values)}${got}`;
    }
    case 'unrecognized_keys':
      return 'is not a known property';
    case 'too_big':
    case 'too_small':
      return own ? issue.message : sizeMessage(issue, value);
    case 'invalid_format':
      return own ? issue.message : formatMessage(issue);
    case 'not_multiple_of':
      return own ? issue.message : `must be a multiple of ${issue.divisor}`;
    case 'invalid_union':
      return own ? issue.message : unionMessage(issue, value);
    case 'invalid_key':
      return own ? issue.message : `has an invalid key: ${issue.issues.map((inner) => issueMessage(inner)).join('; ')}`;
    case 'invalid_element':
      return own ? issue.message : `has an invalid value: ${issue.issues.map((inner) => issueMessage(inner)).join('; ')}`;
    default:
      return own ? issue.message : 'is not valid';
  }
}

/** zod issues as `{ path: 'fields.email', message }`, the form every error and report uses, each message in words. */
export function formatZodIssues(error: Pick<z.ZodError, 'issues'>, options: FormatOptions = {}): ValidationIssue[] {
  return error.issues.flatMap((issue) => {
    const path = joinPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const known = knownUnder(options.needs, issue.path);
      const message = `is not a known property${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`;
      return issue.keys.map((key) => ({ path: path ? `${path}.${pathSegment(key)}` : pathSegment(key), message }));
    }
    if (issue.code === 'invalid_key') {
      // A record key that failed its own schema: say why, at the key's path.
      const key = issue.path.at(-1);
      return issue.issues.map((inner) => {
        const message = issueMessage(inner, typeof key === 'string' ? { input: key } : {});
        return { path, message: message.startsWith('field name ') ? message : `field name ${message}` };
      });
    }
    return [{ path, message: issueMessage(issue, options) }];
  });
}
