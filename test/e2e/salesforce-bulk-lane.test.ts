/**
 * The bulk lane under the ledger: createSync over salesforceAdapter (real jsforce Connection) and
 * fakeSalesforce over loopback, a SQLite ledger. Large upserts go through one Bulk API 2.0 job per
 * object, links as relationship columns; the same actions again cost 0 requests; refused rows fail
 * naming field and reason and a retry of them writes each once; a holder that stops at any point of
 * a job leaves it on its claims, and whoever takes them over follows the same job.
 */
import { describe, expect, it } from 'vitest';
import type { SalesforceAdapter, SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import type { FakeBulkOptions } from '../../adapters/testing/index.js';
import type { Outcome, RateBudget, Sync } from '../../src/index.js';
import { BACKFILL_REQUESTS, bulkOrgs, expectLinked, EXT, type BulkOrg } from './salesforce-bulk-helpers.js';
import { statuses } from './salesforce-helpers.js';

const bulkObjects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: EXT, fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: ['Email', 'FirstName', 'LastName', 'Level__c'], links: { company: 'AccountId' } },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'Status'], parents: { contact: 'WhoId', company: 'WhatId' } },
};
const task = (i: number, parent = `c-${i}`) => ({
  source: 'backfill', eventId: `tk-${i}`, occurredAt, op: 'create', object: 'task', target: { object: 'contact', externalId: parent },
  fields: { Subject: `Call ${i}`, Description: i % 50 === 0 ? 'said "yes", then\nhung up' : `notes ${i}`, Status: 'Completed' },
  links: [{ object: 'company', externalId: `a-${i % 20}` }],
});

const occurredAt = '2026-12-01T09:00:00.000Z';
const company = (i: number) => ({ source: 'backfill', eventId: `co-${i}`, occurredAt, op: 'upsert', object: 'company', externalId: `a-${i}`, fields: { Name: `Account ${i}` } });
const contact = (i: number, accounts: number, extra: Record<string, string | null> = {}): { fields: Record<string, string | null>; links: Array<{ object: string; externalId: string }>; [k: string]: unknown } => ({
  source: 'backfill', eventId: `ct-${i}`, occurredAt, op: 'upsert', object: 'contact', externalId: `c-${i}`,
  fields: { LastName: i % 97 === 0 ? `O'Neil, "Jr"\nthe second ${i}` : `Last ${i}`, FirstName: `First ${i}`, Email: `c${i}@example.com`, ...extra },
  links: [{ object: 'company', externalId: `a-${i % accounts}` }],
});
const backfill = (contacts: number, accounts: number) => [...Array.from({ length: accounts }, (_, i) => company(i)), ...Array.from({ length: contacts }, (_, i) => contact(i, accounts))];

const newOrg = bulkOrgs(bulkObjects, 'lane');
/** A fake org whose Contact has a restricted picklist, Level__c. */
async function org(bulk: FakeBulkOptions = {}): Promise<BulkOrg> {
  const made = await newOrg(bulk);
  made.fake.defineField('Contact', 'Level__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'Primary' }, { value: 'Secondary' }] });
  return made;
}

const byExt = (records: Array<Record<string, unknown>>) => new Map(records.map((r) => [String(r[EXT]), r]));

async function each(sync: Sync, actions: unknown[], options: Parameters<Sync['applyEach']>[1] = {}): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for await (const settled of sync.applyEach(actions, options)) for (const { index, outcome } of settled) outcomes[index] = outcome;
  return outcomes;
}

describe('the bulk lane (Salesforce Bulk API 2.0) under the ledger', () => {
  it('10,000 contacts linked to 500 accounts: one job for the contacts, 6 requests; the same actions again: 0 requests', async () => {
    const { fake, sync } = await org({ pollsToComplete: 2 });
    const actions = backfill(10_000, 500);
    const first = await each(sync(), actions);
    expect(statuses(first)).toEqual({ created: 10_500 });
    // 500 accounts are under minRecords (2,000): three Collections upserts. The contacts: create,
    // upload, close, two polls, the successful results.
    expect(fake.counts()).toEqual(BACKFILL_REQUESTS);
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', operation: 'upsert', state: 'JobComplete', rows: 10_000 }]);
    expectLinked(fake, 10_000, 500);
    const stored = byExt(fake.records('Contact'));
    for (let i = 0; i < 10_000; i++) expect(first[500 + i]).toMatchObject({ status: 'created', recordId: stored.get(`c-${i}`)!.Id });
    expect(stored.get('c-97')!.LastName).toBe(`O'Neil, "Jr"\nthe second 97`);

    fake.core.resetLog();
    const again = await each(sync(), actions);
    expect(statuses(again)).toEqual({ replayed: 10_500 });
    expect(fake.counts()).toEqual({});
    expect(again.map((o) => o.recordId)).toEqual(first.map((o) => o.recordId));
  });

  it('applyMany: bulk auto below minRecords stays on Collections, always sends one job, never none; a new event updates through a job', async () => {
    const { fake, sync } = await org({ pollsToComplete: 1 });
    const s = sync();
    expect(statuses(await s.applyMany(backfill(300, 10)))).toEqual({ created: 310 });
    expect(fake.bulkJobs()).toHaveLength(0);
    expect(fake.count('PATCH /composite/sobjects/Contact/AI_External_Id__c')).toBe(2);

    fake.core.resetLog();
    const update = Array.from({ length: 300 }, (_, i) => ({ ...contact(i, 10), eventId: `ct-${i}-v2`, occurredAt: '2026-12-02T09:00:00.000Z', fields: { FirstName: `Renamed ${i}`, Level__c: 'Secondary' } }));
    const updated = await s.applyMany(update, { bulk: 'always' });
    expect(statuses(updated)).toEqual({ updated: 300 });
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', state: 'JobComplete', rows: 300 }]);
    expect(fake.count('PATCH /composite/sobjects')).toBe(0);
    const stored = byExt(fake.records('Contact'));
    expect(stored.size).toBe(300);
    expect(stored.get('c-5')).toMatchObject({ FirstName: 'Renamed 5', Level__c: 'Secondary', LastName: 'Last 5', AccountId: byExt(fake.records('Account')).get('a-5')!.Id });

    // The same values from a newer event: unchanged, nothing sent, whatever the lane.
    fake.core.resetLog();
    const same = update.map((a) => ({ ...a, eventId: `${a.eventId}-v3`, occurredAt: '2026-12-03T09:00:00.000Z' }));
    expect(statuses(await s.applyMany(same, { bulk: 'always' }))).toEqual({ unchanged: 300 });
    expect(fake.counts()).toEqual({});

    // A clear ('' or null) empties the field in the job as through Collections.
    const cleared = [0, 1].map((i) => ({ ...contact(i, 10), eventId: `ct-${i}-v4`, occurredAt: '2026-12-04T09:00:00.000Z', fields: { FirstName: i === 0 ? '' : null, Level__c: null } }));
    expect(statuses(await s.applyMany(cleared, { bulk: 'always' }))).toEqual({ updated: 2 });
    const after = byExt(fake.records('Contact'));
    for (const ext of ['c-0', 'c-1']) {
      expect(after.get(ext)!.FirstName ?? null).toBeNull();
      expect(after.get(ext)!.Level__c ?? null).toBeNull();
    }
    // never: 2,100 new contacts (over minRecords) go out as 11 Collections upserts.
    fake.core.resetLog();
    const more = Array.from({ length: 2_100 }, (_, i) => ({ ...contact(1_000 + i, 10), externalId: `n-${i}` }));
    expect(statuses(await s.applyMany(more, { bulk: 'never' }))).toEqual({ created: 2_100 });
    expect(fake.counts()).toEqual({ 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 11 });
    expect(fake.bulkJobs()).toHaveLength(2);
  });

  it('1% of rows refused (a bad picklist value, a missing account): failed naming field and reason, the rest written; a retry after the fix writes them once', async () => {
    const { fake, sync } = await org({ pollsToComplete: 2 });
    const s = sync();
    expect(statuses(await s.applyMany(Array.from({ length: 50 }, (_, i) => company(i))))).toEqual({ created: 50 });
    const actions = Array.from({ length: 3_000 }, (_, i) => contact(i, 50, { Level__c: 'Primary' }));
    const bad = new Set<number>();
    for (let i = 7; i < 3_000; i += 200) {
      actions[i]!.fields.Level__c = 'Tertiary';
      bad.add(i);
    }
    for (let i = 107; i < 3_000; i += 200) {
      actions[i]!.links = [{ object: 'company', externalId: `a-missing-${i}` }];
      bad.add(i);
    }
    fake.core.resetLog();
    const outcomes = await s.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 3_000 - bad.size, failed: bad.size });
    expect(fake.bulkJobs()).toHaveLength(1);
    for (let i = 7; i < 3_000; i += 200) {
      expect(outcomes[i]!.error).toMatchObject({ path: 'fields.Level__c', vendorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', retryable: false });
      expect(outcomes[i]!.error!.message).toContain('Contact.Level__c = "Tertiary" refused');
    }
    for (let i = 107; i < 3_000; i += 200) {
      // As through Collections: the link is named, and a retry once it exists writes the row.
      expect(outcomes[i]!.error).toMatchObject({ vendorCode: 'LINK_NOT_FOUND', retryable: false });
      expect(outcomes[i]!.error!.message).toContain(`link company "a-missing-${i}" (Account.${EXT}) does not exist in Salesforce`);
      expect(outcomes[i]!.error!.message).toContain(`no Account has ${EXT} "a-missing-${i}"`);
    }
    expect(fake.records('Contact')).toHaveLength(3_000 - bad.size);

    // The fix: the picklist learns the value, the missing accounts are written.
    fake.defineField('Contact', 'Level__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'Primary' }, { value: 'Secondary' }, { value: 'Tertiary' }] });
    await s.applyMany([...bad].filter((i) => i % 200 === 107).map((i) => ({ ...company(i), externalId: `a-missing-${i}` })));
    fake.core.resetLog();
    const failed = await s.ledger.list({ status: 'failed' });
    expect(failed).toHaveLength(bad.size);
    const retried = await s.retryStored(failed);
    expect(statuses(retried)).toEqual({ created: bad.size });
    // 30 rows: under minRecords, one Collections upsert.
    expect(fake.counts()).toEqual({ 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 1 });
    expect(fake.records('Contact')).toHaveLength(3_000);
    expect(byExt(fake.records('Contact')).get('c-107')!.AccountId).toBe(byExt(fake.records('Account')).get('a-missing-107')!.Id);
    fake.core.resetLog();
    expect(statuses(await s.applyMany(actions))).toEqual({ replayed: 3_000 });
    expect(fake.counts()).toEqual({});
  });

  /**
   * A holder that stops answering at request `stopAt` of its job and never sends again (as a
   * killed process): 1 create, 2 upload, 3 close, 4 and 5 polls, 6 the successful results.
   */
  function stoppingAt(stopAt: number): { budget: RateBudget; reached: Promise<void>; kill: () => void } {
    let sent = 0;
    let dead = false;
    let reach!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    let kill!: (err: Error) => void;
    const killed = new Promise<never>((_, reject) => (kill = reject));
    killed.catch(() => undefined);
    return {
      reached,
      kill: () => kill(new Error('the process was killed')),
      budget: {
        async acquire() {
          if (dead) return killed;
          if (++sent < stopAt) return;
          dead = true;
          reach();
          return killed;
        },
      },
    };
  }

  it.each([
    { stopAt: 2, when: 'before its upload was answered', jobs: 2 },
    { stopAt: 3, when: 'after the upload, before the job was closed', jobs: 1 },
    { stopAt: 4, when: 'while Salesforce processes the job', jobs: 1 },
    { stopAt: 6, when: 'while the results are read', jobs: 1 },
  ])('a holder stopped $when: the next holder follows its job (jobs in the fake: $jobs), 0 duplicates, every row right', async ({ stopAt, jobs }) => {
    const { fake, sync } = await org({ pollsToComplete: 2 });
    expect(statuses(await sync().applyMany(Array.from({ length: 20 }, (_, i) => company(i))))).toEqual({ created: 20 });
    const actions = Array.from({ length: 2_500 }, (_, i) => contact(i, 20));
    // One row names an account that does not exist: refused in the job, named as through Collections by whoever reads it.
    actions[2_499]!.links = [{ object: 'company', externalId: 'a-missing' }];
    const stopping = stoppingAt(stopAt);
    const first = sync({ rateBudget: stopping.budget }).applyMany(actions);
    await stopping.reached;
    const before = fake.bulkJobs();
    expect(before).toHaveLength(1);

    // Its leases run out (seen from later), and another process takes its claims over.
    const later = sync({ now: () => Date.now() + 10 * 60_000 });
    const outcomes = await later.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 2_499, failed: 1 });
    expect(outcomes[2_499]!.error).toMatchObject({ vendorCode: 'LINK_NOT_FOUND', retryable: false });
    expect(outcomes[2_499]!.error!.message).toContain('link company "a-missing" (Account.AI_External_Id__c) does not exist in Salesforce');
    stopping.kill();
    await expect(first).rejects.toThrow();

    const all = fake.bulkJobs();
    expect(all).toHaveLength(jobs);
    // Not uploaded for sure: the first job was aborted before anything of it was processed, and the rows went into a new one.
    if (jobs === 2) expect(all).toMatchObject([{ state: 'Aborted', rows: 0 }, { state: 'JobComplete', rows: 2_500 }]);
    else expect(all).toMatchObject([{ id: before[0]!.id, state: 'JobComplete', rows: 2_500 }]);
    expect(fake.count('PATCH /composite/sobjects/Contact')).toBe(0);
    const accounts = byExt(fake.records('Account'));
    const stored = byExt(fake.records('Contact'));
    expect(fake.records('Contact')).toHaveLength(2_499);
    outcomes.slice(0, 2_499).forEach((o, i) => expect(stored.get(`c-${i}`)).toMatchObject({ Id: o.recordId, AccountId: accounts.get(`a-${i % 20}`)!.Id }));

    // Settled: the same actions again send nothing (the refused row is tried again: 1 Collections upsert).
    fake.core.resetLog();
    expect(statuses(await later.applyMany(actions))).toEqual({ replayed: 2_499, failed: 1 });
    expect(fake.counts()).toEqual({ 'PATCH /composite/sobjects/Contact/AI_External_Id__c': 1 });
  });

  it('a job still processed when polling gives up: its rows reported failed, their claims left to the lease (a new event of one waits); the next run follows the same job. A job deleted meanwhile: reported, sent again only by retry-failed', async () => {
    const { fake, sync } = await org({ pollsToComplete: 3 });
    expect(statuses(await sync().applyMany(Array.from({ length: 20 }, (_, i) => company(i))))).toEqual({ created: 20 });
    const actions = Array.from({ length: 2_400 }, (_, i) => contact(i, 20));
    const impatient = await sync({ bulk: { timeoutMs: 0 } }).applyMany(actions);
    expect(statuses(impatient)).toEqual({ failed: 2_400 });
    expect(impatient[0]!.error).toMatchObject({ vendorCode: 'BULK_JOB_TIMEOUT', retryable: true });
    const [job] = fake.bulkJobs();
    expect(job).toMatchObject({ state: 'InProgress' });

    // The job may still be writing those records: their claims are left to run out their lease, so a
    // new event of one of them waits for the claim (here at most 500 ms) instead of racing the job.
    const racing = await sync({ leaseMs: 500 }).applyMany([{ ...contact(0, 20), eventId: 'ct-0-racing', occurredAt: '2026-12-05T09:00:00.000Z', fields: { FirstName: 'Racing' } }]);
    expect(racing[0]).toMatchObject({ status: 'in_flight', error: { vendorCode: 'RECORD_IN_FLIGHT' } });

    // Once the lease ran out (seen from later), the next run follows the same job.
    const later = () => sync({ now: () => Date.now() + 10 * 60_000 });
    const again = await later().applyMany(actions);
    expect(statuses(again)).toEqual({ created: 2_400 });
    expect(fake.bulkJobs()).toMatchObject([{ id: job!.id, state: 'JobComplete', rows: 2_400 }]);
    expectLinked(fake, 2_400, 20);

    // A second batch whose job is deleted while it runs: no one can say which rows it wrote.
    const more = Array.from({ length: 2_400 }, (_, i) => ({ ...contact(i, 20), eventId: `ct-${i}-v2`, occurredAt: '2026-12-02T09:00:00.000Z', fields: { FirstName: `Second ${i}` } }));
    const s = sync({ bulk: { timeoutMs: 0 } });
    expect(statuses(await s.applyMany(more))).toEqual({ failed: 2_400 });
    const second = fake.bulkJobs()[1]!;
    await (s.adapter as SalesforceAdapter).bulk.delete(second.id);
    fake.core.resetLog();
    const lost = await later().applyMany(more);
    expect(statuses(lost)).toEqual({ failed: 2_400 });
    expect(lost[0]!.error).toMatchObject({ status: 404, retryable: false });
    // Reported, not sent again: one read of the job, no new job.
    expect(fake.counts()).toEqual({ 'GET /jobs/ingest/{id}': 1 });
    const retried = await sync().retryStored(await s.ledger.list({ status: 'failed' }));
    expect(statuses(retried)).toEqual({ updated: 2_400 });
    expect(fake.records('Contact')).toHaveLength(2_400);
    expect(byExt(fake.records('Contact')).get('c-9')!.FirstName).toBe('Second 9');
  });

  it('tasks go in a job of their own after the contacts they attach to, parent and link as reference columns; a missing parent fails PARENT_NOT_FOUND', async () => {
    const { fake, sync } = await org({ pollsToComplete: 2 });
    const actions = [...Array.from({ length: 20 }, (_, i) => company(i)), ...Array.from({ length: 2_500 }, (_, i) => contact(i, 20)), ...Array.from({ length: 2_500 }, (_, i) => task(i)), task(9_999, 'c-missing')];
    const outcomes = await each(sync(), actions);
    expect(statuses(outcomes)).toEqual({ created: 20 + 2_500 + 2_500, failed: 1 });
    expect(outcomes.at(-1)!.error).toMatchObject({ vendorCode: 'PARENT_NOT_FOUND', retryable: false });
    expect(outcomes.at(-1)!.error!.message).toContain('parent contact "c-missing"');
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', rows: 2_500, state: 'JobComplete' }, { object: 'Task', rows: 2_500, state: 'JobComplete' }]);
    // The task whose parent was never written is held back to the end of the walk (docs/api.md), where
    // its parent is read and not found: it is never sent. No task went through Collections.
    expect(fake.count('GET /query')).toBe(1);
    expect(fake.count('PATCH /composite/sobjects/Task')).toBe(0);
    const contacts = byExt(fake.records('Contact'));
    const accounts = byExt(fake.records('Account'));
    const tasks = fake.records('Task');
    expect(tasks).toHaveLength(2_500);
    const byKey = new Map(tasks.map((t) => [String(t.AI_Idempotency_Key__c), t]));
    for (let i = 0; i < 2_500; i++) {
      const t = byKey.get(outcomes[20 + 2_500 + i]!.key)!;
      expect(t).toMatchObject({ WhoId: contacts.get(`c-${i}`)!.Id, WhatId: accounts.get(`a-${i % 20}`)!.Id, Subject: `Call ${i}` });
      expect(outcomes[20 + 2_500 + i]!.recordId).toBe(t.Id);
    }
    expect(byKey.get(outcomes[20 + 2_500]!.key)!.Description).toBe('said "yes", then\nhung up');

    fake.core.resetLog();
    // Again: everything written is replayed; the failed task is tried again (its parents read, still missing), nothing sent.
    expect(statuses(await each(sync(), actions))).toEqual({ replayed: 20 + 2_500 + 2_500, failed: 1 });
    expect(Object.keys(fake.counts())).toEqual(['GET /query']);
  });

  it('tasks whose contacts another live worker is still writing in its own job wait for it (in_flight), then are written once', async () => {
    const { fake, sync } = await org({ pollsToComplete: 2 });
    expect(statuses(await sync().applyMany(Array.from({ length: 20 }, (_, i) => company(i))))).toEqual({ created: 20 });
    // The contacts' writer pauses at its job's first poll: the job is closed, nothing of it processed yet.
    let resume!: () => void;
    let reach!: () => void;
    const reached = new Promise<void>((r) => (reach = r));
    const paused = new Promise<void>((r) => (resume = r));
    let sent = 0;
    const writer = sync({ rateBudget: { acquire: async () => (++sent === 4 ? (reach(), paused) : undefined) } }).applyMany(Array.from({ length: 2_500 }, (_, i) => contact(i, 20)), { bulk: 'always' });
    await reached;

    const tasks = Array.from({ length: 2_500 }, (_, i) => task(i));
    const early = await sync().applyMany(tasks, { bulk: 'always' });
    expect(statuses(early)).toEqual({ in_flight: 2_500 });
    expect(early[0]!.error).toMatchObject({ vendorCode: 'PARENT_IN_FLIGHT' });
    expect(fake.records('Task')).toHaveLength(0);

    resume();
    expect(statuses(await writer)).toEqual({ created: 2_500 });
    const later = await sync().applyMany(tasks, { bulk: 'always' });
    expect(statuses(later)).toEqual({ created: 2_500 });
    expect(fake.records('Task')).toHaveLength(2_500);
    expect(fake.bulkJobs().map((j) => [j.object, j.rows])).toEqual([['Contact', 2_500], ['Task', 2_500], ['Task', 2_500]]);
  });

  it('a job Salesforce fails whole on its header: every row failed with the job\'s error, not retryable, nothing written', async () => {
    // An org whose Contact has no Level__c: the job's header names a field Salesforce does not know.
    const { fake, sync } = await newOrg({ pollsToComplete: 1 });
    expect(statuses(await sync().applyMany(Array.from({ length: 20 }, (_, i) => company(i))))).toEqual({ created: 20 });
    const outcomes = await sync().applyMany(Array.from({ length: 2_000 }, (_, i) => contact(i, 20, { Level__c: 'Primary' })));
    expect(statuses(outcomes)).toEqual({ failed: 2_000 });
    expect(outcomes[0]!.error).toMatchObject({ vendorCode: 'BULK_ROW_UNPROCESSED', retryable: false });
    expect(outcomes[0]!.error!.message).toContain('(the job: InvalidBatch : Field name not found : Level__c)');
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', state: 'Failed' }]);
    expect(fake.records('Contact')).toHaveLength(0);
  });
});
