/**
 * Pipeline stages: a stage field (HubSpot `dealstage`, a ticket's `hs_pipeline_stage`) whose
 * definition names its `pipelineField` and whose options carry their pipeline's id. Two pipelines
 * may each have a "Closed Won" (`closedwon`, `renewal_won`): a stage is resolved within the
 * pipeline the action gives (its id or, normalizing, its label), and refused when it is not one of
 * that pipeline's stages. Without a pipeline in the action, a stage id (or a label only one
 * pipeline has) names its stage; a label several pipelines have is refused, naming them.
 *
 * Pure: the action's fields and the object's definitions in, a verdict out. A definition without
 * pipelines on its options (a file pulled before they were kept) is left to the plain check.
 */
import { matchingOptions, type FieldDefinition } from './field-definitions.js';

export type StageResult = { ok: true; value: string } | { ok: false; reason: string };

interface Option {
  value: string;
  label?: string;
  pipeline?: string;
}

const SHOWN = 20;

const optionsOf = (d: FieldDefinition | undefined): Option[] => (d?.options ?? []).map((o) => (typeof o === 'string' ? { value: o } : o));

/** Whether `d` is a stage field whose options say which pipeline each belongs to. */
export const isPipelineStageField = (d: FieldDefinition): boolean =>
  d.type === 'enumeration' && d.pipelineField !== undefined && optionsOf(d).some((o) => o.pipeline !== undefined);

const distinctValues = (options: readonly Option[]) => [...new Set(options.map((o) => o.value))];

/** The pipeline ids a stage field's options name, in their order. */
const pipelineIds = (d: FieldDefinition) => [...new Set(optionsOf(d).flatMap((o) => (o.pipeline !== undefined ? [o.pipeline] : [])))];

type Pipeline = { given: false } | { given: true; id: string; label?: string } | { given: true; unknown: string; reported: boolean };

/** The pipeline the action gives beside the stage: by id, or (normalizing) by its label. */
function pipelineOf(d: FieldDefinition, fields: Readonly<Record<string, unknown>>, definitions: Readonly<Record<string, FieldDefinition>>, normalize: boolean): Pipeline {
  const raw = fields[d.pipelineField!];
  if (raw === undefined || raw === null || raw === '') return { given: false };
  const text = normalize && (typeof raw === 'string' || typeof raw === 'number') ? String(raw).trim() : raw;
  const own = Object.hasOwn(definitions, d.pipelineField!) && definitions[d.pipelineField!]!.type === 'enumeration' ? definitions[d.pipelineField!] : undefined;
  // Without a definition of the pipeline field, its ids are those the stages name.
  const pipelines: Option[] = own ? optionsOf(own) : pipelineIds(d).map((value) => ({ value }));
  const hits = typeof text === 'string' ? distinctValues(matchingOptions(pipelines, text, normalize)) : [];
  if (hits.length !== 1) return { given: true, unknown: typeof text === 'string' ? text : JSON.stringify(raw), reported: own !== undefined };
  const label = pipelines.find((p) => p.value === hits[0])?.label;
  return { given: true, id: hits[0]!, ...(label !== undefined ? { label } : {}) };
}

/** `"renewals" (Renewals)`: a pipeline as a message names it. */
const named = (id: string, label: string | undefined) => `${JSON.stringify(id)}${label !== undefined && label !== id ? ` (${label})` : ''}`;

/** The stages a message lists: the first 20 with their labels, and how many more. */
function stageList(stages: readonly Option[]): string {
  const shown = stages.slice(0, SHOWN).map((s) => named(s.value, s.label)).join(', ');
  return stages.length > SHOWN ? `${shown} (and ${stages.length - SHOWN} more)` : shown;
}

/**
 * One stage value against its pipeline. Returns undefined where pipelines change nothing (not a
 * stage field with pipelines, a null, not text, read-only, or no stage at all matches without a
 * pipeline): the plain check of values.ts then decides.
 */
export function checkStage(
  d: FieldDefinition,
  value: unknown,
  fields: Readonly<Record<string, unknown>>,
  definitions: Readonly<Record<string, FieldDefinition>>,
  normalize: boolean,
): StageResult | undefined {
  if (d.readOnly || !isPipelineStageField(d)) return undefined;
  const text = normalize && typeof value === 'number' ? String(value) : typeof value === 'string' ? (normalize ? value.trim() : value) : undefined;
  if (text === undefined) return undefined;
  const options = optionsOf(d);
  const labelOf = (id: string) => optionsOf(definitions[d.pipelineField!]).find((p) => p.value === id)?.label;
  const pipeline = pipelineOf(d, fields, definitions, normalize);
  if (pipeline.given && 'unknown' in pipeline) {
    // The pipeline field's own check names a pipeline it does not know; say it here only when nothing else will.
    if (pipeline.reported) return { ok: true, value: text };
    return { ok: false, reason: `${d.pipelineField} ${JSON.stringify(pipeline.unknown)} is not a pipeline of this stage; pipelines: ${pipelineIds(d).map((id) => named(id, labelOf(id))).join(', ')}` };
  }
  if (pipeline.given) {
    const stages = options.filter((o) => o.pipeline === pipeline.id);
    const hit = distinctValues(matchingOptions(stages, text, normalize));
    if (hit.length === 1) return { ok: true, value: hit[0]! };
    if (hit.length > 1) return { ok: false, reason: `${JSON.stringify(text)} names ${hit.length} stages of pipeline ${named(pipeline.id, pipeline.label)}: ${hit.map((v) => JSON.stringify(v)).join(', ')}; send the stage's id` };
    const elsewhere = [...new Set(matchingOptions(options, text, normalize).map((o) => o.pipeline).filter((p): p is string => p !== undefined))];
    const where = elsewhere.length > 0 ? ` (it is a stage of ${elsewhere.map((id) => named(id, labelOf(id))).join(', ')})` : '';
    return { ok: false, reason: `${JSON.stringify(text)} is not a stage of pipeline ${named(pipeline.id, pipeline.label)}${where}; its stages: ${stageList(stages)}` };
  }
  const hits = matchingOptions(options, text, normalize);
  const values = distinctValues(hits);
  if (values.length === 0) return undefined;
  if (values.length === 1) return { ok: true, value: values[0]! };
  const each = values.map((v) => {
    const p = hits.find((o) => o.value === v)?.pipeline;
    return `${JSON.stringify(v)}${p !== undefined ? ` in ${named(p, labelOf(p))}` : ''}`;
  });
  const pipelines = new Set(hits.map((o) => o.pipeline)).size;
  if (pipelines < 2) return { ok: false, reason: `${JSON.stringify(text)} names ${values.length} stages (${each.join(', ')}): send the stage's id` };
  return { ok: false, reason: `${JSON.stringify(text)} is a stage of ${pipelines} pipelines (${each.join(', ')}): send ${d.pipelineField} with it to say which, or the stage's id` };
}
