/**
 * Values keep their meaning through a Bulk job exactly as through Collections: the same actions,
 * checked against field definitions pulled from the fake, sent once through each lane into two
 * orgs, end with the same outcomes and the same stored values. Values that cannot be represented
 * (an impossible date in every form, a label two options share) are rejected before any request,
 * whichever lane would have carried them.
 */
import { describe, expect, it } from 'vitest';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import { salesforceCli } from '../../adapters/salesforce/salesforce-cli.js';
import type { FakeSalesforce } from '../../adapters/testing/index.js';
import type { Outcome } from '../../src/index.js';
import { bulkOrgs, EXT, type BulkOrg } from './salesforce-bulk-helpers.js';
import { TOKEN } from './salesforce-helpers.js';

const FIELDS = ['LastName', 'Visit_Date__c', 'Visit_At__c', 'Big__c', 'Level__c'];
const objects: SalesforceAdapterOptions['objects'] = { contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: FIELDS } };
const org = bulkOrgs(objects, 'values');

/** One contact per edge value (and 2,000 plain ones, so `auto` would take the call too). */
const EDGES: Array<Record<string, string | number | null>> = [
  { Visit_Date__c: '2026-02-30' },
  { Visit_Date__c: '2026-02-30T10:00:00Z' },
  { Visit_Date__c: '2026-12-01T23:30:00-05:00' },
  { Visit_Date__c: '2026-12-01' },
  { Visit_At__c: '2026-02-30T10:00:00Z' },
  { Visit_At__c: '2026-12-01T23:30:00-05:00' },
  { Visit_At__c: '2026-12-01T10:00:00Z' },
  { Big__c: '12345678901234567890' },
  { Big__c: '-007.250' },
  { Big__c: 1.5 },
  { Level__c: 'primary ' },
  { Level__c: 'Shared' },
  { Level__c: 'S1' },
  { Level__c: 'Tertiary' },
  { LastName: '  spaced  ' },
];

async function prepared(): Promise<BulkOrg> {
  const made = await org({ pollsToComplete: 1 });
  const f = made.fake;
  f.defineField('Contact', 'Visit_Date__c', { type: 'date' });
  f.defineField('Contact', 'Visit_At__c', { type: 'datetime' });
  f.defineField('Contact', 'Big__c', { type: 'double' });
  f.defineField('Contact', 'Level__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'P1', label: 'Primary' }, { value: 'S1', label: 'Shared' }, { value: 'S2', label: 'Shared' }] });
  return made;
}

const stored = (fake: FakeSalesforce) =>
  new Map(fake.records('Contact').map((r) => [String(r[EXT]), Object.fromEntries(FIELDS.filter((k) => r[k] !== undefined && r[k] !== null).map((k) => [k, r[k]]))]));

const shape = (o: Outcome) => ({ status: o.status, ...(o.error ? { code: o.error.vendorCode ?? o.error.code, path: o.error.path, message: o.error.message } : {}), ...(o.normalized ? { normalized: o.normalized } : {}) });

describe('values through a Bulk job and through Collections', () => {
  it('the same actions end the same way, with the same values stored; impossible values are rejected before any request', async () => {
    const bulkOrg = await prepared();
    const collectionsOrg = await prepared();
    const definitions = await salesforceCli.pullFields!({ instanceUrl: bulkOrg.url, objects } as never, { SF_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T00:00:00Z') });
    const actions = [...EDGES.map((fields, i) => ({ i, fields })), ...Array.from({ length: 2_000 }, (_, i) => ({ i: EDGES.length + i, fields: {} }))].map(({ i, fields }) => ({
      source: 'values', eventId: `v-${i}`, occurredAt: '2026-12-01T09:00:00.000Z', op: 'upsert', object: 'contact', externalId: `c-${i}`, fields: { LastName: `Last ${i}`, ...fields },
    }));
    bulkOrg.fake.core.resetLog();
    collectionsOrg.fake.core.resetLog();
    const viaBulk = await bulkOrg.sync({ adapter: { fieldDefinitions: definitions } }).applyMany(actions, { bulk: 'always' });
    const viaCollections = await collectionsOrg.sync({ adapter: { fieldDefinitions: definitions } }).applyMany(actions, { bulk: 'never' });

    expect(bulkOrg.fake.bulkJobs()).toHaveLength(1);
    expect(collectionsOrg.fake.bulkJobs()).toHaveLength(0);
    expect(viaBulk.map(shape)).toEqual(viaCollections.map(shape));
    expect(stored(bulkOrg.fake)).toEqual(stored(collectionsOrg.fake));
    // A number with more digits than a double holds leaves as its digits through either lane, never rounded.
    const upload = bulkOrg.fake.requests.find((r) => r.method === 'PUT')!;
    expect(upload.raw ?? String(upload.body)).toContain('c-7,Last 7,,,12345678901234567890,');
    expect(collectionsOrg.fake.requests.some((r) => (r.raw ?? '').includes('"Big__c":12345678901234567890'))).toBe(true);
    // What could not be represented was never sent: no row for it in the job, no record in either org.
    const rejected = viaBulk.flatMap((o, i) => (o.status === 'rejected' ? [`c-${i}`] : []));
    expect(rejected).toEqual(expect.arrayContaining(['c-0', 'c-1', 'c-4', 'c-11']));
    for (const id of rejected) expect(stored(bulkOrg.fake).has(id)).toBe(false);
    expect(bulkOrg.fake.bulkJobs()[0]!.rows).toBe(actions.length - rejected.length);
  });
});
