import { describe, expect, it } from 'vitest';
import { hubspotFieldDefinition, type HubSpotProperty } from '../../../adapters/hubspot/hubspot-fields.js';

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
  it('gives dealstage the live stages of every live pipeline and pipeline the live pipeline ids', () => {
    expect(hubspotFieldDefinition(prop({ name: 'dealstage', type: 'enumeration', fieldType: 'radio', externalOptions: true, options: [] }), pipelines)).toEqual({
      type: 'enumeration', options: [{ value: 'appointmentscheduled', label: 'Appointment Scheduled' }, { value: '1001', label: 'Renewal due' }],
    });
    expect(hubspotFieldDefinition(prop({ name: 'pipeline', type: 'enumeration', fieldType: 'select', externalOptions: true, options: [] }), pipelines)).toEqual({
      type: 'enumeration', options: [{ value: 'default', label: 'Sales Pipeline' }, { value: '77', label: 'Renewals' }],
    });
  });
});
