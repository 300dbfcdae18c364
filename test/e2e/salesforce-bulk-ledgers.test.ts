/**
 * The bulk lane on the shared ledgers (Postgres, Redis): a job's note is taken with the claims of
 * its 10,000 rows in one round trip, the same actions again cost 0 requests, and a holder stopped
 * while Salesforce processes its job leaves it to the next holder, which follows the same job once
 * the claims' lease ran out. In CI an unreachable Postgres or Redis fails this file.
 */
import { describe, expect, it } from 'vitest';
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import type { Outcome, RateBudget, Sync } from '../../src/index.js';
import { postgresLedgerUnderTest, redisLedgerUnderTest, type LedgerUnderTest } from '../helpers/services.js';
import { BACKFILL_REQUESTS, bulkOrgs, EXT, expectLinked } from './salesforce-bulk-helpers.js';
import { statuses } from './salesforce-helpers.js';

const objects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: EXT, fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: ['Email', 'LastName'], links: { company: 'AccountId' } },
};
const occurredAt = '2026-12-01T09:00:00.000Z';
const company = (i: number) => ({ source: 'backfill', eventId: `co-${i}`, occurredAt, op: 'upsert', object: 'company', externalId: `a-${i}`, fields: { Name: `Account ${i}` } });
const contact = (i: number, accounts: number) => ({
  source: 'backfill', eventId: `ct-${i}`, occurredAt, op: 'upsert', object: 'contact', externalId: `c-${i}`,
  fields: { LastName: `Last ${i}`, Email: `c${i}@example.com` }, links: [{ object: 'company', externalId: `a-${i % accounts}` }],
});

async function each(sync: Sync, actions: unknown[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for await (const settled of sync.applyEach(actions)) for (const { index, outcome } of settled) outcomes[index] = outcome;
  return outcomes;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ledgers: Array<[string, () => Promise<LedgerUnderTest | undefined>]> = [
  ['postgres', postgresLedgerUnderTest],
  ['redis', redisLedgerUnderTest],
];

describe.each(ledgers)('the bulk lane on %s', (name, ledger) => {
  // Resolved once per file: undefined (skipped) only off CI when the service does not answer.
  const available = ledger().then(async (l) => (l ? (await l.drop(), true) : false));
  const org = bulkOrgs(objects, `lane-${name}`, async () => (await ledger())!);

  it('500 accounts and 10,000 contacts: one job for the contacts; the same actions again: 0 requests', async (t) => {
    if (!(await available)) return t.skip();
    const { fake, sync } = await org({ pollsToComplete: 2 });
    const actions = [...Array.from({ length: 500 }, (_, i) => company(i)), ...Array.from({ length: 10_000 }, (_, i) => contact(i, 500))];
    expect(statuses(await each(sync(), actions))).toEqual({ created: 10_500 });
    expect(fake.counts()).toEqual(BACKFILL_REQUESTS);
    expectLinked(fake, 10_000, 500);
    fake.core.resetLog();
    expect(statuses(await each(sync(), actions))).toEqual({ replayed: 10_500 });
    expect(fake.counts()).toEqual({});
  });

  it('a holder stopped while Salesforce processes its job: the next holder follows the same job once the lease ran out', async (t) => {
    if (!(await available)) return t.skip();
    const { fake, sync } = await org({ pollsToComplete: 2 });
    expect(statuses(await sync().applyMany(Array.from({ length: 20 }, (_, i) => company(i))))).toEqual({ created: 20 });
    const actions = Array.from({ length: 2_500 }, (_, i) => contact(i, 20));
    // Its fourth request (the job's first poll) never answers; then the process stops.
    let sent = 0;
    let reach!: () => void;
    const reached = new Promise<void>((r) => (reach = r));
    let stop!: (err: Error) => void;
    const stopped = new Promise<never>((_, reject) => (stop = reject));
    stopped.catch(() => undefined);
    const budget: RateBudget = { acquire: async () => (++sent >= 4 ? (reach(), stopped) : undefined) };
    const first = sync({ rateBudget: budget, leaseMs: 1_000 }).applyMany(actions);
    await reached;
    stop(new Error('the process stopped'));
    await expect(first).rejects.toThrow('the process stopped');
    expect(fake.bulkJobs()).toMatchObject([{ state: 'UploadComplete' }]);

    // Its claims were left to their lease (the job may still write them): taken over once it ran out.
    await sleep(1_200);
    const outcomes = await sync().applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 2_500 });
    expect(fake.bulkJobs()).toMatchObject([{ state: 'JobComplete', rows: 2_500 }]);
    expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(1);
    expectLinked(fake, 2_500, 20);
  });
});
