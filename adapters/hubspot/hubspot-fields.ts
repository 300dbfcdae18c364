/**
 * `crm-upsert schema pull` for HubSpot: the configured objects' allowlisted properties, read with
 * GET /crm/v3/properties/{objectType} and translated into field definitions (crm-upsert.fields.json).
 *
 * `dealstage` and `pipeline` (and a ticket's `hs_pipeline_stage` / `hs_pipeline`) have
 * `externalOptions: true` and list no options: their values are the ids of GET
 * /crm/v3/pipelines/{objectType}, so they are read from there. Taking the empty `options` at its
 * word would refuse every stage (botpress/botpress#15354). Other external lists (owners) are not
 * read: such a property is a string, checked by HubSpot alone. An option HubSpot marks `hidden` is
 * kept, marked `hidden: true`: HubSpot hides it from forms but takes its value in a write.
 */
import type { FieldDefinition, FieldDefinitionsFile, FieldOption } from '../../schemas/field-definitions.js';
import { CrmError } from '../../src/errors.js';
import type { RawResponse } from './hubspot-client.js';
import type { HubSpotConfig } from './hubspot-config.js';
import { classifyHubSpotError, readJsonAnswer } from './hubspot-errors.js';

/** The one call pullFields makes (`Client.apiRequest` of @hubspot/api-client satisfies it). */
export interface HubSpotRawClient {
  apiRequest(options: { method: string; path: string; body?: unknown }): Promise<RawResponse>;
}

/** A property as GET /crm/v3/properties/{objectType} answers it (the fields read). */
export interface HubSpotProperty {
  name: string;
  type?: string;
  fieldType?: string;
  options?: { value: string; label?: string; hidden?: boolean }[];
  externalOptions?: boolean;
  calculated?: boolean;
  modificationMetadata?: { readOnlyValue?: boolean };
}

/** A pipeline as GET /crm/v3/pipelines/{objectType} answers it (the fields read). */
export interface HubSpotPipeline {
  id: string;
  label?: string;
  archived?: boolean;
  stages?: { id: string; label?: string; archived?: boolean }[];
}

/** Properties whose values are pipeline ids or stage ids. */
const PIPELINE_PROPERTIES: Record<string, 'pipeline' | 'stage'> = { pipeline: 'pipeline', dealstage: 'stage', hs_pipeline: 'pipeline', hs_pipeline_stage: 'stage' };

const option = (value: string, label: string | undefined, hidden = false): FieldOption => ({ value, ...(label !== undefined && label !== '' ? { label } : {}), ...(hidden ? { hidden: true } : {}) });

/** Pipeline or stage ids (labels kept) of the live pipelines, in HubSpot's order, each id once. */
function pipelineOptions(kind: 'pipeline' | 'stage', pipelines: readonly HubSpotPipeline[]): FieldOption[] {
  const live = pipelines.filter((p) => !p.archived);
  const all = kind === 'pipeline' ? live.map((p) => option(p.id, p.label)) : live.flatMap((p) => (p.stages ?? []).filter((s) => !s.archived).map((s) => option(s.id, s.label)));
  const seen = new Set<string>();
  return all.filter((o) => !seen.has(o.value) && seen.add(o.value));
}

/** One HubSpot property as a field definition; `pipelines` are the object's, for its pipeline and stage properties. */
export function hubspotFieldDefinition(p: HubSpotProperty, pipelines: readonly HubSpotPipeline[] = []): FieldDefinition {
  const readOnly = p.modificationMetadata?.readOnlyValue === true || p.calculated === true ? { readOnly: true } : {};
  switch (p.type) {
    case 'number':
      return { type: 'number', ...readOnly };
    case 'bool':
      return { type: 'boolean', ...readOnly };
    case 'date':
      return { type: 'date', ...readOnly };
    case 'datetime':
      return { type: 'datetime', ...readOnly };
    case 'phone_number':
      return { type: 'phone', ...readOnly };
    case 'enumeration': {
      if (p.fieldType === 'booleancheckbox') return { type: 'boolean', ...readOnly };
      const pipelineKind = PIPELINE_PROPERTIES[p.name];
      if (p.externalOptions && !pipelineKind) return { type: 'string', ...readOnly };
      // A hidden option is hidden from HubSpot's forms, not refused in a write: kept, marked.
      const options = p.externalOptions ? pipelineOptions(pipelineKind!, pipelines) : (p.options ?? []).map((o) => option(o.value, o.label, o.hidden === true));
      return { type: 'enumeration', options, ...(p.fieldType === 'checkbox' ? { multiple: true } : {}), ...readOnly };
    }
    default:
      return { type: 'string', ...readOnly };
  }
}

async function getJson(client: HubSpotRawClient, path: string): Promise<unknown> {
  try {
    return await readJsonAnswer(await client.apiRequest({ method: 'GET', path }), `GET ${path}`);
  } catch (err) {
    throw err instanceof CrmError ? err : classifyHubSpotError(err);
  }
}

const resultsOf = <T>(body: unknown): T[] => {
  const results = (body as { results?: unknown } | undefined)?.results;
  return Array.isArray(results) ? (results as T[]) : [];
};

/**
 * The definitions of every configured object's allowlisted fields: one properties read per object
 * type, and one pipelines read per object type that allowlists a pipeline or stage property.
 * Fields the portal does not have are left out; `pulledAt` is the UTC day `now` falls on.
 */
export async function pullHubSpotFields(hs: HubSpotConfig, options: { client: HubSpotRawClient; now: Date }): Promise<FieldDefinitionsFile> {
  const properties = new Map<string, Promise<Map<string, HubSpotProperty>>>();
  const pipelines = new Map<string, Promise<HubSpotPipeline[]>>();
  const propertiesOf = (objectType: string) => {
    if (!properties.has(objectType)) {
      properties.set(objectType, getJson(options.client, `/crm/v3/properties/${encodeURIComponent(objectType)}`).then((b) => new Map(resultsOf<HubSpotProperty>(b).map((p) => [p.name, p]))));
    }
    return properties.get(objectType)!;
  };
  const pipelinesOf = (objectType: string) => {
    if (!pipelines.has(objectType)) pipelines.set(objectType, getJson(options.client, `/crm/v3/pipelines/${encodeURIComponent(objectType)}`).then((b) => resultsOf<HubSpotPipeline>(b)));
    return pipelines.get(objectType)!;
  };
  const objects: FieldDefinitionsFile['objects'] = {};
  // One object at a time: the reads stay sequential and their count predictable.
  for (const [object, spec] of Object.entries(hs.objects)) {
    const byName = await propertiesOf(spec.objectType);
    const fields: Record<string, FieldDefinition> = {};
    for (const field of spec.fields) {
      const p = byName.get(field);
      if (!p) continue;
      const needsPipelines = p.type === 'enumeration' && p.externalOptions === true && PIPELINE_PROPERTIES[p.name] !== undefined;
      fields[field] = hubspotFieldDefinition(p, needsPipelines ? await pipelinesOf(spec.objectType) : []);
    }
    objects[object] = fields;
  }
  return { crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: options.now.toISOString().slice(0, 10), objects };
}
