/**
 * What fakeHubSpot's portal knows about its properties: each one's HubSpot `type`, `fieldType` and
 * options, the deal pipelines whose stages `dealstage` takes, and the rules HubSpot holds a written
 * value to, each with the body HubSpot answers when it refuses one.
 *
 * Facts and sources (checked 2026-12-05):
 * - INVALID_OPTION "client was not one of the allowed options: [A, B]" inside
 *   `Property values were not valid: [...]` (a real 400 quoted in gregorspan/csc-frodx#21; the
 *   list of option values between brackets).
 * - INVALID_INTEGER "$12,000 was not a valid number." for a number property, the detail carrying
 *   `propertyValue`, plus `errors: [{ message, code, context: { propertyName } }]` beside it (a
 *   real 400 in Atlas-Authority/marketing-automation#206).
 * - INVALID_DATE "1606768561954 is at 20:36:1.954 UTC, not midnight!" (hubspot-net/HubSpot.NET#98),
 *   "1786334400000 is at 4:0:0.0 UTC, not midnight!", "1496643178000 is at 6:12:58.0 UTC, ...":
 *   every part of the time unpadded, milliseconds too; a date takes `YYYY-MM-DD` or
 *   midnight-UTC epoch ms, a datetime ISO 8601 or epoch ms (HubSpot changelog "standardization of
 *   date formats"; developers.hubspot.com "How should timestamps be formatted").
 * - LEADING_TRAILING_WHITESPACE "\"Customer \" includes leading or trailing whitespace." for any
 *   non-string property, since 2025-04-07 (HubSpot changelog "Enhanced validations for non-string
 *   properties").
 * - Deal `closedate` is a datetime (property dumps list it under datetime; stored values carry a
 *   time of day, fivetran/dbt_hubspot#101).
 * - `dealstage` and `pipeline` list no options (`externalOptions: true`): their values are the
 *   pipelines' and stages' ids from GET /crm/v3/pipelines/deals (botpress/botpress#15354).
 * - A stage outside the deal's pipeline: INVALID_OPTION "registered is not a valid pipeline stage
 *   ID. Valid options are: pipelineId=default : [appointmentscheduled, ...]", with no
 *   `propertyValue` (a real 400 body quoted in a public test suite's mock of a deal create).
 * - A deal created without `pipeline` is in the default pipeline ("If a pipeline isn't specified,
 *   the default pipeline will be used", developers.hubspot.com CRM deals guide).
 * - INVALID_EMAIL "Email address example.lcom is invalid" (real 400s logged by integrators); HubSpot
 *   words messages in the portal's language (a Portuguese one is on record): `localize` does too.
 * Inferred, not seen in a real answer: the wording for a date string that does not parse
 * ("next Friday was not a valid date."), that an update without `pipeline` holds the stage to the
 * pipeline the deal is in, that the stage wording is the same when `pipeline` is written beside
 * it, and that a batch names the first bad input's problems only.
 */

/** An option of an enumeration property, as GET /crm/v3/properties answers it. */
export interface FakePropertyOption {
  value: string;
  label?: string;
  hidden?: boolean;
}

export interface FakePropertyDefinition {
  /** `hasUniqueValue`: usable as an upsert idProperty. Default false. */
  unique?: boolean;
  /** HubSpot's `type`: string, number, bool, enumeration, date, datetime, phone_number. Default string. */
  type?: string;
  /** HubSpot's `fieldType`: text, textarea, number, booleancheckbox, select, radio, checkbox, date, phonenumber. Default from `type`. */
  fieldType?: string;
  /** enumeration: the allowed values (a string is a value labelled with itself). */
  options?: readonly (string | FakePropertyOption)[];
  /** The values come from elsewhere (`dealstage`, `pipeline`: the deal pipelines). Default false. */
  externalOptions?: boolean;
  /** `modificationMetadata.readOnlyValue`: writes are refused (READ_ONLY_VALUE). Default false. */
  readOnly?: boolean;
  /** A calculated property: its value cannot be set. Default false. */
  calculated?: boolean;
}

export interface PropertyDef {
  unique: boolean;
  type: string;
  fieldType: string;
  options: FakePropertyOption[];
  externalOptions: boolean;
  custom: boolean;
  readOnly: boolean;
  calculated: boolean;
}

/** A deal pipeline: its id and label, and its stages' ids and labels in order. */
export interface FakePipeline {
  id: string;
  label: string;
  stages: { id: string; label: string; probability?: number; closed?: boolean }[];
}

const FIELD_TYPE_OF: Record<string, string> = { string: 'text', number: 'number', bool: 'booleancheckbox', enumeration: 'select', date: 'date', datetime: 'date', phone_number: 'phonenumber' };

export function propertyDef(d: FakePropertyDefinition, custom: boolean): PropertyDef {
  const type = d.type ?? 'string';
  return {
    unique: d.unique ?? false, type, fieldType: d.fieldType ?? FIELD_TYPE_OF[type] ?? 'text',
    options: (d.options ?? []).map((o) => (typeof o === 'string' ? { value: o, label: o } : o)),
    externalOptions: d.externalOptions ?? false, custom, readOnly: d.readOnly ?? false, calculated: d.calculated ?? false,
  };
}

const labelled = (pairs: [string, string][]): FakePropertyOption[] => pairs.map(([value, label]) => ({ value, label }));
const text: FakePropertyDefinition = { type: 'string', fieldType: 'text' };
const owner: FakePropertyDefinition = { type: 'enumeration', fieldType: 'select', externalOptions: true };

/** The default portal's properties per object type (HubSpot's internal values; a realistic subset of industry). */
export const DEFAULT_PROPERTIES: Record<string, Record<string, FakePropertyDefinition>> = {
  contacts: {
    email: text, firstname: text, lastname: text, company: text, jobtitle: text, website: text, hubspot_owner_id: owner,
    phone: { type: 'phone_number', fieldType: 'phonenumber' },
    lifecyclestage: {
      type: 'enumeration', fieldType: 'radio',
      options: labelled([['subscriber', 'Subscriber'], ['lead', 'Lead'], ['marketingqualifiedlead', 'Marketing Qualified Lead'], ['salesqualifiedlead', 'Sales Qualified Lead'],
        ['opportunity', 'Opportunity'], ['customer', 'Customer'], ['evangelist', 'Evangelist'], ['other', 'Other']]),
    },
  },
  companies: {
    name: text, domain: text, phone: { type: 'phone_number', fieldType: 'phonenumber' }, city: text, hubspot_owner_id: owner,
    industry: {
      type: 'enumeration', fieldType: 'select',
      options: labelled([['ACCOUNTING', 'Accounting'], ['BANKING', 'Banking'], ['COMPUTER_HARDWARE', 'Computer Hardware'], ['COMPUTER_SOFTWARE', 'Computer Software'],
        ['FINANCIAL_SERVICES', 'Financial Services'], ['HOSPITAL_HEALTH_CARE', 'Hospital & Health Care'], ['INFORMATION_TECHNOLOGY_AND_SERVICES', 'Information Technology and Services'],
        ['INTERNET', 'Internet'], ['MARKETING_AND_ADVERTISING', 'Marketing and Advertising'], ['RETAIL', 'Retail']]),
    },
  },
  deals: {
    dealname: text, hubspot_owner_id: owner,
    amount: { type: 'number', fieldType: 'number' },
    dealstage: { type: 'enumeration', fieldType: 'radio', externalOptions: true },
    pipeline: { type: 'enumeration', fieldType: 'select', externalOptions: true },
    // A datetime in real portals (property dumps list it so; stored values carry a time of day).
    closedate: { type: 'datetime', fieldType: 'date' },
  },
  notes: {
    hs_timestamp: { type: 'datetime', fieldType: 'date' }, hs_note_body: { type: 'string', fieldType: 'html' }, hubspot_owner_id: owner, hs_attachment_ids: text,
  },
  tasks: {
    hs_timestamp: { type: 'datetime', fieldType: 'date' }, hs_task_subject: text, hs_task_body: { type: 'string', fieldType: 'html' }, hubspot_owner_id: owner,
    hs_task_status: { type: 'enumeration', fieldType: 'select', options: labelled([['NOT_STARTED', 'Not started'], ['IN_PROGRESS', 'In progress'], ['WAITING', 'Waiting'], ['COMPLETED', 'Completed'], ['DEFERRED', 'Deferred']]) },
    hs_task_priority: { type: 'enumeration', fieldType: 'select', options: labelled([['LOW', 'Low'], ['MEDIUM', 'Medium'], ['HIGH', 'High']]) },
    hs_task_type: { type: 'enumeration', fieldType: 'select', options: labelled([['EMAIL', 'Email'], ['CALL', 'Call'], ['TODO', 'To-do']]) },
    hs_task_reminders: text,
  },
};

/** Every portal starts with the `default` deal pipeline and its seven stages. */
export const DEFAULT_PIPELINE: FakePipeline = {
  id: 'default', label: 'Sales Pipeline',
  stages: [
    { id: 'appointmentscheduled', label: 'Appointment Scheduled', probability: 0.2 },
    { id: 'qualifiedtobuy', label: 'Qualified To Buy', probability: 0.4 },
    { id: 'presentationscheduled', label: 'Presentation Scheduled', probability: 0.6 },
    { id: 'decisionmakerboughtin', label: 'Decision Maker Bought-In', probability: 0.8 },
    { id: 'contractsent', label: 'Contract Sent', probability: 0.9 },
    { id: 'closedwon', label: 'Closed Won', probability: 1, closed: true },
    { id: 'closedlost', label: 'Closed Lost', probability: 0, closed: true },
  ],
};

/** One refused value, as an entry of HubSpot's `Property values were not valid: [...]` list. */
export interface PropertyProblem {
  name: string;
  error: string;
  message: string;
  value?: string;
}

const DAY_MS = 86_400_000;
const EPOCH_MS = /^-?\d{1,15}$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const NUMBER = /^-?(\d+\.?\d*|\.\d+)$/;
// HubSpot's own check is stricter than any regex (it refuses undeliverable-looking domains); this is its floor.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const validDate = (v: string): boolean => {
  const m = ISO_DATE.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
};

/** `1606768561954 is at 20:36:1.954 UTC, not midnight!`, `1786334400000 is at 4:0:0.0 UTC, not midnight!` */
const notMidnight = (v: string): string => {
  const ms = ((Number(v) % DAY_MS) + DAY_MS) % DAY_MS;
  const t = new Date(ms);
  return `${v} is at ${t.getUTCHours()}:${t.getUTCMinutes()}:${t.getUTCSeconds()}.${t.getUTCMilliseconds()} UTC, not midnight!`;
};

/** The id of the pipeline a deal is created in when none is written. */
export const DEFAULT_PIPELINE_ID = 'default';

/** The values an enumeration takes: its options, or for `dealstage` / `pipeline` the pipelines' ids. */
export function allowedValues(name: string, def: PropertyDef, pipelines: readonly FakePipeline[], pipelineId: string = DEFAULT_PIPELINE_ID): string[] | undefined {
  if (!def.externalOptions) return def.options.map((o) => o.value);
  if (name === 'pipeline') return pipelines.map((p) => p.id);
  if (name === 'dealstage') return pipelines.filter((p) => p.id === pipelineId).flatMap((p) => p.stages.map((s) => s.id));
  // Owners and other external lists the fake does not hold: any value.
  return undefined;
}

/**
 * Whether HubSpot accepts `raw` as the value of property `name`; the problem as HubSpot words it
 * when not. `''` clears a property of any type. `siblings` are the other values of the same input
 * (a stage is checked against the pipeline written beside it, else the deal's own, else the default).
 */
export function checkPropertyValue(name: string, def: PropertyDef, raw: string, pipelines: readonly FakePipeline[], siblings: Record<string, unknown> = {}): PropertyProblem | null {
  if (raw === '') return null;
  const problem = (error: string, message: string): PropertyProblem => ({ name, error, message, value: raw });
  if (def.type !== 'string' && def.type !== 'phone_number' && raw !== raw.trim()) {
    return problem('LEADING_TRAILING_WHITESPACE', `"${raw}" includes leading or trailing whitespace.`);
  }
  switch (def.type) {
    case 'number':
      return NUMBER.test(raw) ? null : problem('INVALID_INTEGER', `${raw} was not a valid number.`);
    case 'bool':
      return raw === 'true' || raw === 'false' ? null : problem('INVALID_OPTION', `${raw} was not one of the allowed options: [true, false]`);
    case 'date':
      if (EPOCH_MS.test(raw)) return Number(raw) % DAY_MS === 0 ? null : problem('INVALID_DATE', notMidnight(raw));
      return validDate(raw) ? null : problem('INVALID_DATE', `${raw} was not a valid date.`);
    case 'datetime':
      return EPOCH_MS.test(raw) || (ISO_DATETIME.test(raw) && !Number.isNaN(Date.parse(raw))) || validDate(raw) ? null : problem('INVALID_DATE', `${raw} was not a valid date.`);
    case 'enumeration': {
      const pipeline = typeof siblings.pipeline === 'string' && siblings.pipeline !== '' ? siblings.pipeline : undefined;
      const allowed = allowedValues(name, def, pipelines, pipeline);
      if (!allowed) return null;
      const values = def.fieldType === 'checkbox' ? raw.split(';') : [raw];
      const bad = values.find((v) => !allowed.includes(v));
      if (bad !== undefined && name === 'dealstage') {
        return { name, error: 'INVALID_OPTION', message: `${bad} is not a valid pipeline stage ID. Valid options are: pipelineId=${pipeline ?? DEFAULT_PIPELINE_ID} : [${allowed.join(', ')}]` };
      }
      return bad === undefined ? null : problem('INVALID_OPTION', `${bad} was not one of the allowed options: [${allowed.join(', ')}]`);
    }
    default:
      if (name === 'email' && !EMAIL.test(raw)) return problem('INVALID_EMAIL', `Email address ${raw} is invalid`);
      return null;
  }
}

/** HubSpot's 400 message for refused values: the problems as a JSON list inside the message. */
export function propertyErrorMessage(problems: readonly PropertyProblem[]): string {
  const list = problems.map((p) => ({
    isValid: false, message: p.message, error: p.error, name: p.name, localizedErrorMessage: p.message, ...(p.value !== undefined ? { propertyValue: p.value } : {}),
  }));
  return `Property values were not valid: ${JSON.stringify(list)}`;
}

/** The `errors` HubSpot sends beside that message: one per problem, the property named in its context. */
export const propertyErrorDetails = (problems: readonly PropertyProblem[]) =>
  problems.map((p) => ({ message: p.message, code: p.error, context: { propertyName: [p.name] } }));

/** A property as GET /crm/v3/properties/{objectType} answers it. */
export function propertyView(name: string, p: PropertyDef, groupName: string): Record<string, unknown> {
  return {
    name, label: name, type: p.type, fieldType: p.fieldType, groupName, description: '', displayOrder: -1,
    hasUniqueValue: p.unique, hidden: false, hubspotDefined: !p.custom, calculated: p.calculated, externalOptions: p.externalOptions, formField: false,
    options: p.options.map((o, i) => ({ label: o.label ?? o.value, value: o.value, displayOrder: i, hidden: o.hidden ?? false })),
    modificationMetadata: { archivable: p.custom, readOnlyDefinition: !p.custom, readOnlyValue: p.readOnly },
  };
}

/** GET /crm/v3/pipelines/deals: `{ results: [pipeline with stages] }`, stage metadata as strings. */
export function pipelinesView(pipelines: readonly FakePipeline[], at: string): Record<string, unknown> {
  return {
    results: pipelines.map((p, i) => ({
      id: p.id, label: p.label, displayOrder: i, archived: false, createdAt: at, updatedAt: at,
      stages: p.stages.map((s, j) => ({
        id: s.id, label: s.label, displayOrder: j, archived: false, createdAt: at, updatedAt: at, writePermissions: 'CRM_PERMISSIONS_ENFORCEMENT',
        metadata: { isClosed: String(s.closed ?? false), probability: String(s.probability ?? 0) },
      })),
    })),
  };
}
