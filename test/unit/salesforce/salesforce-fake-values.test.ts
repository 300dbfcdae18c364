import { describe, expect, it } from 'vitest';
import { storedValue, unparsable, type FakeFieldType } from '../../../adapters/salesforce/fake/salesforce-fake-values.js';

describe('fakeSalesforce number and checkbox values', () => {
  it.each<[string, FakeFieldType, unknown, string | undefined]>([
    ['a number', 'currency', 5000.5, undefined],
    ['a string holding a number', 'currency', '5000.50', undefined],
    ['a negative string number', 'double', '-12', undefined],
    ['a currency sign and a thousands separator', 'currency', '$5,000', 'Cannot deserialize instance of double from VALUE_STRING value $5,000'],
    ['a thousands separator', 'double', '5,000', 'Cannot deserialize instance of double from VALUE_STRING value 5,000'],
    ['a percent sign', 'percent', '40%', 'Cannot deserialize instance of double from VALUE_STRING value 40%'],
    ['a checkbox value in a number field', 'currency', true, 'Cannot deserialize instance of double from VALUE_TRUE value true'],
    ['an object', 'double', { amount: 1 }, 'Cannot deserialize instance of double from START_OBJECT value {"amount":1}'],
    ['a whole number', 'int', 250, undefined],
    ['a whole number as text', 'int', '250', undefined],
    ['a fraction in an int field', 'int', 2.5, 'Cannot deserialize instance of int from VALUE_NUMBER_FLOAT value 2.5'],
    ['words in an int field', 'int', 'about 250', 'Cannot deserialize instance of int from VALUE_STRING value about 250'],
    ['true', 'boolean', true, undefined],
    ['"false" as text', 'boolean', 'false', undefined],
    ['"yes"', 'boolean', 'yes', 'Cannot deserialize instance of boolean from VALUE_STRING value yes'],
    ['1 for a checkbox', 'boolean', 1, 'Cannot deserialize instance of boolean from VALUE_NUMBER_INT value 1'],
    ['text in a text field', 'string', '$5,000', undefined],
  ])('%s in a %s field', (_name, type, value, message) => {
    const said = unparsable({ type }, value, 42);
    expect(said).toBe(message === undefined ? undefined : `${message} or request may be missing a required field at [line:1, column:42]`);
  });

  it('never refuses null (a clear)', () => {
    for (const type of ['currency', 'int', 'boolean', 'date'] as const) expect(unparsable({ type }, null, 1)).toBeUndefined();
  });

  it.each<[FakeFieldType, unknown, unknown]>([
    ['currency', '5000.50', 5000.5],
    ['int', '250', 250],
    ['boolean', 'TRUE', true],
    ['boolean', 'false', false],
    ['currency', 12, 12],
    ['string', '250', '250'],
  ])('stores a %s field given %j as %j', (type, value, stored) => {
    expect(storedValue({ type }, value)).toEqual(stored);
  });
});
