/** hubspot-reads.ts against answers HubSpot may give that the fake does not: what is read as found, absent, or failed. */
import { describe, expect, it } from 'vitest';
import { planReads, readRecords, type ReadIo } from '../../../adapters/hubspot/hubspot-reads.js';
import type { BatchResult } from '../../../adapters/hubspot/hubspot-client.js';
import { CrmError } from '../../../src/errors.js';

const contact = { kind: 'record' as const, objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'] };

/** A ReadIo whose batch read answers `answer` (given the body sent), recording each body. */
function io(answer: (body: { idProperty?: string; inputs: { id: string }[]; properties: string[] }) => BatchResult) {
  const sent: { idProperty?: string; inputs: { id: string }[]; properties: string[] }[] = [];
  const stub: ReadIo = {
    batchApi: {
      read: (_type, body) => {
        sent.push(body);
        return Promise.resolve(answer(body));
      },
      upsert: () => Promise.reject(new Error('not a read')),
      create: () => Promise.reject(new Error('not a read')),
      update: () => Promise.reject(new Error('not a read')),
    },
    associationsApi: { getPage: () => Promise.reject(new Error('no links configured')) },
    read: (call) => call(),
    record: () => contact,
  };
  return { stub, sent };
}
const request = { fields: ['firstname'], links: false };

describe('planReads', () => {
  it.each([
    [1, [1]],
    [100, [100]],
    [101, [100, 1]],
    [250, [100, 100, 50]],
  ])('splits %i ids into groups of %j, order kept', (n, sizes) => {
    const ids = Array.from({ length: n }, (_, i) => `id-${i}`);
    const groups = planReads(ids);
    expect(groups.map((g) => g.length)).toEqual(sizes);
    expect(groups.flat()).toEqual(ids);
  });
});

describe('readRecords (HubSpot)', () => {
  it('asks for the fields, the external id and the by property, by that idProperty', async () => {
    const { stub, sent } = io(() => ({ results: [], errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['a@x.test'] } }] }));
    await readRecords(stub, 'contact', ['a@x.test'], { ...request, by: 'email' });
    expect(sent).toEqual([{ idProperty: 'email', inputs: [{ id: 'a@x.test' }], properties: ['firstname', 'ai_external_id', 'email'], propertiesWithHistory: [] }]);
  });

  it('reads by HubSpot id with no idProperty when by is hs_object_id', async () => {
    const { stub, sent } = io(() => ({ results: [{ id: '42', properties: { firstname: 'Ann', ai_external_id: null } }] }));
    expect(await readRecords(stub, 'contact', ['42'], { ...request, by: 'hs_object_id' })).toEqual([{ found: true, recordId: '42', fields: { firstname: 'Ann' } }]);
    expect(sent[0]!.idProperty).toBeUndefined();
  });

  it('answers an empty external id as none, and a field HubSpot left out as null', async () => {
    const { stub } = io((): BatchResult => ({ results: [{ id: '7', properties: { ai_external_id: 'C-7' } }, { id: '8', properties: { ai_external_id: 'C-8', firstname: 'Bo' } }] }));
    expect(await readRecords(stub, 'contact', ['C-7', 'C-8'], request)).toEqual([
      { found: true, recordId: '7', externalId: 'C-7', fields: { firstname: null } },
      { found: true, recordId: '8', externalId: 'C-8', fields: { firstname: 'Bo' } },
    ]);
  });

  it('throws a retryable NO_RESULT error for an id with neither a result nor an error, never "not found"', async () => {
    const { stub } = io(() => ({ results: [{ id: '7', properties: { ai_external_id: 'C-7' } }] }));
    const err = await readRecords(stub, 'contact', ['C-7', 'C-8', 'C-9'], request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmError);
    expect(err).toMatchObject({ kind: 'transient', vendorCode: 'NO_RESULT', retryable: true });
  });

  it('places a result that does not echo the asked value on the one id left unanswered', async () => {
    const { stub } = io(() => ({
      results: [{ id: '7', properties: { email: 'ann@x.test', ai_external_id: 'C-7' } }, { id: '9', properties: { email: 'alias-owner@x.test', ai_external_id: 'C-9' } }],
      errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['nobody@x.test'] } }],
    }));
    expect(await readRecords(stub, 'contact', ['Ann@X.test', 'alias@x.test', 'nobody@x.test'], { ...request, by: 'email' })).toEqual([
      { found: true, recordId: '7', externalId: 'C-7', fields: { firstname: null } },
      { found: true, recordId: '9', externalId: 'C-9', fields: { firstname: null } },
      { found: false },
    ]);
  });

  it('throws an error of another kind inside a 207 instead of reading its ids as absent', async () => {
    const { stub } = io(() => ({ results: [], errors: [{ status: 'error', category: 'RATE_LIMITS', message: 'You have reached your ten_secondly_rolling limit.', context: { ids: ['C-1'] } }] }));
    await expect(readRecords(stub, 'contact', ['C-1'], request)).rejects.toMatchObject({ kind: 'rate_limited' });
  });
});
