/**
 * A Salesforce backfill through `crm-upsert sync FILE --bulk auto` (the built bin, fakeSalesforce on
 * loopback, a SQLite ledger): 500 accounts and 10,000 contacts linked to them. The contacts go in
 * one Bulk API 2.0 job, the accounts (under minRecords) in three Collections upserts; the same file
 * again makes 0 requests. Then the same backfill killed (SIGKILL) right after its job's upload and
 * close, and its rerun killed again while Salesforce processes the job: the third run follows the
 * same job to its end. One job, one upload, every contact once with its account.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeSalesforce, type FakeSalesforce } from '../../adapters/testing/index.js';
import { BACKFILL_REQUESTS, expectLinked } from '../e2e/salesforce-bulk-helpers.js';
import { ensureBuilt, runCli, spawnCli, tempDir, type SpawnedCli } from './helpers.js';

const env = { SF_ACCESS_TOKEN: 'sf-bulk-backfill-token' };
const EXT = 'AI_External_Id__c';
const ACCOUNTS = 500;
const CONTACTS = 10_000;
const OBJECTS = {
  company: { kind: 'record', sobject: 'Account', externalIdField: EXT, fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: ['Email', 'LastName'], links: { company: 'AccountId' } },
};
const occurredAt = '2026-12-01T09:00:00.000Z';
const lines = [
  ...Array.from({ length: ACCOUNTS }, (_, i) => ({ source: 'backfill', eventId: `co-${i}`, occurredAt, op: 'upsert', object: 'company', externalId: `a-${i}`, fields: { Name: `Account ${i}` } })),
  ...Array.from({ length: CONTACTS }, (_, i) => ({
    source: 'backfill', eventId: `ct-${i}`, occurredAt, op: 'upsert', object: 'contact', externalId: `c-${i}`,
    fields: { LastName: i % 97 === 0 ? `O'Neil, "Jr" ${i}` : `Last ${i}`, Email: `c${i}@example.com` }, links: [{ object: 'company', externalId: `a-${i % ACCOUNTS}` }],
  })),
];

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});
beforeAll(() => ensureBuilt());

/** A fake org processing each job over `polls` job-info reads, a config polling every `pollMs`, and the backfill file. */
async function org(polls: number, pollMs: number): Promise<{ fake: FakeSalesforce; config: string; file: string }> {
  const fake = fakeSalesforce({ accessToken: env.SF_ACCESS_TOKEN, dailyLimit: 10_000_000, bulk: { pollsToComplete: polls } });
  const server = await fake.listen();
  stops.push(server.close);
  const dir = tempDir('crm-upsert-bulk-backfill-');
  const config = join(dir, 'crm-upsert.config.json');
  writeFileSync(config, JSON.stringify({ crm: 'salesforce', ledger: `sqlite:${join(dir, 'ledger.db')}`, salesforce: { instanceUrl: server.instanceUrl, objects: OBJECTS, bulk: { pollIntervalMs: pollMs, maxPollIntervalMs: pollMs } } }));
  const file = join(dir, 'backfill.jsonl');
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return { fake, config, file };
}

const summary = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { counts: Record<string, number>; apiCalls: number };

/** Resolves once the fake's one job is in `state`; fails if the run ends first. */
async function jobIn(fake: FakeSalesforce, state: string, run: SpawnedCli): Promise<void> {
  let over = false;
  void run.done.then(() => (over = true));
  while (fake.bulkJobs()[0]?.state !== state) {
    if (over) throw new Error(`the run ended before the job was ${state}: ${JSON.stringify(fake.bulkJobs())}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('a Salesforce backfill through sync --bulk auto', () => {
  it(`${ACCOUNTS} accounts and ${CONTACTS} contacts: one job for the contacts (6 requests), 3 Collections upserts for the accounts; the same file again: 0 requests`, async () => {
    const { fake, config, file } = await org(2, 1);
    const first = await runCli(['sync', file, '--config', config, '--bulk', 'auto'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(summary(first.stdout)).toMatchObject({ counts: { created: ACCOUNTS + CONTACTS }, apiCalls: 9 });
    expect(fake.counts()).toEqual(BACKFILL_REQUESTS);
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', operation: 'upsert', externalIdFieldName: EXT, state: 'JobComplete', rows: CONTACTS, numberRecordsFailed: 0 }]);
    expectLinked(fake, CONTACTS, ACCOUNTS);

    fake.core.resetLog();
    const again = await runCli(['sync', file, '--config', config, '--bulk', 'auto'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(summary(again.stdout)).toMatchObject({ counts: { replayed: ACCOUNTS + CONTACTS }, apiCalls: 0 });
    expect(fake.counts()).toEqual({});
  });

  it('killed (SIGKILL) after the upload and again while Salesforce processes the job: the runs started again follow the same job', async () => {
    // Four job-info reads to complete, 300 ms between polls: time to kill between them.
    const { fake, config, file } = await org(4, 300);
    const args = ['sync', file, '--config', config, '--bulk', 'auto'];

    // 1. Killed once the job is closed (UploadComplete), before its first poll.
    const first = spawnCli(args, { env });
    await jobIn(fake, 'UploadComplete', first);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(1);

    // 2. Started again: it takes the dead run's claims over at once (same host) and follows the same
    //    job; killed while Salesforce processes it.
    const second = spawnCli(args, { env });
    await jobIn(fake, 'InProgress', second);
    second.child.kill('SIGKILL');
    expect((await second.done).signal).toBe('SIGKILL');

    // 3. Started again: it follows the job to its end and settles every claim.
    const third = await runCli(args, { env });
    expect(third.code, third.stderr).toBe(0);
    expect(summary(third.stdout).counts).toEqual({ replayed: ACCOUNTS, created: CONTACTS });
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', state: 'JobComplete', rows: CONTACTS }]);
    expect(fake.count('POST /jobs/ingest')).toBe(1);
    expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(1);
    expect(fake.count('PATCH /composite/sobjects/Contact')).toBe(0);
    expectLinked(fake, CONTACTS, ACCOUNTS);

    // 4. Once more: every line replayed, 0 requests.
    fake.core.resetLog();
    const fourth = await runCli(args, { env });
    expect(summary(fourth.stdout)).toMatchObject({ counts: { replayed: ACCOUNTS + CONTACTS }, apiCalls: 0 });
    expect(fake.counts()).toEqual({});
  });
});
