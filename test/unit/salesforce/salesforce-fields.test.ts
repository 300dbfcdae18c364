import { describe, expect, it } from 'vitest';
import { fieldDefinitionOf, pullSalesforceFields, type DescribeField } from '../../../adapters/salesforce/salesforce-fields.js';
import { recordError, unparsableValue } from '../../../adapters/salesforce/salesforce-errors.js';
import { unparsable, valueRefusal } from '../../../adapters/salesforce/fake/salesforce-fake-values.js';
import { CrmError, CrmErrorKind } from '../../../src/errors.js';

const field = (type: string, extra: Partial<DescribeField> = {}): DescribeField => ({ name: 'F', type, createable: true, updateable: true, ...extra });

describe('fieldDefinitionOf (Salesforce describe -> field definition)', () => {
  it.each<[string, DescribeField, unknown]>([
    ['string', field('string', { length: 40 }), { type: 'string', maxLength: 40 }],
    ['textarea', field('textarea', { length: 32000 }), { type: 'string', maxLength: 32000 }],
    ['combobox', field('combobox', { length: 255, picklistValues: [{ value: 'Call', active: true }] }), { type: 'string', maxLength: 255 }],
    ['email', field('email', { length: 80 }), { type: 'email', maxLength: 80 }],
    ['phone', field('phone', { length: 40 }), { type: 'phone', maxLength: 40 }],
    ['url', field('url', { length: 255 }), { type: 'url', maxLength: 255 }],
    ['double', field('double'), { type: 'number' }],
    ['currency', field('currency'), { type: 'number' }],
    ['percent', field('percent'), { type: 'number' }],
    ['currency(18, 2)', field('currency', { precision: 18, scale: 2 }), { type: 'number', precision: 18, scale: 2 }],
    ['double(16, 0)', field('double', { precision: 16, scale: 0 }), { type: 'number', precision: 16, scale: 0 }],
    ['percent(3, 2)', field('percent', { precision: 3, scale: 2 }), { type: 'number', precision: 3, scale: 2 }],
    ['string with describe\'s zero precision', field('string', { length: 40, precision: 0, scale: 0 }), { type: 'string', maxLength: 40 }],
    ['int', field('int'), { type: 'integer' }],
    ['boolean', field('boolean'), { type: 'boolean' }],
    ['date', field('date'), { type: 'date' }],
    ['datetime', field('datetime'), { type: 'datetime' }],
    ['reference', field('reference', { length: 18 }), { type: 'string' }],
    ['time', field('time'), { type: 'string' }],
    ['read-only formula', field('double', { createable: false, updateable: false }), { type: 'number', readOnly: true }],
    ['create-only', field('string', { length: 10, updateable: false }), { type: 'string', maxLength: 10 }],
  ])('%s', (_name, describe, expected) => {
    expect(fieldDefinitionOf(describe)).toEqual(expected);
  });

  it('keeps the active picklist values in order, with labels, and says whether the picklist is restricted', () => {
    const values = [{ value: 'B', label: 'Bee', active: true }, { value: 'Old', label: 'Old', active: false }, { value: 'A', label: null, active: true }];
    expect(fieldDefinitionOf(field('picklist', { picklistValues: values, restrictedPicklist: true }))).toEqual({
      type: 'enumeration', restricted: true, options: [{ value: 'B', label: 'Bee' }, { value: 'A', label: 'A' }],
    });
    expect(fieldDefinitionOf(field('picklist', { picklistValues: values }))).toMatchObject({ restricted: false });
    expect(fieldDefinitionOf(field('multipicklist', { picklistValues: values, restrictedPicklist: false }))).toMatchObject({ type: 'enumeration', multiple: true, restricted: false });
  });

  it('describes each sObject once and leaves out fields the org does not have', async () => {
    const asked: string[] = [];
    const file = await pullSalesforceFields(
      { objects: {
        note: { kind: 'activity', sobject: 'Task', externalIdField: 'K__c', fields: ['Subject', 'Gone__c'], parents: {} },
        task: { kind: 'activity', sobject: 'Task', externalIdField: 'K__c', fields: ['Subject'], parents: {} },
      } },
      async (sobject) => {
        asked.push(sobject);
        return { fields: [field('string', { name: 'Subject', length: 255 })] };
      },
      { now: new Date('2026-12-31T23:30:00-05:00'), apiVersion: '61.0' },
    );
    expect(asked).toEqual(['Task']);
    expect(file).toEqual({ crm: 'salesforce', apiVersion: '61.0', pulledAt: '2027-01-01', objects: { note: { Subject: { type: 'string', maxLength: 255 } }, task: { Subject: { type: 'string', maxLength: 255 } } } });
  });
});

describe('recordError naming a refused value', () => {
  it('names sObject, field, value and code, and points at schema pull', () => {
    const e = recordError([{ statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', message: 'Status: bad value for restricted picklist field: done', fields: ['Status'] }], { sobject: 'Task', record: { Status: 'done' } });
    expect(e.message).toBe('[crm-upsert] [salesforce] Task.Status = "done" refused: INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST: Status: bad value for restricted picklist field: done; the field definitions may be stale or missing: run crm-upsert schema pull');
    expect(e).toMatchObject({ vendorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', kind: CrmErrorKind.permanent });
  });

  it('cuts a long value and keeps its length', () => {
    const long = 'x'.repeat(40_000);
    const e = recordError([{ statusCode: 'STRING_TOO_LONG', message: `Comments: data value too large: ${long} (max length=32000)`, fields: ['Description'] }], { sobject: 'Task', record: { Description: long } });
    expect(e.message.length).toBeLessThan(700);
    expect(e.message).toContain('(40002 characters)');
  });

  it('keeps the plain form for errors that are not about a value', () => {
    const e = recordError([{ statusCode: 'DUPLICATE_VALUE', message: 'duplicate value found', fields: ['Ext__c'] }], { sobject: 'Contact', record: { Ext__c: 'a' } });
    expect(e.message).toBe('[crm-upsert] [salesforce] DUPLICATE_VALUE: duplicate value found [Ext__c]');
  });
});

describe('unparsableValue', () => {
  const parserError = (message: string) => new CrmError(`Salesforce rejected the request: JSON_PARSER_ERROR: ${message}`, { vendor: 'salesforce', kind: CrmErrorKind.permanent, vendorCode: 'JSON_PARSER_ERROR' });
  it.each([
    ['Cannot deserialize instance of date from VALUE_STRING value 12/01/2026 or request may be missing a required field at [line:1, column:88]', { type: 'date', value: '12/01/2026', column: 88 }],
    ['Cannot deserialize instance of datetime from VALUE_STRING value "2013-08-12T15:20:00+0000" at [line:1, column:179]', { type: 'datetime', value: '2013-08-12T15:20:00+0000', column: 179 }],
    ['Cannot deserialize instance of date from VALUE_NUMBER_INT value 20261201 or request may be missing a required field at [line:1, column:40]', { type: 'date', value: '20261201', column: 40 }],
    ['Cannot deserialize instance of date from VALUE_STRING value 1/2/26 or request may be missing a required field at [line:11, column:55]', { type: 'date', value: '1/2/26' }],
    ["No such column 'Legacy__c' on sobject of type Contact at [line:1, column:23]", undefined],
  ])('%s', (message, expected) => {
    expect(unparsableValue(parserError(message))).toEqual(expected);
  });
});

describe('fakeSalesforce value rules', () => {
  const status = { type: 'picklist' as const, restrictedPicklist: true, picklistValues: [{ value: 'Open' }, { value: 'Gone', active: false }] };
  it.each<[string, Parameters<typeof valueRefusal>[1], unknown, string | undefined]>([
    ['an active value', status, 'Open', undefined],
    ['an inactive value', status, 'Gone', 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST'],
    ['another case', status, 'open', 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST'],
    ['anything in an unrestricted picklist', { ...status, restrictedPicklist: false }, 'Whatever', undefined],
    ['each value of a multi-select', { ...status, type: 'multipicklist' }, 'Open;Nope', 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST'],
    ['text at its length', { type: 'string', length: 3 }, 'abc', undefined],
    ['text over its length', { type: 'string', length: 3 }, 'abcd', 'STRING_TOO_LONG'],
    ['a text area at 32,000', { type: 'textarea' }, 'x'.repeat(32_000), undefined],
  ])('%s', (_name, rules, value, code) => {
    expect(valueRefusal('F', rules, value)?.statusCode).toBe(code);
  });

  it.each<[string, 'date' | 'datetime', unknown, boolean]>([
    ['a day', 'date', '2026-12-01', true],
    ['a day with a time', 'date', '2026-12-01T00:00:00Z', true],
    ['US order', 'date', '12/01/2026', false],
    ['no such day', 'date', '2026-02-30', false],
    ['a number', 'date', 20261201, false],
    ['a date-time in UTC', 'datetime', '2026-12-01T09:30:00.000Z', true],
    ['a date-time with an offset', 'datetime', '2026-12-01T09:30:00+01:00', true],
    ['a space instead of T', 'datetime', '2026-12-01 09:30:00', false],
  ])('%s for a %s field', (_name, type, value, readable) => {
    expect(unparsable({ type }, value, 1) === undefined).toBe(readable);
  });
});
