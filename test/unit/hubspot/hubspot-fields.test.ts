import { describe, expect, it } from 'vitest';
import type { HubSpotObjectConfig } from '../../../adapters/hubspot/hubspot-config.js';
import type { FieldDefinition } from '../../../schemas/field-definitions.js';
import { hubspotEngineDefinitions, hubspotFieldDefinition, type HubSpotProperty } from '../../../adapters/hubspot/hubspot-fields.js';

const prop = (p: Partial<HubSpotProperty>): HubSpotProperty => ({ name: 'x', type: 'string', fieldType: 'text', ...p });

describe('hubspotFieldDefinition', () => {
  it.each([
    ['string / text', prop({}), { type: 'string' }],
    ['string / textarea', prop({ fieldType: 'textarea' }), { type: 'string' }],
    ['number', prop({ type: 'number', fieldType: 'number' }), { type: 'number' }],
    ['bool', prop({ type: 'bool', fieldType: 'booleancheckbox' }), { type: 'boolean' }],
    ['enumeration / booleancheckbox', prop({ type: 'enumeration', fieldType: 'booleancheckbox', options: [{ value: 'true' }, { value: 'false' }] }), { type: 'boolean' }],
    ['date', prop({ type: 'date', fieldType: 'date' }), { type: 'date' }],
    ['datetime', prop({ type: 'datetime', fieldType: 'date' }), { type: 'datetime' }],
    ['phone_number', prop({ type: 'phone_number', fieldType: 'phonenumber' }), { type: 'phone' }],
    ['json (unknown)', prop({ type: 'json' }), { type: 'string' }],
    ['object_coordinates (unknown)', prop({ type: 'object_coordinates' }), { type: 'string' }],
    ['owner (external options, not a pipeline)', prop({ name: 'hubspot_owner_id', type: 'enumeration', fieldType: 'select', externalOptions: true, options: [] }), { type: 'string' }],
    ['calculated', prop({ type: 'number', calculated: true }), { type: 'number', readOnly: true }],
    ['readOnlyValue', prop({ modificationMetadata: { readOnlyValue: true } }), { type: 'string', readOnly: true }],
    [
      'enumeration / radio, hidden option kept and marked (HubSpot takes its value), label kept',
      prop({ type: 'enumeration', fieldType: 'radio', options: [{ value: 'a', label: 'A', hidden: false }, { value: 'b', label: 'B', hidden: true }, { value: 'c', label: '' }] }),
      { type: 'enumeration', options: [{ value: 'a', label: 'A' }, { value: 'b', label: 'B', hidden: true }, { value: 'c' }] },
    ],
    ['enumeration / checkbox', prop({ type: 'enumeration', fieldType: 'checkbox', options: [{ value: 'a', label: 'A' }] }), { type: 'enumeration', options: [{ value: 'a', label: 'A' }], multiple: true }],
  ])('maps %s', (_what, p, expected) => {
    expect(hubspotFieldDefinition(p)).toEqual(expected);
  });

  const pipelines = [
    { id: 'default', label: 'Sales Pipeline', stages: [{ id: 'appointmentscheduled', label: 'Appointment Scheduled' }, { id: 'old', label: 'Old', archived: true }] },
    { id: 'gone', label: 'Gone', archived: true, stages: [{ id: 'gone_stage', label: 'Gone' }] },
    { id: '77', label: 'Renewals', stages: [{ id: '1001', label: 'Renewal due' }] },
  ];
  it('gives dealstage the live stages of every live pipeline, each with its pipeline, and pipeline the live pipeline ids', () => {
    expect(hubspotFieldDefinition(prop({ name: 'dealstage', type: 'enumeration', fieldType: 'radio', externalOptions: true, options: [] }), pipelines)).toEqual({
      type: 'enumeration', pipelineField: 'pipeline',
      options: [{ value: 'appointmentscheduled', label: 'Appointment Scheduled', pipeline: 'default' }, { value: '1001', label: 'Renewal due', pipeline: '77' }],
    });
    expect(hubspotFieldDefinition(prop({ name: 'hs_pipeline_stage', type: 'enumeration', fieldType: 'select', externalOptions: true, options: [] }), pipelines)).toMatchObject({
      pipelineField: 'hs_pipeline', options: [{ value: 'appointmentscheduled', pipeline: 'default' }, { value: '1001', pipeline: '77' }],
    });
    expect(hubspotFieldDefinition(prop({ name: 'pipeline', type: 'enumeration', fieldType: 'select', externalOptions: true, options: [] }), pipelines)).toEqual({
      type: 'enumeration', options: [{ value: 'default', label: 'Sales Pipeline' }, { value: '77', label: 'Renewals' }],
    });
  });

  it.each([
    ['a contact\'s email', 'contacts', prop({ name: 'email' }), { type: 'email' }],
    ['a contact\'s email, by object type id', '0-1', prop({ name: 'email' }), { type: 'email' }],
    ['a contact\'s read-only email', 'contacts', prop({ name: 'email', modificationMetadata: { readOnlyValue: true } }), { type: 'email', readOnly: true }],
    ['a contact\'s additional emails (a list HubSpot manages)', 'contacts', prop({ name: 'hs_additional_emails', fieldType: 'textarea' }), { type: 'string' }],
    ['a company property named email', 'companies', prop({ name: 'email' }), { type: 'string' }],
  ])('maps %s', (_what, objectType, p, expected) => {
    expect(hubspotFieldDefinition(p, [], objectType)).toEqual(expected);
  });
});

describe('hubspotEngineDefinitions', () => {
  const objects: Record<string, HubSpotObjectConfig> = {
    contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'] },
    company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['email', 'name'] },
    lead: { kind: 'record', objectType: '0-1', idProperty: 'ai_external_id', fields: ['firstname'] },
  };
  const file = (email: FieldDefinition) => ({ crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-11-01', objects: { contact: { email, firstname: { type: 'string' as const } } } });

  it('checks an allowlisted contact email as an address with no file, and nothing else', () => {
    expect(hubspotEngineDefinitions(objects)).toEqual({ objects: { contact: { email: { type: 'email' } } } });
    expect(hubspotEngineDefinitions({ lead: objects.lead! })).toBeUndefined();
  });

  it('turns a file\'s `string` contact email (pulled before) into an address, keeping its length, and leaves the rest of the file as it is', () => {
    expect(hubspotEngineDefinitions(objects, file({ type: 'string', maxLength: 254 }))).toEqual({
      objects: { contact: { email: { type: 'email', maxLength: 254 }, firstname: { type: 'string' } } },
    });
    expect(hubspotEngineDefinitions(objects, file({ type: 'email', readOnly: true }))!.objects.contact!.email).toEqual({ type: 'email', readOnly: true });
  });
});
