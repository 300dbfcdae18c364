import { describe, expect, it } from 'vitest';
import { fieldDefinitionsFileSchema, type FieldDefinition } from '../../schemas/field-definitions.js';
import { checkStage, isPipelineStageField } from '../../schemas/pipeline-stages.js';
import { matchingOptions } from '../../schemas/field-definitions.js';
import { checkValues } from '../../schemas/values.js';

const stage = (value: string, label: string, pipeline: string) => ({ value, label, pipeline });
const pipeline: FieldDefinition = { type: 'enumeration', options: [{ value: 'default', label: 'Sales Pipeline' }, { value: 'renewals', label: 'Renewals' }] };
const dealstage: FieldDefinition = {
  type: 'enumeration', pipelineField: 'pipeline',
  options: [
    stage('appointmentscheduled', 'Appointment Scheduled', 'default'), stage('closedwon', 'Closed Won', 'default'), stage('closedlost', 'Closed Lost', 'default'),
    stage('renewal_open', 'Renewal due', 'renewals'), stage('renewal_won', 'Closed Won', 'renewals'),
  ],
};
const defs = { pipeline, dealstage };
/** A file pulled before stages kept their pipeline: one merged list. */
const oldDefs = { pipeline, dealstage: { type: 'enumeration', options: dealstage.options!.map((o) => (typeof o === 'string' ? o : { value: o.value, label: o.label })) } satisfies FieldDefinition };

const RENEWAL_STAGES = '"renewal_open" (Renewal due), "renewal_won" (Closed Won)';

describe('pipeline stages: a stage resolved within the action\'s pipeline', () => {
  it.each([
    ['a label two pipelines have, with the pipeline', { dealstage: 'Closed Won', pipeline: 'renewals' }, { dealstage: 'renewal_won', pipeline: 'renewals' }],
    ['the same label in the other pipeline', { dealstage: 'Closed Won', pipeline: 'default' }, { dealstage: 'closedwon', pipeline: 'default' }],
    ['the pipeline by its label, the stage ignoring case', { dealstage: ' closed won', pipeline: 'Renewals' }, { dealstage: 'renewal_won', pipeline: 'renewals' }],
    ['a stage id alone (an update setting the stage only), unique across pipelines', { dealstage: 'renewal_won' }, { dealstage: 'renewal_won' }],
    ['a label alone that one pipeline has', { dealstage: 'Renewal due' }, { dealstage: 'renewal_open' }],
    ['a stage id alone from the default pipeline', { dealstage: 'closedwon' }, { dealstage: 'closedwon' }],
    ['a stage id with its own pipeline', { dealstage: 'closedlost', pipeline: 'default' }, { dealstage: 'closedlost', pipeline: 'default' }],
  ])('resolves %s', (_what, fields, expected) => {
    const r = checkValues(fields, defs);
    expect(r.issues).toEqual([]);
    expect(r.fields).toEqual(expected);
  });

  it.each([
    ['a label two pipelines have, without a pipeline', { dealstage: 'Closed Won' }, 'fields.dealstage',
      '"Closed Won" is a stage of 2 pipelines ("closedwon" in "default" (Sales Pipeline), "renewal_won" in "renewals" (Renewals)): send pipeline with it to say which, or the stage\'s id'],
    ['a stage id outside the given pipeline', { dealstage: 'closedwon', pipeline: 'renewals' }, 'fields.dealstage',
      `"closedwon" is not a stage of pipeline "renewals" (Renewals) (it is a stage of "default" (Sales Pipeline)); its stages: ${RENEWAL_STAGES}`],
    ['a stage outside the pipeline given by its label', { dealstage: 'Closed Lost', pipeline: 'Renewals' }, 'fields.dealstage',
      `"Closed Lost" is not a stage of pipeline "renewals" (Renewals) (it is a stage of "default" (Sales Pipeline)); its stages: ${RENEWAL_STAGES}`],
    ['a stage no pipeline has, with a pipeline', { dealstage: 'Won!!', pipeline: 'renewals' }, 'fields.dealstage',
      `"Won!!" is not a stage of pipeline "renewals" (Renewals); its stages: ${RENEWAL_STAGES}`],
    ['a stage no pipeline has, without one (the plain enumeration check)', { dealstage: 'Won!!' }, 'fields.dealstage',
      '"Won!!" is not an allowed value; allowed: "appointmentscheduled", "closedwon", "closedlost", "renewal_open", "renewal_won"'],
    ['an unknown pipeline (refused once, on the pipeline)', { dealstage: 'renewal_won', pipeline: 'nope' }, 'fields.pipeline',
      '"nope" is not an allowed value; allowed: "default", "renewals"'],
  ])('refuses %s', (_what, fields, path, message) => {
    expect(checkValues(fields, defs).issues).toEqual([{ path, message }]);
  });

  it('says which stages a label names when one pipeline has it twice', () => {
    const twice: FieldDefinition = { ...dealstage, options: [...dealstage.options!, stage('closedwon_old', 'Closed Won', 'default')] };
    expect(checkStage(twice, 'Closed Won', { pipeline: 'default' }, { ...defs, dealstage: twice }, true)).toEqual({
      ok: false, reason: '"Closed Won" names 2 stages of pipeline "default" (Sales Pipeline): "closedwon", "closedwon_old"; send the stage\'s id',
    });
    const onlyDefault: FieldDefinition = { ...twice, options: twice.options!.filter((o) => typeof o !== 'string' && o.pipeline === 'default') };
    expect(checkStage(onlyDefault, 'Closed Won', {}, { ...defs, dealstage: onlyDefault }, true)).toEqual({
      ok: false, reason: '"Closed Won" names 2 stages ("closedwon" in "default" (Sales Pipeline), "closedwon_old" in "default" (Sales Pipeline)): send the stage\'s id',
    });
  });

  it('without normalize takes only the stage\'s and the pipeline\'s ids', () => {
    expect(checkValues({ dealstage: 'renewal_won', pipeline: 'renewals' }, defs, false).issues).toEqual([]);
    expect(checkValues({ dealstage: 'Closed Won', pipeline: 'renewals' }, defs, false).issues).toEqual([
      { path: 'fields.dealstage', message: `"Closed Won" is not a stage of pipeline "renewals" (Renewals); its stages: ${RENEWAL_STAGES}` },
    ]);
  });

  it('resolves within the pipeline when the pipeline field has no definition, its ids taken from the stages', () => {
    expect(checkValues({ dealstage: 'Closed Won', pipeline: 'renewals' }, { dealstage }).fields).toEqual({ dealstage: 'renewal_won', pipeline: 'renewals' });
    expect(checkValues({ dealstage: 'Closed Won', pipeline: 'x' }, { dealstage }).issues).toEqual([
      { path: 'fields.dealstage', message: 'pipeline "x" is not a pipeline of this stage; pipelines: "default", "renewals"' },
    ]);
  });

  it('leaves a file of the old shape (one merged list) to the plain check, which still loads', () => {
    const file = { crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-11-01', objects: { deal: oldDefs } };
    expect(fieldDefinitionsFileSchema.parse(file)).toEqual(file);
    expect(isPipelineStageField(oldDefs.dealstage)).toBe(false);
    expect(checkStage(oldDefs.dealstage, 'Closed Won', { pipeline: 'renewals' }, oldDefs, true)).toBeUndefined();
    // Two options of the merged list share the label: refused as ambiguous, never the first one's id.
    const old = checkValues({ dealstage: 'Closed Won', pipeline: 'renewals' }, oldDefs);
    expect(old.issues).toHaveLength(1);
    expect(old.issues[0]!.message).toMatch(/"Closed Won" matches more than one option: "closedwon" \(Closed Won\), "renewal_won" \(Closed Won\)/);
    expect(checkValues({ dealstage: 'renewal_won', pipeline: 'renewals' }, oldDefs).fields).toEqual({ dealstage: 'renewal_won', pipeline: 'renewals' });
  });

  it('loads the new shape: a stage\'s pipeline and the field holding the pipeline', () => {
    const file = { crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-12-05', objects: { deal: defs } };
    expect(fieldDefinitionsFileSchema.parse(file).objects.deal!.dealstage).toEqual(dealstage);
    expect(fieldDefinitionsFileSchema.safeParse({ ...file, objects: { deal: { dealstage: { ...dealstage, pipelineField: '' } } } }).success).toBe(false);
  });

  it('leaves null, read-only and a non-text value to the plain check', () => {
    expect(checkStage(dealstage, null, {}, defs, true)).toBeUndefined();
    expect(checkStage({ ...dealstage, readOnly: true }, 'closedwon', {}, defs, true)).toBeUndefined();
    expect(checkStage(dealstage, true, {}, defs, true)).toBeUndefined();
    expect(checkValues({ dealstage: null, pipeline: 'renewals' }, defs).fields).toEqual({ dealstage: null, pipeline: 'renewals' });
  });

  it('matches as the enumeration matcher does: exact value, exact label, then either ignoring case', () => {
    const options = [{ value: 'won', label: 'Lost' }, { value: 'lost', label: 'won' }, { value: 'Draft', label: 'x' }];
    expect(matchingOptions(options, 'won', true).map((o) => o.value)).toEqual(['won']);
    expect(matchingOptions(options, 'Lost', true).map((o) => o.value)).toEqual(['won']);
    expect(matchingOptions(options, 'draft', true).map((o) => o.value)).toEqual(['Draft']);
    expect(matchingOptions(options, 'WON', true).map((o) => o.value)).toEqual(['won']);
    expect(matchingOptions(options, 'Lost', false)).toEqual([]);
  });
});
