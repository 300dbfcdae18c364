import { Connection } from 'jsforce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSalesforceState, fakeSalesforceFromState, type FakeSalesforce } from '../../../adapters/salesforce/fake/salesforce-fake.js';
import { soqlIn } from '../../../adapters/salesforce/soql.js';

const N = 50_000;
let fake: FakeSalesforce;
let conn: Connection;
let stop: () => Promise<void> = async () => undefined;
const ids: string[] = [];

interface SaveResult { id: string | null; success: boolean; created?: boolean; errors: Array<{ statusCode?: string; message: string }> }
const upsert = (sobject: string, records: Record<string, unknown>[], field: string, allOrNone = false) =>
  conn.sobject(sobject).upsert(records, field, { allOrNone }) as unknown as Promise<SaveResult[]>;

beforeAll(async () => {
  const state = new FakeSalesforceState({ dailyLimit: 1_000_000 });
  state.defineField('Contact', 'Badge__c', { type: 'string', unique: true, caseSensitive: false });
  for (let i = 0; i < N; i++) ids.push(state.seed('Contact', { AI_External_Id__c: `C-${i}`, LastName: `L${i}`, Badge__c: `B-${i}` }));
  fake = fakeSalesforceFromState(state);
  const front = await fake.open('loopback');
  stop = front.stop;
  conn = new Connection({ instanceUrl: front.url, accessToken: 'test-token', version: '60.0' });
});
afterAll(() => stop());

describe('fakeSalesforce seeded with 50,000 records', () => {
  it('answers WHERE external id IN (...) through the index, case-insensitively, in creation order', async () => {
    const r = await conn.query<{ Id: string; AI_External_Id__c: string }>(`SELECT Id, AI_External_Id__c FROM Contact WHERE ${soqlIn('AI_External_Id__c', ['c-40000', 'C-7', 'C-7', 'missing'])}`);
    expect(r.records.map((x) => [x.Id, x.AI_External_Id__c])).toEqual([[ids[7], 'C-7'], [ids[40000], 'C-40000']]);
  });

  it('updates a seeded record by external id and keeps the order of records()', async () => {
    const [r] = await upsert('Contact', [{ AI_External_Id__c: 'C-25000', FirstName: 'Mid' }], 'AI_External_Id__c');
    expect(r).toMatchObject({ id: ids[25000], success: true, created: false });
    const records = fake.records('Contact');
    expect(records).toHaveLength(N);
    expect([records[0]!.Id, records[25000]!.Id, records[N - 1]!.Id]).toEqual([ids[0], ids[25000], ids[N - 1]]);
  });

  it('still refuses a value another record holds in a case-insensitive Unique field, naming that record', async () => {
    const [clash, ok] = await upsert('Contact', [{ AI_External_Id__c: 'new-1', LastName: 'N', Badge__c: 'b-4242' }, { AI_External_Id__c: 'new-2', LastName: 'N', Badge__c: 'B-new' }], 'AI_External_Id__c');
    expect(clash!.errors[0]).toMatchObject({ statusCode: 'DUPLICATE_VALUE', message: `duplicate value found: Badge__c duplicates value on record with id: ${ids[4242]}` });
    expect(ok).toMatchObject({ success: true, created: true });
    const [again] = await upsert('Contact', [{ AI_External_Id__c: 'new-3', LastName: 'N', Badge__c: 'b-NEW' }], 'AI_External_Id__c');
    expect(again!.errors[0]!.message).toBe(`duplicate value found: Badge__c duplicates value on record with id: ${ok!.id}`);
  });

  it('creates Tasks on seeded parents and finds them by parent', async () => {
    const results = await upsert('Task', [{ AI_Idempotency_Key__c: 't-1', Subject: 'a', WhoId: ids[123] }, { AI_Idempotency_Key__c: 't-2', Subject: 'b', WhoId: ids[49999] }], 'AI_Idempotency_Key__c');
    expect(results.map((r) => r.created)).toEqual([true, true]);
    const r = await conn.query<{ AI_Idempotency_Key__c: string }>(`SELECT AI_Idempotency_Key__c FROM Task WHERE ${soqlIn('WhoId', [ids[49999]!])}`);
    expect(r.records.map((x) => x.AI_Idempotency_Key__c)).toEqual(['t-2']);
  });

  it('rolls an all-or-none batch back, indexes included', async () => {
    const results = await upsert('Contact', [{ AI_External_Id__c: 'C-1', LastName: 'Changed', Badge__c: 'B-rolled' }, { AI_External_Id__c: 'rb-1', LastName: '' }], 'AI_External_Id__c', true);
    expect(results.every((r) => !r.success)).toBe(true);
    expect(fake.records('Contact').find((r) => r.Id === ids[1])).toMatchObject({ LastName: 'L1', Badge__c: 'B-1' });
    const [reuse] = await upsert('Contact', [{ AI_External_Id__c: 'rb-2', LastName: 'N', Badge__c: 'B-rolled' }], 'AI_External_Id__c');
    expect(reuse).toMatchObject({ success: true, created: true });
    const [taken] = await upsert('Contact', [{ AI_External_Id__c: 'rb-3', LastName: 'N', Badge__c: 'b-1' }], 'AI_External_Id__c');
    expect(taken!.errors[0]!.message).toContain(ids[1]);
  });
});
