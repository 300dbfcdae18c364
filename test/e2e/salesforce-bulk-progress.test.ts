/**
 * The bulk lane's progress events (`bulk.onProgress`, the CLI's job line) against fakeSalesforce
 * over loopback: a job the lane uploads reports how many rows it uploaded; a job followed by a
 * process started again with only its id reports no upload count (Bulk API 2.0 job info does not
 * say it), never a made-up 0.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { salesforceAdapter, toCsv } from '../../adapters/salesforce/index.js';
import type { BulkProgress } from '../../adapters/salesforce/salesforce-options.js';
import { harness, TOKEN, type Harness } from './salesforce-helpers.js';

const EXT = 'AI_External_Id__c';
const hooks = { onJob: async () => undefined, onUploaded: async () => undefined };
const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ [EXT]: `c-${i}`, LastName: `Last ${i}` }));

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

/** A fake org whose jobs complete on their third poll, and an adapter collecting its progress events. */
async function org(): Promise<Harness & { events: BulkProgress[] }> {
  const events: BulkProgress[] = [];
  const h = await harness('loopback', { dailyLimit: 1_000_000, bulk: { pollsToComplete: 3 } }, { bulk: { sleep: async () => undefined, onProgress: (p) => events.push(p) } });
  stops.push(h.stop);
  return { ...h, events };
}

describe('bulk lane progress', () => {
  it('a job the lane uploads reports its rows uploaded: 0 when created, then every row', async () => {
    const { adapter, events } = await org();
    const results = await adapter.bulkLane!.upsert('contact', rows(40).map((r) => ({ key: `k-${r[EXT]}`, object: 'contact', externalId: r[EXT]!, fields: { LastName: r.LastName! } })), hooks);
    expect(results.size).toBe(40);
    expect(events[0]).toMatchObject({ object: 'contact', state: 'Open', uploaded: 0 });
    expect(events.slice(1).map((e) => e.uploaded)).toEqual(events.slice(1).map(() => 40));
    expect(events.at(-1)).toMatchObject({ state: 'JobComplete', uploaded: 40, processed: 40, failed: 0 });
  });

  it.each([
    ['closed by the process that died', true],
    ['left Open after its upload was answered', false],
  ])('a job followed after a restart (%s) reports no upload count', async (_, closed) => {
    const { adapter, fake, instanceUrl } = await org();
    // The first process creates the job, uploads its rows (and closes it, or dies first): only the job id survives.
    const job = await adapter.bulk.createJob({ object: 'Contact', externalIdFieldName: EXT });
    await adapter.bulk.upload(job.id, toCsv([EXT, 'LastName'], rows(30)));
    if (closed) await adapter.bulk.close(job.id);

    const events: BulkProgress[] = [];
    // A process started again: a new adapter, the job known by its id alone.
    const again = salesforceAdapter({ instanceUrl, accessToken: TOKEN, objects: { contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: ['LastName'] } }, bulk: { sleep: async () => undefined, onProgress: (p) => events.push(p) } });
    const results = await again.bulkLane!.follow('contact', { id: job.id, uploaded: true });
    expect(results.size).toBe(30);
    expect(fake.records('Contact')).toHaveLength(30);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e).not.toHaveProperty('uploaded');
    expect(events.at(-1)).toEqual({ object: 'contact', jobId: job.id, state: 'JobComplete', processed: 30, failed: 0 });
  });
});
