/**
 * The collection body as text: a number field's exact decimal text goes out as a bare JSON
 * number, everything else as JSON.stringify writes it, and the body is always valid JSON.
 */
import { describe, expect, it } from 'vitest';
import { collectionBody, numericFields, recordJson } from '../../../adapters/salesforce/salesforce-requests.js';

const numeric = numericFields({ Amount: { type: 'number', precision: 18, scale: 2 }, Seats__c: { type: 'integer' }, Phone: { type: 'phone' }, Name: { type: 'string' } });

describe('recordJson / collectionBody', () => {
  it('takes number and integer fields from the definitions', () => {
    expect([...numeric].sort()).toEqual(['Amount', 'Seats__c']);
    expect(numericFields(undefined).size).toBe(0);
  });

  it.each([
    ['Amount', '1234567890123456.78', '1234567890123456.78'],
    ['Amount', '-0.50', '-0.50'],
    ['Seats__c', '12345678901234567890', '12345678901234567890'],
    ['Amount', 48000, '48000'],
    ['Amount', '+5', '"+5"'],
    ['Amount', '12k', '"12k"'],
    ['Amount', '1e3', '"1e3"'],
    ['Amount', null, 'null'],
    ['Phone', '0123456789', '"0123456789"'],
    ['Name', '42', '"42"'],
  ])('writes %s %j as %s', (field, value, json) => {
    const text = recordJson('Opportunity', { [field]: value }, numeric);
    expect(text).toBe(`{${JSON.stringify(field)}:${json},"attributes":{"type":"Opportunity"}}`);
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it('is JSON.stringify\'s body when no number is held as text, and keeps references nested', () => {
    const records = [{ Name: 'Acme', Amount: 5, Account: { AI_External_Id__c: 'acme' }, AI_External_Id__c: 'd-1' }, { Name: 'B', Amount: null, AI_External_Id__c: 'd-2' }];
    expect(collectionBody('Opportunity', records, numeric)).toBe(JSON.stringify({ allOrNone: false, records: records.map((r) => ({ ...r, attributes: { type: 'Opportunity' } })) }));
    expect(collectionBody('Opportunity', [])).toBe('{"allOrNone":false,"records":[]}');
  });
});
