/**
 * The value rules of fakeSalesforce, as data and pure functions: what the standard sales fields
 * accept (types, lengths, picklists) and the errors a real org gives for a value it refuses, each
 * next to the rule that raises it. salesforce-fake-state.ts applies them to every write.
 *
 * Sources (read 2026-12):
 * - Picklist values of a new org: Task Status Not Started, In Progress, Completed, Waiting on
 *   someone else, Deferred; Priority High, Normal, Low; Opportunity StageName Prospecting ...
 *   Closed Lost (the ten standard stages, seen in many integrations' stage maps and an LWC's Task
 *   status options); Task Subject is a `combobox` (free text with suggested values: Call, Email,
 *   Send Letter, Send Quote, Other); Account Industry an unrestricted picklist of 32 values
 *   (Agriculture ... Utilities, as several integrations list them). [V: object reference field
 *   types; values I, consistent across sources]
 * - An unrestricted picklist stores any value; a restricted one refuses a value that is not an
 *   active value: `INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST` "bad value for restricted picklist
 *   field: Ignition - CEE" with `fields: ["Territory__c"]` (a REST body quoted in a public app's
 *   fixtures; older orgs prefix the field label: "Jurisdiction: bad value for restricted picklist
 *   field: State of Washington", simple-salesforce users' logs). A multi-select checks each value.
 * - Too long: `STRING_TOO_LONG` "First Name: data value too large: <value> (max length=40)"
 *   with the field in `fields` (composite responses quoted in integration guides; the label, not
 *   the API name, leads the message). Contact FirstName 40, LastName 80; Account Name 255; Task
 *   Subject 255, Description a 32,000-character text area (object reference; Contact Description
 *   "up to 32 KB").
 * - A date or date-time value the JSON parser cannot read fails the WHOLE request with HTTP 400
 *   `[{"message":"Cannot deserialize instance of date from VALUE_STRING value 2017-05-30T-06:00:00X
 *   or request may be missing a required field at [line:11, column:55]","errorCode":"JSON_PARSER_ERROR"}]`
 *   (a Salesforce REST error body quoted in a public integration's error guide; NPSP/GEM#246
 *   quotes the same text for `2019-11-26 00:00:00`; a datetime: "Cannot deserialize instance of
 *   datetime from VALUE_STRING value ..."). A number for a date is VALUE_NUMBER_INT (the parser's
 *   token name) [I: wording inferred from the token names, not seen in a Salesforce body].
 * - Number fields are read by the same parser: a string that is no number fails the WHOLE request,
 *   `JSON_PARSER_ERROR` "Cannot deserialize instance of double from VALUE_STRING value
 *   pointChange76-00Q58000007EWMDEA4 or request may be missing a required field at [line:1,
 *   column:345]" (a Salesforce REST body quoted in mautic/mautic#3048: text sent to a Number
 *   field) [V]. Currency and percent fields are `xsd:double` in Salesforce's SOAP types and are
 *   named `double` here; an int field `int`, a checkbox `boolean` [I: type words follow the SOAP
 *   types, not seen in a body]. A string holding a plain number ("5000") is read as that number,
 *   and "true"/"false" as a checkbox value [I: the parser's coercion, as integrations that send
 *   every value as text rely on]. So `Amount: "$5,000"` fails the request; SOAP and Bulk loads,
 *   which carry text, refuse such a value per record instead with `INVALID_TYPE_ON_FIELD_IN_RECORD`
 *   "Amount: value not of required type: $5,000" [I: not on this REST path].
 */
export type FakeFieldType =
  | 'id' | 'string' | 'textarea' | 'combobox' | 'email' | 'phone' | 'url' | 'date' | 'datetime'
  | 'picklist' | 'multipicklist' | 'double' | 'currency' | 'percent' | 'int' | 'boolean' | 'reference';

/** One value of a picklist, as describe lists it. */
export interface FakePicklistValue {
  value: string;
  /** Default: the value. */
  label?: string;
  /** Inactive values stay in describe (active: false) but a restricted picklist refuses them. Default true. */
  active?: boolean;
  defaultValue?: boolean;
}

/** What a text, picklist or date field accepts. */
export interface FakeValueRules {
  type?: FakeFieldType;
  /** The label people see; leads STRING_TOO_LONG messages. Default: the API name. */
  label?: string;
  /** Longest text in characters (describe `length`). Default 255 for string, combobox, picklist, email, phone, url; 32,000 for textarea. */
  length?: number;
  /** picklist, multipicklist, combobox: the values. */
  picklistValues?: readonly FakePicklistValue[];
  /** picklist, multipicklist: refuse values outside the active ones. Default false (as Salesforce). */
  restrictedPicklist?: boolean;
}

const TEXT_TYPES = new Set<FakeFieldType>(['string', 'textarea', 'combobox', 'email', 'phone', 'url', 'picklist', 'multipicklist']);

/** describe `length` of a field. */
export function lengthOf(f: FakeValueRules): number {
  if (f.length !== undefined) return f.length;
  if (f.type === 'textarea') return 32_000;
  if (f.type === 'reference' || f.type === 'id') return 18;
  return f.type !== undefined && TEXT_TYPES.has(f.type) ? 255 : 0;
}

const values = (...v: string[]): FakePicklistValue[] => v.map((value) => ({ value }));

export const TASK_STATUS = values('Not Started', 'In Progress', 'Completed', 'Waiting on someone else', 'Deferred');
export const TASK_PRIORITY = values('High', 'Normal', 'Low');
export const TASK_SUBJECT = values('Call', 'Email', 'Send Letter', 'Send Quote', 'Other');
export const OPPORTUNITY_STAGES = values(
  'Prospecting', 'Qualification', 'Needs Analysis', 'Value Proposition', 'Id. Decision Makers',
  'Perception Analysis', 'Proposal/Price Quote', 'Negotiation/Review', 'Closed Won', 'Closed Lost',
);
export const ACCOUNT_INDUSTRIES = values(
  'Agriculture', 'Apparel', 'Banking', 'Biotechnology', 'Chemicals', 'Communications', 'Construction', 'Consulting',
  'Education', 'Electronics', 'Energy', 'Engineering', 'Entertainment', 'Environmental', 'Finance', 'Food & Beverage',
  'Government', 'Healthcare', 'Hospitality', 'Insurance', 'Machinery', 'Manufacturing', 'Media', 'Not For Profit',
  'Other', 'Recreation', 'Retail', 'Shipping', 'Technology', 'Telecommunications', 'Transportation', 'Utilities',
);

export interface FieldRefusal {
  statusCode: string;
  message: string;
  fields: string[];
}

/** The per-record error a real org gives `value` in field `name`, or undefined when it stores it. */
export function valueRefusal(name: string, f: FakeValueRules, value: unknown): FieldRefusal | undefined {
  if (typeof value !== 'string' || f.type === undefined || !TEXT_TYPES.has(f.type)) return undefined;
  if ((f.type === 'picklist' || f.type === 'multipicklist') && f.restrictedPicklist) {
    const active = new Set((f.picklistValues ?? []).filter((p) => p.active !== false).map((p) => p.value));
    const given = f.type === 'multipicklist' ? value.split(';') : [value];
    const bad = given.find((v) => !active.has(v));
    if (bad !== undefined) return { statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', message: `bad value for restricted picklist field: ${bad}`, fields: [name] };
  }
  const max = lengthOf(f);
  if (max > 0 && [...value].length > max) {
    return { statusCode: 'STRING_TOO_LONG', message: `${f.label ?? name}: data value too large: ${value} (max length=${max})`, fields: [name] };
  }
  return undefined;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/;

function realDay(y: string, m: string, d: string): boolean {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

/** The JSON token a value is read as, in the parser's words. */
function tokenOf(value: unknown): string {
  if (typeof value === 'string') return 'VALUE_STRING';
  if (typeof value === 'number') return Number.isInteger(value) ? 'VALUE_NUMBER_INT' : 'VALUE_NUMBER_FLOAT';
  if (typeof value === 'boolean') return value ? 'VALUE_TRUE' : 'VALUE_FALSE';
  return Array.isArray(value) ? 'START_ARRAY' : 'START_OBJECT';
}

/** The type word the JSON parser names a field's type by; fields without one take any JSON value. */
const PARSED_AS: Partial<Record<FakeFieldType, string>> = { date: 'date', datetime: 'datetime', double: 'double', currency: 'double', percent: 'double', int: 'int', boolean: 'boolean' };
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
const CHECKBOX = /^(true|false)$/i;

/** Whether the parser reads `value` (not null) for a field it reads as `as`. */
function reads(as: string, value: unknown): boolean {
  if (as === 'date' || as === 'datetime') {
    if (typeof value !== 'string') return false;
    const m = DATE.exec(value) ?? DATE_TIME.exec(value);
    const fits = as === 'date' ? m !== null : DATE_TIME.test(value) || DATE.test(value);
    return m !== null && fits && realDay(m[1]!, m[2]!, m[3]!);
  }
  if (as === 'double') return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && DECIMAL.test(value));
  if (as === 'int') return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && INTEGER.test(value));
  return typeof value === 'boolean' || (typeof value === 'string' && CHECKBOX.test(value));
}

/**
 * The whole-request JSON_PARSER_ERROR message for `value` in a date, date-time, number or checkbox
 * field (`column` where it sits in the body), or undefined when the parser reads it. A date takes
 * `YYYY-MM-DD` (a date-time string is read as its day [I]); a date-time takes ISO 8601 with an
 * optional offset; a number a JSON number or a string holding one; a checkbox true or false.
 */
export function unparsable(f: FakeValueRules, value: unknown, column: number): string | undefined {
  const as = f.type === undefined ? undefined : PARSED_AS[f.type];
  if (as === undefined || value === null || value === undefined || reads(as, value)) return undefined;
  const shown = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
  return `Cannot deserialize instance of ${as} from ${tokenOf(value)} value ${shown} or request may be missing a required field at [line:1, column:${column}]`;
}

/** What the org stores for a value the parser read: a number field's "5000" as 5000, a checkbox's "true" as true. */
export function storedValue(f: FakeValueRules | undefined, value: unknown): unknown {
  if (typeof value !== 'string' || f?.type === undefined) return value;
  const as = PARSED_AS[f.type];
  if ((as === 'double' && DECIMAL.test(value)) || (as === 'int' && INTEGER.test(value))) return Number(value);
  if (as === 'boolean' && CHECKBOX.test(value)) return value.toLowerCase() === 'true';
  return value;
}
