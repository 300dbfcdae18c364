/**
 * Field values against their definitions: the model's sloppy values that keep their meaning are
 * normalized to the CRM's form, the rest refused naming the field, the reason and (for an
 * enumeration) the allowed values. Without `normalize`, only values already in the CRM's form pass.
 */
import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../schemas/field-definitions.js';
import { allowedList, checkValues, matchOption } from '../../schemas/values.js';

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
  tier: { type: 'enumeration', options: [{ value: 'gold', label: 'Silver' }, { value: 'silver', label: 'Gold' }] },
  Amount: { type: 'number', precision: 18, scale: 2 },
  Probability: { type: 'number', precision: 5, scale: 2 },
  NumberOfEmployees: { type: 'integer', precision: 8 },
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

  it('takes a hidden option (value or label) and leaves hidden options out of the allowed list it suggests', () => {
    const tier: FieldDefinition = { type: 'enumeration', options: [{ value: 'gold', label: 'Gold' }, { value: 'legacy', label: 'Legacy', hidden: true }] };
    expect(checkValues({ tier: 'legacy' }, { tier }).fields).toEqual({ tier: 'legacy' });
    expect(checkValues({ tier: 'Legacy' }, { tier }).fields).toEqual({ tier: 'legacy' });
    expect(checkValues({ tier: 'bronze' }, { tier }).issues).toEqual([{ path: 'fields.tier', message: '"bronze" is not an allowed value; allowed: "gold"' }]);
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
    expect(refused('closedate', '2026-02-30')).toContain('is not a day of the calendar');
    expect(refused('closedate', 20261201)).toContain('not midnight UTC');
    expect(refused('closedate', Date.UTC(2027, 0, 15, 22, 18, 55, 865))).toContain('not midnight UTC');
    expect(refused('closedate', '2027-01-15T09:00:00+02:00')).toContain('depends on a time zone');
  });

  it('writes date-times as ISO UTC, a date as its midnight, and refuses a time with no offset', () => {
    expect(accepted('hs_timestamp', '2026-11-28T10:00:00+01:00')).toBe('2026-11-28T09:00:00Z');
    expect(accepted('hs_timestamp', '2026-11-28')).toBe('2026-11-28T00:00:00Z');
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

  describe('never changes what a value means', () => {
    it.each([
      ['hs_timestamp', '2026-02-30T10:00:00Z', 'is not a day of the calendar (February 2026 has 28 days)'],
      ['hs_timestamp', '2026-04-31T10:00:00+02:00', 'is not a day of the calendar (April 2026 has 30 days)'],
      ['hs_timestamp', '2026-02-29T00:00:00Z', 'is not a day of the calendar (February 2026 has 28 days)'],
      ['hs_timestamp', '2026-13-01T00:00:00Z', 'is not a day of the calendar (there is no month 13)'],
      ['hs_timestamp', '2026-11-28T24:00:00Z', 'is not a time of day (hour 24: hours run 00 to 23)'],
      ['hs_timestamp', '2026-11-28T10:60:00Z', 'is not a time of day (minute 60: minutes run 00 to 59)'],
      ['hs_timestamp', '2026-12-31T23:59:60Z', 'is not a time of day (second 60: seconds run 00 to 59; the CRM stores no leap second)'],
      ['hs_timestamp', '2026-11-28T10:00:00.1234Z', 'is finer than a millisecond, which the CRM does not keep'],
      ['closedate', '2026-02-30', 'is not a day of the calendar (February 2026 has 28 days)'],
      ['closedate', '2026-04-31', 'is not a day of the calendar (April 2026 has 30 days)'],
      ['closedate', '2026-02-29', 'is not a day of the calendar (February 2026 has 28 days)'],
      ['closedate', '2026-02-30T00:00:00Z', 'is not a day of the calendar (February 2026 has 28 days)'],
      ['closedate', '2026-11-28T24:00:00Z', 'is not a time of day (hour 24: hours run 00 to 23)'],
      ['closedate', '2026-12-01T19:00:00-05:00', 'has a time of day (19:00 at -05:00), and which day it means depends on a time zone: send the day as YYYY-MM-DD'],
      ['closedate', '2026-12-01T00:00:01Z', 'has a time of day (00:00:01 at Z), and which day it means depends on a time zone: send the day as YYYY-MM-DD'],
    ])('refuses %s %j naming why, rolling nothing over', (field, value, why) => {
      expect(refused(field, value)).toBe(`must be ${field === 'closedate' ? 'an ISO 8601 date, YYYY-MM-DD' : 'an ISO 8601 date-time with its offset, e.g. 2026-11-28T10:00:00Z'}; ${JSON.stringify(value)} ${why}`);
    });

    it('accepts Feb 29 of a leap year, with and without normalize', () => {
      expect(accepted('closedate', '2028-02-29')).toBe('2028-02-29');
      expect(accepted('closedate', '2028-02-29', false)).toBe('2028-02-29');
      expect(accepted('hs_timestamp', '2028-02-29T23:59:59Z', false)).toBe('2028-02-29T23:59:59Z');
      expect(refused('hs_timestamp', '2026-02-30T10:00:00Z', false)).toContain('is not a day of the calendar');
    });

    it.each([
      ['2026-12-01T00:00:00-05:00', '2026-12-01'],
      ['2026-12-01T00:00:00+14:00', '2026-12-01'],
      ['2026-12-01T00:00:00.000Z', '2026-12-01'],
      ['2026-12-01T00:00+01:00', '2026-12-01'],
    ])('turns a date-time at midnight in its own offset, %j, into the day it names there', (value, day) => {
      const r = one('closedate', value);
      expect(r.fields.closedate).toBe(day);
      expect(r.normalized).toEqual([{ field: 'closedate', from: value, to: day }]);
    });

    it.each([
      ['amount', '12345678901234567890', '12345678901234567890'],
      ['amount', '0.10000000000000000555', '0.10000000000000000555'],
      ['amount', '-9007199254740993', '-9007199254740993'],
      ['amount', '3.50', '3.50'],
      ['seats', '12345678901234567890', '12345678901234567890'],
      ['Amount', '1234567890123456.78', '1234567890123456.78'],
    ])('keeps every digit of %s %j, not reported (its text is unchanged)', (field, value, written) => {
      const r = one(field, value);
      expect(r.issues).toEqual([]);
      expect(r.fields[field]).toBe(written);
      expect(r.normalized).toEqual([]);
    });

    it.each([
      ['amount', ' 12345678901234567890 ', '12345678901234567890'],
      ['amount', '+007.50', '7.50'],
      ['amount', '.5', 0.5],
      ['amount', '-0', 0],
      ['amount', 1e-7, '0.0000001'],
      ['seats', '40.00', 40],
      ['seats', ' 12345678901234567890.0', '12345678901234567890'],
    ])('writes %s %j as the same number in JSON\'s form, %j, and reports it', (field, value, written) => {
      const r = one(field, value);
      expect(r.fields[field]).toBe(written);
      expect(r.normalized).toEqual([{ field, from: value, to: written }]);
    });

    it.each([
      ['Amount', '1.005', '1.005 has 3 decimal places; the CRM keeps 2 and would round it'],
      ['Amount', 0.125, '0.125 has 3 decimal places; the CRM keeps 2 and would round it'],
      ['Amount', '12345678901234567', '12345678901234567 has 17 digits before the decimal point; the CRM holds 16 (precision 18, scale 2)'],
      ['Probability', '1000', '1000 has 4 digits before the decimal point; the CRM holds 3 (precision 5, scale 2)'],
      ['NumberOfEmployees', '123456789', '123456789 has 9 digits before the decimal point; the CRM holds 8 (precision 8, scale 0)'],
      ['amount', 2 ** 53 + 2, '9007199254740994 is a JSON number past 2^53 (9007199254740991), where a double no longer holds every whole number and the digits may already be rounded: send its digits as text to keep every one'],
      ['amount', Number.POSITIVE_INFINITY, 'must be a number (got Infinity)'],
    ])('refuses %s %j past what the field holds', (field, value, why) => {
      expect(refused(field, value)).toBe(why);
    });

    it('takes what fits the precision and scale, trailing zeros past the scale included', () => {
      expect(accepted('Amount', '1.50')).toBe('1.50');
      expect(accepted('Amount', '1.500')).toBe('1.500');
      expect(accepted('Probability', '999.99')).toBe(999.99);
      expect(accepted('Probability', 0.5, false)).toBe(0.5);
      expect(refused('Probability', 1000, false)).toContain('has 4 digits before the decimal point');
    });

    it.each([
      ['Silver', 'gold'],
      ['silver', 'silver'],
      ['Gold', 'silver'],
      ['gold', 'gold'],
      ['GOLD', 'gold'],
      ['SILVER', 'silver'],
      [' Silver ', 'gold'],
    ])('resolves %j by exact value, then exact label, then either ignoring case: %j', (text, value) => {
      expect(accepted('tier', text)).toBe(value);
    });

    it('refuses a text that matches several options at its level, naming them', () => {
      const defsAlike: Record<string, FieldDefinition> = {
        plan: { type: 'enumeration', options: [{ value: 'pro_2024', label: 'Pro' }, { value: 'pro_2025', label: 'Pro' }, { value: 'Team', label: 'Team plan' }, { value: 'team', label: 'Small team' }] },
      };
      const r = checkValues({ plan: 'Pro' }, defsAlike);
      expect(r.issues).toEqual([{ path: 'fields.plan', message: '"Pro" matches more than one option: "pro_2024" (Pro), "pro_2025" (Pro); send the value of the one meant' }]);
      expect(checkValues({ plan: 'TEAM' }, defsAlike).issues[0]!.message).toBe('"TEAM" matches more than one option: "Team" (Team plan), "team" (Small team); send the value of the one meant');
      expect(checkValues({ plan: 'team' }, defsAlike).fields.plan).toBe('team');
      expect(checkValues({ plan: 'pro_2025' }, defsAlike).fields.plan).toBe('pro_2025');
    });

    it.each([
      ['hs_timestamp', '2026-11-28T10:00:00Z'],
      ['hs_timestamp', '2026-11-28T10:00:00.000Z'],
      ['hs_timestamp', '2026-11-28T10:00:00.5Z'],
      ['closedate', '2027-01-15'],
      ['amount', '12000'],
      ['amount', 48000],
      ['amount', '-3.5'],
      ['seats', '40'],
      ['opted_in', 'true'],
      ['tier', 'gold'],
      ['email', 'ana@northwind.example'],
    ])('does not report %s %j, already in the CRM\'s form', (field, value) => {
      const r = one(field, value);
      expect(r.issues).toEqual([]);
      expect(r.normalized).toEqual([]);
      expect(String(r.fields[field])).toBe(String(value));
    });
  });
});

describe('matchOption', () => {
  const options = [{ value: 'gold', label: 'Silver' }, { value: 'silver', label: 'Gold' }, 'Bronze'];

  it.each([
    ['Silver', true, { kind: 'found', value: 'gold' }],
    ['bronze', true, { kind: 'found', value: 'Bronze' }],
    ['Silver', false, { kind: 'none' }],
    ['gold', false, { kind: 'found', value: 'gold' }],
    [' gold', false, { kind: 'none' }],
    ['platinum', true, { kind: 'none' }],
  ] as const)('finds %j (normalize %s): %j', (text, normalize, expected) => {
    expect(matchOption(options, text, normalize)).toEqual(expected);
  });

  it('answers the candidates when one level holds several', () => {
    expect(matchOption([{ value: 'a', label: 'Same' }, { value: 'b', label: 'Same' }], 'Same', true)).toEqual({ kind: 'ambiguous', candidates: [{ value: 'a', label: 'Same' }, { value: 'b', label: 'Same' }] });
    expect(matchOption(['X', 'x'], 'x', true)).toEqual({ kind: 'found', value: 'x' });
    expect(matchOption(['X', 'x'], ' x ', false)).toEqual({ kind: 'none' });
    expect(matchOption(undefined, 'x', true)).toEqual({ kind: 'none' });
  });
});
