/**
 * `crm-upsert schema pull` for HubSpot: the configured objects' allowlisted properties, read with
 * GET /crm/v3/properties/{objectType} and translated into field definitions (crm-upsert.fields.json).
 *
 * `dealstage` and `pipeline` (and a ticket's `hs_pipeline_stage` / `hs_pipeline`) have
 * `externalOptions: true` and list no options: their values are the ids of GET
 * /crm/v3/pipelines/{objectType}, so they are read from there. Taking the empty `options` at its
 * word would refuse every stage (botpress/botpress#15354). Each stage keeps the id of its pipeline
 * and the stage field names its pipeline field: two pipelines may each have a "Closed Won", and
 * a stage is only valid in its own pipeline (schemas/pipeline-stages.ts). Other external lists
 * (owners) are not read: such a property is a string, checked by HubSpot alone. An option HubSpot
 * marks `hidden` is kept, marked `hidden: true`: HubSpot hides it from forms but takes its value
 * in a write.
 *
 * A contact's `email` is typed `string`, but HubSpot refuses anything that is not an address
 * (INVALID_EMAIL): it is defined as an `email`, trimmed and checked before anything is sent.
 * `hs_additional_emails` stays as HubSpot describes it: a `;`-joined list HubSpot manages itself.
 */
import type { FieldDefinition, FieldDefinitionsFile, FieldOption } from '../../schemas/field-definitions.js';
import { CrmError } from '../../src/errors.js';
import type { RawResponse } from './hubspot-client.js';
import type { HubSpotConfig, HubSpotObjectConfig } from './hubspot-config.js';
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
/** Each stage property's pipeline property. */
const PIPELINE_OF_STAGE: Record<string, string> = { dealstage: 'pipeline', hs_pipeline_stage: 'hs_pipeline' };

/** The object types whose `email` property holds the record's email address (contacts, by name and by id). */
const EMAIL_OBJECT_TYPES = new Set(['contacts', 'contact', '0-1']);

/** Whether HubSpot checks `name` of `objectType` as an email address although its type is `string`. */
export const isHubSpotEmail = (objectType: string | undefined, name: string): boolean =>
  name === 'email' && objectType !== undefined && EMAIL_OBJECT_TYPES.has(objectType.toLowerCase());

const option = (value: string, label: string | undefined, hidden = false): FieldOption => ({ value, ...(label !== undefined && label !== '' ? { label } : {}), ...(hidden ? { hidden: true } : {}) });

/** Pipeline ids, or stage ids with their pipeline's id, of the live pipelines in HubSpot's order (labels kept). */
function pipelineOptions(kind: 'pipeline' | 'stage', pipelines: readonly HubSpotPipeline[]): FieldOption[] {
  const live = pipelines.filter((p) => !p.archived);
  if (kind === 'pipeline') {
    const seen = new Set<string>();
    return live.map((p) => option(p.id, p.label)).filter((o) => !seen.has(o.value) && seen.add(o.value));
  }
  return live.flatMap((p) => (p.stages ?? []).filter((s) => !s.archived).map((s) => ({ ...option(s.id, s.label), pipeline: p.id })));
}

/**
 * One HubSpot property as a field definition; `pipelines` are the object's, for its pipeline and
 * stage properties; `objectType` tells a contact's `email` (an address) from any other string.
 */
export function hubspotFieldDefinition(p: HubSpotProperty, pipelines: readonly HubSpotPipeline[] = [], objectType?: string): FieldDefinition {
  const readOnly = p.modificationMetadata?.readOnlyValue === true || p.calculated === true ? { readOnly: true } : {};
  if (isHubSpotEmail(objectType, p.name) && (p.type === 'string' || p.type === undefined)) return { type: 'email', ...readOnly };
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
      const stageOf = p.externalOptions && pipelineKind === 'stage' ? { pipelineField: PIPELINE_OF_STAGE[p.name]! } : {};
      return { type: 'enumeration', options, ...(p.fieldType === 'checkbox' ? { multiple: true } : {}), ...stageOf, ...readOnly };
    }
    default:
      return { type: 'string', ...readOnly };
  }
}

/**
 * The definitions the engine checks values against: the pulled file's, with a contact's allowlisted
 * `email` an email address even when no file is loaded or the file (pulled before) says `string`.
 * HubSpot refuses any other value, taking its batch with it, so this check costs nothing it would
 * have accepted. Definitions written by hand in the config still win (engineObjects).
 */
export function hubspotEngineDefinitions(objects: Readonly<Record<string, HubSpotObjectConfig>>, file?: FieldDefinitionsFile): Pick<FieldDefinitionsFile, 'objects'> | undefined {
  const out: FieldDefinitionsFile['objects'] = { ...file?.objects };
  for (const [name, c] of Object.entries(objects)) {
    if (!c.fields.includes('email') || !isHubSpotEmail(c.objectType, 'email')) continue;
    const pulled = out[name]?.email;
    if (pulled && pulled.type !== 'string') continue;
    out[name] = { ...out[name], email: { ...pulled, type: 'email' } };
  }
  return Object.keys(out).length > 0 ? { objects: out } : undefined;
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
      fields[field] = hubspotFieldDefinition(p, needsPipelines ? await pipelinesOf(spec.objectType) : [], spec.objectType);
    }
    objects[object] = fields;
  }
  return { crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: options.now.toISOString().slice(0, 10), objects };
}
