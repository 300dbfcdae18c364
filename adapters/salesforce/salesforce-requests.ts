/**
 * The sObject Collections upsert, built in one place: the adapter sends it and
 * `sync --dry-run` prints it, so the preview cannot drift from the request.
 */
import type { Fields } from '../../src/adapter.js';
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

/** A record upserted by its external id. */
export function recordValues(spec: RecordConfig, write: { externalId: string; fields: Fields }): Record<string, unknown> {
  return { ...write.fields, [spec.externalIdField]: write.externalId };
}

/** An activity upserted by its action key, its parent in the lookup field. */
export function activityValues(spec: ActivityConfig, write: { key: string; fields: Fields; parent: { object: string } }, parentId: string): Record<string, unknown> {
  return { ...write.fields, [spec.parents[write.parent.object]!]: parentId, [spec.externalIdField]: write.key };
}
