/**
 * Bulk API CSV: awkward values survive a write and a parse, null is #N/A, and text that is not
 * CSV is refused with the line it breaks on.
 */
import { describe, expect, it } from 'vitest';
import { csvCell, CsvSyntaxError, parseCsv, parseCsvTable, toCsv } from '../../../adapters/salesforce/salesforce-csv.js';

const AWKWARD = [
  'plain',
  'with, comma',
  'with "quotes"',
  '"starts and ends with quotes"',
  'line\nbreak',
  'crlf\r\ninside',
  'lone\rcarriage return',
  ' leading and trailing spaces ',
  '',
  'unicode: café, 東京, 🚀',
  '""',
  ',',
  '\n',
  'O\'Brien; semi|pipe`back^caret\ttab',
];

describe('csvCell', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    [null, '#N/A'],
    [undefined, ''],
    ['', ''],
    [42.5, '42.5'],
    [-0.001, '-0.001'],
    [true, 'true'],
    [false, 'false'],
  ] as const)('writes %j as %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});

describe('toCsv / parseCsvTable', () => {
  it.each(['\n', '\r\n'] as const)('round-trips awkward values with line ending %j', (lineEnding) => {
    const rows = AWKWARD.map((v, i) => ({ Id__c: `k${i}`, Value: v }));
    const text = toCsv(['Id__c', 'Value'], rows, lineEnding);
    const table = parseCsvTable(text);
    expect(table.columns).toEqual(['Id__c', 'Value']);
    expect(table.rows).toEqual(rows);
  });

  it('writes a missing value as an empty cell and null as #N/A', () => {
    const text = toCsv(['A', 'B', 'C'], [{ A: 'x', C: null }]);
    expect(text).toBe('A,B,C\nx,,#N/A\n');
    expect(parseCsvTable(text).rows).toEqual([{ A: 'x', B: '', C: '#N/A' }]);
  });

  it('reads Salesforce result files: quoted sf__ columns, the uploaded columns, no final line ending', () => {
    const text = '"sf__Id","sf__Created",AI_External_Id__c,LastName\n"003000000000001AAA","true","c-1","O\'Neil, ""Jr"""';
    expect(parseCsvTable(text)).toEqual({
      columns: ['sf__Id', 'sf__Created', 'AI_External_Id__c', 'LastName'],
      rows: [{ sf__Id: '003000000000001AAA', sf__Created: 'true', AI_External_Id__c: 'c-1', LastName: 'O\'Neil, "Jr"' }],
    });
  });

  it('reads an empty text as no columns and a header alone as no rows', () => {
    expect(parseCsvTable('')).toEqual({ columns: [], rows: [] });
    expect(parseCsvTable('"sf__Id","sf__Error",Name\n')).toEqual({ columns: ['sf__Id', 'sf__Error', 'Name'], rows: [] });
  });

  it('keeps empty cells at the ends of a line', () => {
    expect(parseCsv(',a,\n"",,""\n')).toEqual([['', 'a', ''], ['', '', '']]);
  });
});

describe('parseCsv refusals', () => {
  it.each([
    ['A,B\n"open,1\n', 'a quoted value is not closed (line 2)'],
    ['A,B\nx"y,1\n', 'a double quote inside an unquoted value (line 2)'],
    ['A,B\n"x"y,1\n', 'text after a closing quote (line 2)'],
    ['A,B\n"multi\nline"z,1\n', 'text after a closing quote (line 3)'],
  ])('refuses %j', (text, message) => {
    expect(() => parseCsv(text)).toThrow(CsvSyntaxError);
    expect(() => parseCsv(text)).toThrow(message);
  });

  it('refuses a row with more or fewer cells than the header', () => {
    expect(() => parseCsvTable('A,B\n1,2,3\n')).toThrow('3 values where the header names 2 columns (line 2)');
    expect(() => parseCsvTable('A,B\n1\n')).toThrow('1 values where the header names 2 columns (line 2)');
  });
});
