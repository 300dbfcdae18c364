/**
 * The bodies of HubSpot's batch writes, built in one place: the adapter sends them and
 * `sync --dry-run` prints them, so the preview cannot drift from the request.
 */
import type { Fields } from '../../src/adapter.js';
import type { HubSpotObjectConfig } from './hubspot-config.js';

type RecordConfig = Extract<HubSpotObjectConfig, { kind: 'record' }>;
type ActivityConfig = Extract<HubSpotObjectConfig, { kind: 'activity' }>;

/** One input of POST /crm/v3/objects/{objectType}/batch/upsert, or of …/batch/update by the id property (the adapter adds its objectWriteTraceId). */
export interface UpsertInput { idProperty: string; id: string; properties: Record<string, string> }

/** One input of POST /crm/v3/objects/{objectType}/batch/create (the adapter adds its objectWriteTraceId). */
export interface CreateInput {
  properties: Record<string, string>;
  associations: { to: { id: string }; types: { associationCategory: 'HUBSPOT_DEFINED'; associationTypeId: number }[] }[];
}

/** HubSpot properties are strings; null clears one. */
export function hubspotProperties(fields: Fields): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v === null ? '' : String(v);
  return out;
}

export const upsertRequestLine = (spec: RecordConfig) => `POST /crm/v3/objects/${spec.objectType}/batch/upsert`;
export const createRequestLine = (spec: ActivityConfig) => `POST /crm/v3/objects/${spec.objectType}/batch/create`;

/** A record upsert, matched on the object's unique id property. */
export function upsertInput(spec: RecordConfig, write: { externalId: string; fields: Fields }): UpsertInput {
  return { idProperty: spec.idProperty, id: write.externalId, properties: hubspotProperties(write.fields) };
}

/** One association of a create: the associated record's HubSpot id and the HUBSPOT_DEFINED type id. */
export interface AssociationRef { id: string; typeId: number }

/** An activity create carrying the action key in `keyProperty`, associated with its target and its links (target first). */
export function createInput(spec: ActivityConfig, write: { key: string; fields: Fields }, associations: readonly AssociationRef[]): CreateInput {
  return {
    properties: { ...hubspotProperties(write.fields), [spec.keyProperty]: write.key },
    associations: associations.map((a) => ({ to: { id: a.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: a.typeId }] })),
  };
}

/** One input of POST /crm/v4/associations/{fromType}/{toType}/batch/create. */
export interface AssociationInput {
  from: { id: string };
  to: { id: string };
  types: { associationCategory: 'HUBSPOT_DEFINED'; associationTypeId: number }[];
}

export const associationRequestLine = (fromType: string, toType: string) => `POST /crm/v4/associations/${fromType}/${toType}/batch/create`;

/** A record-to-record association under one or more HUBSPOT_DEFINED type ids. */
export function associationInput(fromId: string, toId: string, typeIds: readonly number[]): AssociationInput {
  return { from: { id: fromId }, to: { id: toId }, types: typeIds.map((associationTypeId) => ({ associationCategory: 'HUBSPOT_DEFINED', associationTypeId })) };
}
