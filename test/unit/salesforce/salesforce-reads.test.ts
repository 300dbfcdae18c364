import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_URL_BYTES } from '../../../adapters/salesforce/salesforce-adapter.js';
import { salesforceReads } from '../../../adapters/salesforce/salesforce-reads.js';
import { groupsForUrl, queryUrl, queryUrlBytes, soqlList } from '../../../adapters/salesforce/soql.js';
import { ConfigError } from '../../../src/errors.js';

const BASE = '/services/data/v60.0';

describe('groupsForUrl', () => {
  it('puts every value in one group, in order, each query URL at most the limit and each group but the last full', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 120 }), fc.integer({ min: 200, max: 2_000 }), (values, max) => {
        const head = "SELECT Id, Ext__c FROM Contact WHERE Ext__c IN (";
        const groups = groupsForUrl(BASE, head, ')', values, max);
        expect(groups.flat()).toEqual(values);
        const url = (group: readonly string[]) => queryUrl(BASE, `${head}${soqlList(group)})`);
        groups.forEach((group, i) => {
          expect(group.length).toBeGreaterThan(0);
          if (group.length > 1) expect(url(group).length).toBeLessThanOrEqual(max);
          if (i < groups.length - 1) expect(url([...group, groups[i + 1]![0]!]).length).toBeGreaterThan(max);
        });
      }),
    );
  });

  it('charges nothing for values that are never sent', () => {
    const groups = groupsForUrl(BASE, 'SELECT Id FROM Contact WHERE X__c IN (', ')', ['a', 'x'.repeat(5_000), 'b'], 200, (v) => v.length > 4_000);
    expect(groups).toEqual([['a', 'x'.repeat(5_000), 'b']]);
  });

  it('measures values in bytes as sent: multibyte values fill a query by their encoded size', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), { maxLength: 80 }), fc.integer({ min: 300, max: 3_000 }), (values, max) => {
        const head = 'SELECT Id, Ext__c FROM Contact WHERE Ext__c IN (';
        const groups = groupsForUrl(BASE, head, ')', values, max);
        expect(groups.flat()).toEqual(values);
        const bytes = (group: readonly string[]) => Buffer.byteLength(queryUrl(BASE, `${head}${soqlList(group)})`));
        groups.forEach((group, i) => {
          if (group.length > 1) expect(bytes(group)).toBeLessThanOrEqual(max);
          if (i < groups.length - 1) expect(bytes([...group, groups[i + 1]![0]!])).toBeGreaterThan(max);
        });
      }),
    );
    expect(queryUrlBytes(BASE, "SELECT Id FROM Contact WHERE Ext__c IN ('\u4e2d\u{1F600}')")).toBe(Buffer.byteLength(`${BASE}/query?q=SELECT%20Id%20FROM%20Contact%20WHERE%20Ext__c%20IN%20(%27%E4%B8%AD%F0%9F%98%80%27)`));
  });
});

describe('salesforceReads planReads', () => {
  const objects = {
    company: { kind: 'record' as const, sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
    contact: { kind: 'record' as const, sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'], links: { company: 'AccountId' } },
  };
  const reads = salesforceReads({ objects, apiBase: BASE, maxUrlBytes: MAX_QUERY_URL_BYTES, query: async () => [] });
  const uuid = (i: number) => `7f1c9a2e-41d3-4b8e-9a55-${String(i).padStart(12, '0')}`;

  it.each([
    ['36-character external ids', { fields: ['Email', 'FirstName', 'LastName'], links: false }, 329],
    ['36-character external ids with links', { fields: ['Email', 'FirstName', 'LastName'], links: true }, 328],
  ])('groups %s by what one query URL holds', (_name, request, perQuery) => {
    const ids = Array.from({ length: 1_000 }, (_, i) => uuid(i));
    const groups = reads.planReads('contact', ids, request);
    expect(groups.map((g) => g.length)).toEqual([perQuery, perQuery, perQuery, 1_000 - 3 * perQuery]);
  });

  it('sends no id whose query alone is over the URL limit in bytes: it rides in a group, costs nothing and is answered not found with the reason', async () => {
    const sent: string[] = [];
    const reading = salesforceReads({ objects, apiBase: BASE, maxUrlBytes: MAX_QUERY_URL_BYTES, query: async (soql) => (sent.push(soql), []) });
    const big = '\u4e2d'.repeat(1_700);
    const request = { fields: ['Email'], links: false };
    expect(reading.planReads('contact', ['a', big, 'b'], request)).toEqual([['a', big, 'b']]);
    expect(await reading.readRecords('contact', ['a', big, 'b'], request)).toEqual([
      { found: false },
      { found: false, reason: expect.stringMatching(/^not sent: a query for this id alone is a URL of 15,\d{3} bytes \(UTF-8, percent-encoded\), over the 15,000/) },
      { found: false },
    ]);
    expect(sent).toEqual(["SELECT Id, AI_External_Id__c, Email FROM Contact WHERE AI_External_Id__c IN ('a','b')"]);
  });

  it('counts a WHERE string in characters, an emoji as one: 2,001 emoji are refused for their URL, 4,001 letters for their length', async () => {
    const reading = salesforceReads({ objects, apiBase: BASE, maxUrlBytes: MAX_QUERY_URL_BYTES, query: async () => [] });
    const request = { fields: ['Email'], links: false };
    const [emoji, letters] = await reading.readRecords('contact', ['\u{1F600}'.repeat(2_001), 'x'.repeat(4_001)], request);
    expect(emoji).toEqual({ found: false, reason: expect.stringMatching(/^not sent: a query for this id alone is a URL of 24,\d{3} bytes/) });
    expect(letters).toEqual({ found: false, reason: 'not sent: 4,001 characters, over the 4,000 Salesforce allows in a WHERE string' });
  });

  it('refuses a field name that is not an API name before any request', () => {
    expect(() => reads.planReads('contact', ['a'], { fields: ['Email) OR (Name'], links: false })).toThrow(ConfigError);
    expect(() => reads.planReads('contact', ['a'], { fields: ['Email'], by: 'Email, Phone', links: false })).toThrow(/not a field API name/);
  });
});
