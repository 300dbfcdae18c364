import { describe, expect, it } from 'vitest';
import { sanitize } from '../../../adapters/pipedrive/fake/pipedrive-fake-crm.js';
import { wireValue } from '../../../adapters/pipedrive/pipedrive-fields.js';
import { activityBody, createBody, keyMarker, markedKey, recordBody } from '../../../adapters/pipedrive/pipedrive-requests.js';

const KEY = 'v1:e:Zx3_-abcDEF0123456789abcdefABCDEF01234567';

describe('the key marker', () => {
  it.each([
    ['as written', (html: string) => html],
    ['after sanitizing', sanitize],
    ['with the paragraph turned into a line break', (html: string) => html.replace('<p>', '<br>').replace('</p>', '')],
    ['with entities for its punctuation', (html: string) => html.replace(':', '&#58;').replace('[', '&#91;')],
  ])('is read back %s', (_name, change) => {
    const html = `<div onclick="x()">Call notes<script>alert(1)</script></div>${keyMarker(KEY)}`;
    const read = markedKey(change(html));
    expect(read).toBe(KEY);
  });

  it('escapes markup in a key', () => {
    expect(keyMarker('a<b>&c')).toBe('<p>[crm-upsert key: a&lt;b&gt;&amp;c]</p>');
    expect(markedKey(keyMarker('a<b>&c'))).toBe('a<b>&c');
  });

  it('finds no key in text without a marker', () => {
    expect(markedKey('<p>crm-upsert key mentioned in passing</p>')).toBeUndefined();
    expect(markedKey(null)).toBeUndefined();
  });
});

describe('wireValue', () => {
  it.each([
    ['an enumeration option id as a number', '7', { type: 'enumeration' as const, options: [{ value: '7', label: 'Qualified' }] }, 7],
    ['a set as an array of ids', '3;5', { type: 'enumeration' as const, multiple: true }, [3, 5]],
    ['an empty set as null', '', { type: 'enumeration' as const, multiple: true }, null],
    ['a number given as text as a number', '12.50', { type: 'number' as const }, 12.5],
    ['a string as it is', '0042', { type: 'string' as const }, '0042'],
    ['null as null', null, { type: 'number' as const }, null],
    ['a number a double holds exactly, its zeros aside', '-007.250', { type: 'number' as const }, -7.25],
    ['more digits than a double holds as the text itself, never rounded', '12345678901234567890', { type: 'number' as const }, '12345678901234567890'],
    ['a fraction a double cannot hold as the text itself', '0.12345678901234567891', { type: 'number' as const }, '0.12345678901234567891'],
  ])('writes %s', (_name, value, definition, expected) => {
    expect(wireValue(value, definition)).toEqual(expected);
  });
  it('leaves values alone without a definition', () => {
    expect(wireValue('7', undefined)).toBe('7');
  });
});

describe('bodies', () => {
  it('puts standard fields at the root, custom ones under custom_fields, relations as numbers', () => {
    const key = 'b'.repeat(40);
    const body = recordBody({ name: 'Ada', email: 'ada@x.test', Score: '4' }, (n) => (n === 'Score' ? { custom: key } : { standard: n }), { Score: { type: 'number' } }, { org_id: '12' });
    expect(body).toEqual({ name: 'Ada', emails: [{ value: 'ada@x.test', primary: true, label: 'work' }], org_id: 12, custom_fields: { [key]: 4 } });
    expect(createBody(body, 'c'.repeat(40), 'P-1')).toMatchObject({ custom_fields: { [key]: 4, ['c'.repeat(40)]: 'P-1' } });
  });

  it('makes an activity with a person its primary participant and carries the key in its note', () => {
    const body = activityBody({ kind: 'activity', entity: 'activity', activityType: 'call', fields: ['subject'], parents: {} }, { key: KEY, fields: { subject: 'Call back' } }, { deal_id: '3', person_id: '9' });
    expect(body).toEqual({ subject: 'Call back', deal_id: 3, person_id: 9, type: 'call', note: keyMarker(KEY), participants: [{ person_id: 9, primary: true }] });
  });
});
