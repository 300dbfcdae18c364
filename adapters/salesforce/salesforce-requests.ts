/**
 * The sObject Collections upsert, built in one place: the adapter sends it and
 * `sync --dry-run` prints it, so the preview cannot drift from the request.
 */
import type { FieldDefinition } from '../../schemas/field-definitions.js';
import type { Fields, LinkRef } from '../../src/adapter.js';
import type { SalesforceObjectConfig } from './salesforce-config.js';

type RecordConfig = Extract<SalesforceObjectConfig, { kind: 'record' }>;
type ActivityConfig = Extract<SalesforceObjectConfig, { kind: 'activity' }>;

/** The REST API root of a version: `/services/data/v60.0`. */
export const apiBase = (apiVersion: string) => `/services/data/v${apiVersion}`;

/**
 * PATCH target of an upsert by `externalIdField`. Always the collection form: external ids travel
 * in the JSON body, never in the URL (jsforce #1069 leaves the single-record path unencoded, so
 * `/`, `?`, `#` in an id hit the wrong resource).
 */
export const collectionUrl = (apiVersion: string, spec: { sobject: string; externalIdField: string }) =>
  `${apiBase(apiVersion)}/composite/sobjects/${spec.sobject}/${spec.externalIdField}`;

/** One record of a collection request. */
export const collectionRecord = (sobject: string, record: Record<string, unknown>) => ({ ...record, attributes: { type: sobject } });

/** The fields whose definitions make them numbers (number, integer): what `recordJson` writes as JSON numbers. */
export function numericFields(definitions: Readonly<Record<string, FieldDefinition>> | undefined): ReadonlySet<string> {
  return new Set(Object.entries(definitions ?? {}).filter(([, d]) => d.type === 'number' || d.type === 'integer').map(([field]) => field));
}

// JSON's own grammar for a number, so that what is written bare is always valid JSON.
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

/**
 * One record of a collection request as JSON text. A `numeric` field holding decimal text is
 * written as a JSON number with exactly those digits: the checked value of a number keeps its
 * text when a double would round it (`"12345678901234567890"`, schemas/values.ts), and
 * JSON.stringify would either quote it or, parsed to a number first, round it. Everything else is
 * JSON.stringify's own output.
 */
export function recordJson(sobject: string, record: Record<string, unknown>, numeric: ReadonlySet<string> = new Set()): string {
  const entries = Object.entries(collectionRecord(sobject, record)).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${numeric.has(k) && typeof v === 'string' && JSON_NUMBER.test(v) ? v : JSON.stringify(v)}`).join(',')}}`;
}

/** The body of a collection upsert: `{"allOrNone":false,"records":[...]}`, each record by `recordJson`. */
export const collectionBody = (sobject: string, records: ReadonlyArray<Record<string, unknown>>, numeric?: ReadonlySet<string>) =>
  `{"allOrNone":false,"records":[${records.map((r) => recordJson(sobject, r, numeric)).join(',')}]}`;

/**
 * The relationship name of a lookup field, under which a parent is named by its external id:
 * `AccountId` -> `Account`, custom `Partner__c` -> `Partner__r`. Undefined for a name that is
 * neither (options validation refuses such a link field).
 */
export function relationshipName(lookupField: string): string | undefined {
  if (lookupField.endsWith('__c')) return `${lookupField.slice(0, -3)}__r`;
  if (lookupField.length > 2 && lookupField.endsWith('Id')) return lookupField.slice(0, -2);
  return undefined;
}

/** How a linked record is named on the wire: its sObject and the external-id field it is matched on. */
export type LinkTargets = Readonly<Record<string, { sobject: string; externalIdField: string } | undefined>>;

/**
 * A record upserted by its external id. Each link becomes an external-id reference on its
 * lookup's relationship (`"Account": { "AI_External_Id__c": "acme" }`): Salesforce resolves it in
 * the same upsert. A lookup holds one record, so when several links land on one field the last wins.
 */
export function recordValues(spec: RecordConfig, write: { externalId: string; fields: Fields; links?: readonly LinkRef[] }, targets: LinkTargets = {}): Record<string, unknown> {
  const refs: Record<string, unknown> = {};
  for (const link of write.links ?? []) {
    const field = spec.links?.[link.object];
    const name = field === undefined ? undefined : relationshipName(field);
    const target = targets[link.object];
    if (name === undefined || target === undefined) continue;
    refs[name] = { [target.externalIdField]: link.externalId };
  }
  return { ...write.fields, ...refs, [spec.externalIdField]: write.externalId };
}

/**
 * An activity upserted by its action key, its target and links in their lookup fields
 * (`lookups`: field -> Id, e.g. `{ WhoId, WhatId }`).
 */
export function activityValues(spec: ActivityConfig, write: { key: string; fields: Fields }, lookups: Readonly<Record<string, string>>): Record<string, unknown> {
  return { ...write.fields, ...lookups, [spec.externalIdField]: write.key };
}

/**
 * The lookup fields an activity's target and links set, in order (target first, then each link):
 * field -> the reference that sets it, the last one winning where two land on one field.
 */
export function activityLookups(spec: ActivityConfig, write: { parent: LinkRef; links?: readonly LinkRef[] }): Map<string, LinkRef> {
  const out = new Map<string, LinkRef>();
  for (const ref of [write.parent, ...(write.links ?? [])]) {
    const field = spec.parents[ref.object];
    if (field !== undefined) out.set(field, ref);
  }
  return out;
}

/** The record objects of a config, as links name them. */
export function linkTargets(objects: Readonly<Record<string, SalesforceObjectConfig>>): LinkTargets {
  const out: Record<string, { sobject: string; externalIdField: string }> = {};
  for (const [name, spec] of Object.entries(objects)) if (spec.kind === 'record') out[name] = { sobject: spec.sobject, externalIdField: spec.externalIdField };
  return out;
}
