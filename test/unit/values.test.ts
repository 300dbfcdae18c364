/**
 * Field values against their definitions: the model's sloppy values that keep their meaning are
 * normalized to the CRM's form, the rest refused naming the field, the reason and (for an
 * enumeration) the allowed values. Without `normalize`, only values already in the CRM's form pass.
 */
import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../schemas/field-definitions.js';
import { allowedList, checkValues } from '../../schemas/values.js';

const defs: Record<string, FieldDefinition> = {
  lifecyclestage: { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }, { value: 'marketingqualifiedlead', label: 'Marketing Qualified Lead' }] },
  dealstage: { type: 'enumeration', options: [{ value: 'appointmentscheduled', label: 'Appointment Scheduled' }, { value: 'closedwon', label: 'Closed Won' }] },
  closedate: { type: 'date' },
  hs_timestamp: { type: 'datetime' },
  amount: { type: 'number' },
  seats: { type: 'integer' },
  firstname: { type: 'string', maxLength: 10 },
  email: { type: 'email' },
  phone: { type: 'phone' },
  website: { type: 'url' },
  opted_in: { type: 'boolean' },
  Status: { type: 'enumeration', options: ['Not Started', 'In Progress', 'Completed'] },
  Industry: { type: 'enumeration', options: ['Technology'], restricted: false },
  products: { type: 'enumeration', multiple: true, options: ['Seats', 'Support', 'Training'] },
  hs_object_id: { type: 'number', readOnly: true },
};

const one = (field: string, value: unknown, normalize = true) => checkValues({ [field]: value }, defs, normalize);
const accepted = (field: string, value: unknown, normalize = true) => {
  const r = one(field, value, normalize);
  expect(r.issues, `${field}: ${JSON.stringify(value)}`).toEqual([]);
  return r.fields[field];
};
const refused = (field: string, value: unknown, normalize = true) => {
  const r = one(field, value, normalize);
  expect(r.issues, `${field}: ${JSON.stringify(value)}`).toHaveLength(1);
  expect(r.issues[0]!.path).toBe(`fields.${field}`);
  return r.issues[0]!.message;
};

describe('checkValues: what a model sends, against the CRM\'s definitions', () => {
  it('maps an enumeration value by its case or its label to the CRM\'s value, and reports the change', () => {
    const r = one('lifecyclestage', 'Customer ');
    expect(r.fields.lifecyclestage).toBe('customer');
    expect(r.normalized).toEqual([{ field: 'lifecyclestage', from: 'Customer ', to: 'customer' }]);
    expect(accepted('lifecyclestage', 'Marketing Qualified Lead')).toBe('marketingqualifiedlead');
    expect(accepted('Status', 'completed')).toBe('Completed');
    expect(one('lifecyclestage', 'lead').normalized).toEqual([]);
  });

  it('refuses a value that is not an option, listing the allowed ones', () => {
    expect(refused('lifecyclestage', 'client')).toBe('"client" is not an allowed value; allowed: "lead", "customer", "marketingqualifiedlead"');
    expect(refused('dealstage', 'Won!!')).toContain('allowed: "appointmentscheduled", "closedwon"');
    expect(refused('Status', 'done')).toContain('"done" is not an allowed value');
    expect(refused('lifecyclestage', 42)).toContain('"42" is not an allowed value');
    expect(refused('lifecyclestage', 42, false)).toContain('got a number');
  });

  it('takes any value of an unrestricted picklist, still matching the known ones', () => {
    expect(accepted('Industry', 'Aerospace')).toBe('Aerospace');
    expect(accepted('Industry', ' technology')).toBe('Technology');
  });

  it('joins a multi-select the CRM\'s way, each value matched', () => {
    expect(accepted('products', 'seats; Training')).toBe('Seats;Training');
    expect(accepted('products', 'Seats;Seats')).toBe('Seats');
    expect(refused('products', 'Seats; Hats')).toContain('"Hats" is not an allowed value');
  });

  it('turns a numeric string into a number and refuses currency signs, units and separators', () => {
    expect(accepted('amount', '12000')).toBe(12000);
    expect(accepted('amount', ' 12000.5 ')).toBe(12000.5);
    expect(accepted('amount', 48000)).toBe(48000);
    for (const bad of ['$12,000', '12,000', '12k', '12000 EUR', '']) expect(refused('amount', bad)).toContain('no currency sign, unit or thousands separator');
    expect(refused('seats', 40.5)).toBe('must be a whole number (got 40.5)');
    expect(accepted('seats', '40')).toBe(40);
  });

  it('keeps ISO dates, turns a midnight-UTC date-time into its date, and refuses any other date text', () => {
    expect(accepted('closedate', '2027-01-15')).toBe('2027-01-15');
    expect(accepted('closedate', '2027-01-15T00:00:00Z')).toBe('2027-01-15');
    expect(accepted('closedate', Date.UTC(2027, 0, 15))).toBe('2027-01-15');
    expect(refused('closedate', 'next Friday')).toBe('must be an ISO 8601 date, YYYY-MM-DD; "next Friday" is not one');
    expect(refused('closedate', '28/11/2026')).toContain('is not one');
    expect(refused('closedate', '12/01/2026')).toContain('is not one');
    expect(refused('closedate', '2026-02-30')).toContain('is not one');
    expect(refused('closedate', 20261201)).toContain('not midnight UTC');
    expect(refused('closedate', Date.UTC(2027, 0, 15, 22, 18, 55, 865))).toContain('not midnight UTC');
    expect(refused('closedate', '2027-01-15T09:00:00+02:00')).toContain('depends on a time zone');
  });

  it('writes date-times as ISO UTC, a date as its midnight, and refuses a time with no offset', () => {
    expect(accepted('hs_timestamp', '2026-11-28T10:00:00+01:00')).toBe('2026-11-28T09:00:00.000Z');
    expect(accepted('hs_timestamp', '2026-11-28')).toBe('2026-11-28T00:00:00.000Z');
    expect(accepted('hs_timestamp', 1_764_324_000_000)).toBe('2025-11-28T10:00:00.000Z');
    expect(refused('hs_timestamp', '28/11/2026 10:00')).toContain('"28/11/2026 10:00" is not one');
    expect(refused('hs_timestamp', '2026-11-28T10:00:00')).toContain('it has no offset');
  });

  it('checks text: free text as written, typed text trimmed, lengths, emails, phones, URLs', () => {
    expect(refused('firstname', 42)).toBe('must be text (got a number)');
    expect(accepted('firstname', ' Ana ')).toBe(' Ana ');
    expect(refused('firstname', 'Bartholomew-Jones')).toBe('is 17 characters; the CRM stores at most 10');
    expect(accepted('email', ' ana@northwind.example ')).toBe('ana@northwind.example');
    expect(refused('email', 'ana at northwind')).toContain('must be an email address');
    expect(accepted('phone', '+1 (415) 555-0100 ext. 12')).toBe('+1 (415) 555-0100 ext. 12');
    expect(refused('phone', 'call me')).toContain('must be a phone number');
    expect(accepted('website', 'fabrikam.example')).toBe('fabrikam.example');
    expect(refused('website', 'not a url')).toContain('must be a URL');
  });

  it('reads "true"/"false" as booleans, refuses a read-only field, and lets null clear any field', () => {
    expect(accepted('opted_in', 'TRUE')).toBe(true);
    expect(refused('opted_in', 'yes')).toContain('must be true or false');
    expect(refused('hs_object_id', 5)).toBe('is read-only in the CRM: it cannot be written');
    expect(accepted('closedate', null)).toBeNull();
  });

  it('without normalize, takes only values already in the CRM\'s form', () => {
    expect(refused('lifecyclestage', 'Customer', false)).toContain('"Customer" is not an allowed value');
    expect(refused('amount', '12000', false)).toContain('no currency sign');
    expect(refused('closedate', '2027-01-15T00:00:00Z', false)).toContain('is not one');
    expect(accepted('lifecyclestage', 'customer', false)).toBe('customer');
    expect(refused('email', ' a@b.co ', false)).toContain('must be an email address');
    expect(accepted('email', 'a@b.co', false)).toBe('a@b.co');
  });

  it('passes fields with no definition as they are, and reports every bad field of an action', () => {
    const r = checkValues({ favorite_color: 'Teal ', lifecyclestage: 'client', amount: '$5' }, defs);
    expect(r.issues.map((i) => i.path)).toEqual(['fields.lifecyclestage', 'fields.amount']);
    expect(checkValues({ favorite_color: 'Teal ' }, defs).fields).toEqual({ favorite_color: 'Teal ' });
  });

  it('lists the first 20 allowed values and how many more', () => {
    const values = Array.from({ length: 23 }, (_, i) => `v${i}`);
    expect(allowedList(values)).toBe(`${values.slice(0, 20).map((v) => `"${v}"`).join(', ')} (and 3 more)`);
  });
});
