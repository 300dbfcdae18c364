import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isApiName, parseSoqlSelect, soqlIn, soqlQuote, soqlUnquote } from '../../../adapters/salesforce/soql.js';

describe('soqlQuote', () => {
  it.each([
    ['plain', "'plain'"],
    ["O'Brien", "'O\\'Brien'"],
    ['back\\slash', "'back\\\\slash'"],
    ['say "hi"', "'say \\\"hi\\\"'"],
    ['tab\tnew\nline\rcr', "'tab\\tnew\\nline\\rcr'"],
    ['bell\bform\f', "'bell\\bform\\f'"],
    ["\\'", "'\\\\\\''"],
    ['ünïcødé 東京 😀', "'ünïcødé 東京 😀'"],
    ["') OR Id != ('", "'\\') OR Id != (\\''"],
  ])('quotes %j as a single SOQL literal', (value, quoted) => {
    expect(soqlQuote(value)).toBe(quoted);
  });

  it('round-trips any string through soqlUnquote', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const quoted = soqlQuote(value);
        expect(soqlUnquote(quoted, 0)).toEqual({ value, end: quoted.length });
      }),
    );
  });

  it('keeps an injected quote inside the literal', () => {
    const clause = soqlIn('Ext__c', ["a') OR Name LIKE ('%"]);
    const lit = soqlUnquote(clause, clause.indexOf("'"));
    expect(lit?.value).toBe("a') OR Name LIKE ('%");
    expect(clause.slice(lit!.end)).toBe(')');
  });
});

describe('soqlIn', () => {
  it('joins quoted values into an IN list', () => {
    expect(soqlIn('AI_External_Id__c', ['a', "b'c"])).toBe("AI_External_Id__c IN ('a','b\\'c')");
  });
});

describe('soqlUnquote', () => {
  it('rejects an unterminated literal or an unknown escape', () => {
    expect(soqlUnquote("'abc", 0)).toBeNull();
    expect(soqlUnquote("'a\\qb'", 0)).toBeNull();
    expect(soqlUnquote('abc', 0)).toBeNull();
  });
});

describe('isApiName', () => {
  it.each([
    ['Contact', true],
    ['AI_External_Id__c', true],
    ['Name; DROP', false],
    ['1abc', false],
    ['', false],
  ])('judges %j as %s', (name, ok) => {
    expect(isApiName(name)).toBe(ok);
  });
});

describe('parseSoqlSelect', () => {
  it.each([
    ['SELECT Id FROM Contact', { fields: ['Id'], sobject: 'Contact' }],
    ["SELECT Id, AI_External_Id__c FROM Contact WHERE AI_External_Id__c IN ('a', 'b\\'c','d\\\\')", { fields: ['Id', 'AI_External_Id__c'], sobject: 'Contact', where: { field: 'AI_External_Id__c', values: ['a', "b'c", 'd\\'] } }],
    ["select Id from Task where Key__c = 'x' limit 1", { fields: ['Id'], sobject: 'Task', where: { field: 'Key__c', values: ['x'] }, limit: 1 }],
    [`SELECT Id FROM Contact WHERE E__c IN (${soqlQuote("') OR Id != ('")})`, { fields: ['Id'], sobject: 'Contact', where: { field: 'E__c', values: ["') OR Id != ('"] } }],
  ])('parses %j', (q, expected) => {
    expect(parseSoqlSelect(q)).toEqual(expected);
  });

  it.each([
    '',
    'SELECT FROM Contact',
    'SELECT Id, FROM Contact',
    "SELECT Id FROM Contact WHERE Name LIKE 'a%'",
    "SELECT Id FROM Contact WHERE Name IN ('a'",
    "SELECT Id FROM Contact WHERE Name IN ('a' 'b')",
    "SELECT Id FROM Contact WHERE Name = 'a' OR Id != null",
    'SELECT Id FROM Contact WHERE',
    'SELECT Id FROM Contact ORDER BY Name',
  ])('calls %j malformed', (q) => {
    expect(parseSoqlSelect(q)).toHaveProperty('malformed');
  });
});
