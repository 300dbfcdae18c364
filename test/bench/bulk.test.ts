/**
 * The short version of bench:bulk: a backfill of contacts linked to accounts through the bulk lane
 * and through Collections writes every row once, linked, in the requests each lane implies, and
 * the same actions again make 0 requests on both. Asserts request counts only, never speed.
 */
import { describe, expect, it } from 'vitest';
import { runBulkBench } from '../../bench/bulk.js';

describe('bench:bulk (short)', () => {
  it('3,000 contacts on 100 accounts: one job against 16 Collections upserts; the replay makes 0 requests', async () => {
    const r = await runBulkBench({ n: 3_000, accounts: 100, latencyMs: 1, concurrency: 4, pollMs: 5_000, rowsPerPoll: 1_000, clockScale: 0.001, passes: 2, collectionsMs: [1_000, 3_000] });
    const lanes = r.lanes as Record<'bulk' | 'collections', Record<string, unknown>>;
    // The accounts are under minRecords (2,000): one Collections upsert in both lanes.
    expect(lanes.bulk).toMatchObject({
      requests: 8,
      apiCallsCounted: 8,
      byEndpoint: {
        'PATCH /composite/sobjects/Account/AI_External_Id__c': 1,
        'POST /jobs/ingest': 1,
        'PUT /jobs/ingest/{id}/batches': 1,
        'PATCH /jobs/ingest/{id}': 1,
        'GET /jobs/ingest/{id}': 3,
        'GET /jobs/ingest/{id}/successfulResults': 1,
      },
      bulkJobs: [{ object: 'Contact', rows: 3_000, state: 'JobComplete' }],
      bulkRecordsCounted: 3_000,
      uploadBytes: expect.any(Number),
      replay: { requests: 0 },
    });
    expect(lanes.bulk.uploadBytes as number).toBeGreaterThan(3_000 * 30);
    expect(lanes.collections).toMatchObject({
      requests: 16,
      apiCallsCounted: 16,
      byEndpoint: { 'PATCH /composite/sobjects/Account/AI_External_Id__c': 1, 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 15 },
      bulkJobs: [],
      uploadBytes: 0,
      replay: { requests: 0 },
    });
    // Three polls of 5 s each put back at full length; none in Collections.
    expect((lanes.bulk.modelled as { pollWaitsSeconds: number }).pollWaitsSeconds).toBe(15);
    expect((lanes.collections.modelled as { pollWaitsSeconds: number }).pollWaitsSeconds).toBe(0);
    // The estimate's arithmetic: one account round and ceil(15 / 4) contact rounds of 1 to 3 s.
    expect(lanes.collections.estimateRealOrg).toEqual({ collectionRounds: 5, otherRequests: 0, seconds: [5, 15] });
    expect(lanes.bulk.estimateRealOrg).toMatchObject({ collectionRounds: 1, otherRequests: 7 });
  });
});
