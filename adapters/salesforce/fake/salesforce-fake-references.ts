/**
 * The relationship rules of fakeSalesforce, as data and pure functions: the standard sales
 * objects and their lookups, and how a record names a parent by its External ID instead of its
 * Id (`"Account": { "AI_External_Id__c": "acme" }` on a Contact). salesforce-fake-state.ts keeps
 * the records and applies these rules before it validates a write.
 *
 * Sources (read 2026-12):
 * - Opportunity requires Name, StageName and CloseDate on create (Salesforce Object Reference,
 *   Opportunity: the only non-nillable, non-defaulted createable fields); Lead requires LastName
 *   and Company. REQUIRED_FIELD_MISSING lists every missing field: "Required fields are missing:
 *   [FieldName, ...]" with those API names in `fields` (salesforcedictionary.com/errors/required-field-missing).
 * - Task `WhoId` points at a Contact or Lead, `WhatId` at an Account, Opportunity, Case, ...
 *   (Task object reference). A WhoId of another object fails with
 *   `FIELD_INTEGRITY_EXCEPTION, Name ID: id value of incorrect type: <id>: [WhoId]` (observed
 *   save error quoted on shuzhiduo.com/A/6pdD2qnGJw; the collection-style body
 *   `{"fields":["WhoId"],"message":"Name ID: id value of incorrect type: 0015w000029KTYHAA4","statusCode":"FIELD_INTEGRITY_EXCEPTION"}`
 *   is quoted from a real org in jsforce#1006); WhatId's label is "Related To ID" [I: same rule].
 * - A parent by External ID: relationship name = lookup field minus `Id` (`AccountId` ->
 *   `Account`), custom `Foo__c` -> `Foo__r`. A value that matches no parent fails that record with
 *   "Foreign key external ID: 0000955741 not found for field Some_Custom_Field__c in entity Account"
 *   (docs.polytomic.com/docs/saleforceinvalid_reference_error, a real Salesforce message), with
 *   errorCode INVALID_FIELD in a recorded composite response (Apache Camel's salesforce component,
 *   SObjectCompositeResponseTest: "Foreign key external ID: 0116 not found for field
 *   Invoice_External_Id__c in entity blng__Invoice__c") [I: `fields` is empty here]. Two key fields in one reference:
 *   `INVALID_FIELD, More than 1 field provided in an external foreign key reference in entity: Certificate__c`
 *   (salesforce.stackexchange.com/questions/251266).
 * - The reference's shape: Salesforce's Data Loader sends Collections upserts with each parent as a
 *   nested record carrying its own `attributes: { type }` (forcedotcom/dataloader,
 *   SforceDynaBean.getCompositeRESTSObject and SObject4JSON.getRepresentationForCompositeREST) [V],
 *   which is what the adapter sends. The form without `attributes` is the one the REST API guide
 *   shows for a lookup to one sObject ("Insert or Update (Upsert) a Record Using an External ID",
 *   `"Merchandise__r": { "MerchandiseExtID__c": 123 }`) [V for sObject Rows; I inside
 *   Collections]: the fake accepts both, so a client that omits the type is not refused here and
 *   accepted nowhere else. A type the lookup cannot point at resolves, then fails as an Id of the
 *   wrong sObject would (FIELD_INTEGRITY_EXCEPTION, below).
 * - A polymorphic lookup (WhoId, WhatId) by External ID needs the parent's type:
 *   `"Who": { "attributes": { "type": "Contact" }, "AI_External_Id__c": "x" }` [I: the REST form
 *   with attributes.type is the documented way for polymorphic fields in sObject trees. The message
 *   for a missing type is the fake's own].
 */
import { ACCOUNT_INDUSTRIES, OPPORTUNITY_STAGES, TASK_PRIORITY, TASK_STATUS, TASK_SUBJECT, type FakeValueRules } from './salesforce-fake-values.js';

export type { FakeFieldType, FakePicklistValue } from './salesforce-fake-values.js';

/** A field of the fake org: its type and value rules (salesforce-fake-values.ts), keys, access and lookups. */
export interface FakeFieldOptions extends FakeValueRules {
  externalId?: boolean;
  unique?: boolean;
  /**
   * Unique matching is case-sensitive (the recommended setting). Default true. A Unique field
   * seeded case-insensitive matches `acme-1` to `ACME-1`, as a real org does.
   */
  caseSensitive?: boolean;
  /** The API user may set it on create (describe `createable`). Default true. */
  createable?: boolean;
  /** The API user may change it on update (describe `updateable`). Default true. */
  updateable?: boolean;
  /** Required on create (REQUIRED_FIELD_MISSING). */
  required?: boolean;
  /** reference fields: the sObjects an id may point to. */
  referenceTo?: string[];
  /** Value set on create when absent. */
  defaultValue?: string;
  /** double, currency, percent: digits in all (describe `precision`). Default 0, as describe gives other types. */
  precision?: number;
  /** double, currency, percent: digits after the point (describe `scale`). Default 0. */
  scale?: number;
}

const EXTERNAL: FakeFieldOptions = { type: 'string', externalId: true, unique: true };

/**
 * The org every fakeSalesforce starts with: the standard sales objects with their real types,
 * lengths and picklists (salesforce-fake-values.ts), each with `AI_External_Id__c`. Types as the
 * Object Reference gives them: Opportunity Amount currency, Probability percent, CloseDate date;
 * Account AnnualRevenue currency, NumberOfEmployees int; Contact HasOptedOutOfEmail boolean,
 * Birthdate date, Email email. An org checks each value by its type whether or not the client
 * loaded any field definitions.
 */
export const SALES_SCHEMA: Record<string, Record<string, FakeFieldOptions>> = {
  Account: {
    Name: { type: 'string', label: 'Account Name', length: 255, required: true },
    Industry: { type: 'picklist', picklistValues: ACCOUNT_INDUSTRIES, restrictedPicklist: false },
    AnnualRevenue: { type: 'currency', label: 'Annual Revenue' },
    NumberOfEmployees: { type: 'int', label: 'Employees' },
    AI_External_Id__c: EXTERNAL,
  },
  Contact: {
    Email: { type: 'email', length: 80 },
    FirstName: { type: 'string', label: 'First Name', length: 40 },
    LastName: { type: 'string', label: 'Last Name', length: 80, required: true },
    Phone: { type: 'phone', label: 'Business Phone', length: 40 },
    Birthdate: { type: 'date' },
    HasOptedOutOfEmail: { type: 'boolean', label: 'Email Opt Out' },
    AccountId: { type: 'reference', referenceTo: ['Account'] },
    AI_External_Id__c: EXTERNAL,
  },
  Opportunity: {
    Name: { type: 'string', label: 'Name', length: 120, required: true },
    StageName: { type: 'picklist', label: 'Stage', picklistValues: OPPORTUNITY_STAGES, restrictedPicklist: true, required: true },
    CloseDate: { type: 'date', label: 'Close Date', required: true },
    Amount: { type: 'currency', precision: 18, scale: 2 },
    Probability: { type: 'percent', label: 'Probability (%)', precision: 3, scale: 0 },
    AccountId: { type: 'reference', referenceTo: ['Account'] },
    AI_External_Id__c: EXTERNAL,
  },
  Lead: {
    Email: { type: 'email', length: 80 },
    FirstName: { type: 'string', label: 'First Name', length: 40 },
    LastName: { type: 'string', label: 'Last Name', length: 80, required: true },
    Company: { type: 'string', length: 255, required: true },
    AI_External_Id__c: EXTERNAL,
  },
  Task: {
    Subject: { type: 'combobox', length: 255, picklistValues: TASK_SUBJECT },
    Description: { type: 'textarea', label: 'Comments', length: 32_000 },
    ActivityDate: { type: 'date', label: 'Due Date' },
    Status: { type: 'picklist', picklistValues: TASK_STATUS, restrictedPicklist: true, defaultValue: 'Not Started' },
    Priority: { type: 'picklist', picklistValues: TASK_PRIORITY, restrictedPicklist: true, defaultValue: 'Normal' },
    WhoId: { type: 'reference', referenceTo: ['Contact', 'Lead'] },
    WhatId: { type: 'reference', referenceTo: ['Account', 'Opportunity', 'Case'] },
    AI_External_Id__c: EXTERNAL,
    AI_Idempotency_Key__c: EXTERNAL,
  },
};

/** The lookup field a relationship name stands for: `Account` -> `AccountId`, `Partner__r` -> `Partner__c`. */
export function lookupFieldOf(relationshipName: string): string {
  return relationshipName.endsWith('__r') ? `${relationshipName.slice(0, -3)}__c` : `${relationshipName}Id`;
}

export interface RecordError {
  statusCode: string;
  message: string;
  fields: string[];
}

/** What `resolveReference` needs from the org: a field's definition and the records matching a value. */
export interface ReferenceOrg {
  referenceTo(sobject: string, field: string): string[] | undefined;
  isExternalId(sobject: string, field: string): boolean;
  /** Ids of the `sobject` records whose `field` matches `value` by the field's rule. */
  idsMatching(sobject: string, field: string, value: unknown): string[];
}

/**
 * Resolve one `Relationship: { [attributes: { type }], ExtField: value }` of a `sobject` record to
 * `{ field, id }`, or the per-record error Salesforce gives. `undefined` when `name` is not a
 * relationship of `sobject` (the caller reports an unknown field).
 */
export function resolveReference(org: ReferenceOrg, sobject: string, name: string, ref: Record<string, unknown>): { field: string; id: string } | { error: RecordError } | undefined {
  const field = lookupFieldOf(name);
  const targets = org.referenceTo(sobject, field);
  if (!targets || targets.length === 0) return undefined;
  const { attributes, ...keys } = ref;
  const keyFields = Object.keys(keys);
  const type = (attributes as { type?: unknown } | undefined)?.type;
  const target = typeof type === 'string' ? type : targets.length === 1 ? targets[0]! : undefined;
  if (!target) {
    return { error: { statusCode: 'INVALID_FIELD', message: `A polymorphic foreign key reference needs attributes.type: ${name} on ${sobject} may point at ${targets.join(', ')}`, fields: [] } };
  }
  if (keyFields.length !== 1) {
    return { error: { statusCode: 'INVALID_FIELD', message: `More than 1 field provided in an external foreign key reference in entity: ${target}`, fields: [] } };
  }
  const keyField = keyFields[0]!;
  if (!org.isExternalId(target, keyField)) {
    return { error: { statusCode: 'INVALID_FIELD', message: `Field name provided, ${keyField} is not an External ID or indexed field for ${target}`, fields: [] } };
  }
  const ids = org.idsMatching(target, keyField, keys[keyField]);
  if (ids.length === 0) {
    return { error: { statusCode: 'INVALID_FIELD', message: `Foreign key external ID: ${String(keys[keyField])} not found for field ${keyField} in entity ${target}`, fields: [] } };
  }
  if (ids.length > 1) {
    return { error: { statusCode: 'INVALID_FIELD', message: `Foreign key external ID: ${String(keys[keyField])} matches more than one record for field ${keyField} in entity ${target}`, fields: [] } };
  }
  return { field, id: ids[0]! };
}
