/**
 * A job of notes and tasks run again with a new ledger (another working directory, an ephemeral
 * disk, a new Redis prefix): the new ledger remembers none of it, and with `verifyCreates: 'auto'`
 * it does not trust itself for events older than its birth. Every note and task is looked up by
 * its key in the fake HubSpot and found, never created a second time. Events newer than the
 * ledger cost no lookup.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type LedgerBackend, type Outcome, type SyncOptions } from '../../src/index.js';
import { BIRTH_MARGIN_MS } from '../../src/engine/create-sync.js';
import { redisLedger } from '../../src/ledger/redis/index.js';
import { sqliteLedger } from '../../src/ledger/sqlite.js';
import { redisUrl, runId } from '../helpers/services.js';
import { harness, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const CONTACTS = 150;
const HOUR = 3_600_000;

const contact = (n: number) => ({ source: 'crm-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@example.test` } });
/** A note and a task on each contact, at `at` (epoch ms; none: no event time, an event id only). */
const job = (at: number | undefined) => Array.from({ length: CONTACTS }, (_, n) => {
  const occurredAt = at === undefined ? {} : { occurredAt: new Date(at + n).toISOString() };
  return [
    { source: 'crm-test', eventId: `evt-n${n}`, ...occurredAt, op: 'create', object: 'note', target: { object: 'contact', externalId: `C-${n}` }, fields: { hs_note_body: `call notes ${n}`, hs_timestamp: '2026-11-29T10:00:00Z' } },
    { source: 'crm-test', eventId: `evt-t${n}`, ...occurredAt, op: 'create', object: 'task', target: { object: 'contact', externalId: `C-${n}` }, fields: { hs_task_subject: `follow up ${n}`, hs_timestamp: '2026-11-30T10:00:00Z' } },
  ];
}).flat();

const dirs: string[] = [];
const newSqlite = (): LedgerBackend => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-new-ledger-'));
  dirs.push(dir);
  return sqliteLedger({ path: join(dir, 'ledger.db') });
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The fake with every contact in it, its request log cleared. */
async function withContacts(): Promise<Harness> {
  const h = await harness('loopback');
  const seed = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
  expect(new Set((await seed.applyMany(Array.from({ length: CONTACTS }, (_, n) => contact(n)))).map((o) => o.status))).toEqual(new Set(['created']));
  await seed.close();
  h.fake.core.resetLog();
  return h;
}

/** One run of the job, walked as the CLI walks a file: outcomes in input order. */
async function run(h: Harness, ledger: LedgerBackend, actions: readonly unknown[], options: Partial<SyncOptions> = {}): Promise<Outcome[]> {
  const sync = createSync({ adapter: h.adapter, ledger, retry: fast, ...options });
  const outcomes: Outcome[] = [];
  for await (const settled of sync.applyEach(actions, { batchSize: 100 })) for (const { index, outcome } of settled) outcomes[index] = outcome;
  await sync.close();
  return outcomes;
}

/** Every note and task of the job in the fake exactly once. */
function expectEachOnce(h: Harness) {
  for (const type of ['notes', 'tasks']) {
    const keys = h.fake.records(type).map((r) => r.properties.crm_upsert_key);
    expect(keys.length, type).toBe(CONTACTS);
    expect(new Set(keys).size, type).toBe(CONTACTS);
  }
}

/** Requests of a run that finds every note and task of an earlier one: lookups only, no write. */
const LOOKUPS_ONLY = {
  // A call per 100 lines (50 notes, 50 tasks): their contacts read by external id once (a new
  // ledger has no parent ids), shared by the note and the task batch.
  'POST /crm/v3/objects/contacts/batch/read': 3,
  // Each batch's contacts' associated notes / tasks (v4), then those activities' keys.
  'POST /crm/v4/associations/contacts/notes/batch/read': 3,
  'POST /crm/v3/objects/notes/batch/read': 3,
  'POST /crm/v4/associations/contacts/tasks/batch/read': 3,
  'POST /crm/v3/objects/tasks/batch/read': 3,
};

describe('a job of notes and tasks run again with a new ledger (hubspotAdapter over loopback, verifyCreates auto)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('a new SQLite file finds every note and task in HubSpot: 0 duplicates, lookups only', async () => {
    h = await withContacts();
    const actions = job(Date.now() - 24 * HOUR);
    const first = await run(h, newSqlite(), actions);
    expect(new Set(first.map((o) => o.status))).toEqual(new Set(['created']));
    expectEachOnce(h);
    h.fake.core.resetLog();

    const again = await run(h, newSqlite(), actions);
    // Found by key: this action's record, reported created with the id HubSpot holds.
    expect(again.map((o) => [o.status, o.recordId])).toEqual(first.map((o) => ['created', o.recordId]));
    expectEachOnce(h);
    expect(h.fake.counts()).toEqual(LOOKUPS_ONLY);
    expect(h.fake.count('batch/create')).toBe(0);
  });

  it('a new Redis ledger (durable) finds every note and task in HubSpot: 0 duplicates, lookups only', async () => {
    const url = await redisUrl();
    if (!url) return;
    const client = new Redis(url);
    const prefix = `{${runId()}}:`;
    try {
      h = await withContacts();
      const actions = job(Date.now() - 24 * HOUR);
      // A durable Redis: without AOF the engine looks every create up anyway, birth or not.
      const first = await run(h, redisLedger({ client, prefix: `${prefix}a:`, durable: true }), actions);
      expect(new Set(first.map((o) => o.status))).toEqual(new Set(['created']));
      h.fake.core.resetLog();

      const again = await run(h, redisLedger({ client, prefix: `${prefix}b:`, durable: true }), actions);
      expect(again.map((o) => [o.status, o.recordId])).toEqual(first.map((o) => ['created', o.recordId]));
      expectEachOnce(h);
      expect(h.fake.counts()).toEqual(LOOKUPS_ONLY);
    } finally {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      await client.quit();
    }
  });

  it('events newer than the ledger (past the margin) are created without a lookup', async () => {
    h = await withContacts();
    const ledger = newSqlite();
    const born = (await ledger.bornAt!())!;
    const outcomes = await run(h, ledger, job(born + BIRTH_MARGIN_MS + 60_000));
    expect(new Set(outcomes.map((o) => o.status))).toEqual(new Set(['created']));
    expectEachOnce(h);
    // The contacts read once per call of 100 lines, each batch created: no association or activity read.
    expect(h.fake.counts()).toEqual({
      'POST /crm/v3/objects/contacts/batch/read': 3,
      'POST /crm/v3/objects/notes/batch/create': 3,
      'POST /crm/v3/objects/tasks/batch/create': 3,
    });
  });

  it('events within the margin after the ledger\'s birth, and events without an event time, are looked up', async () => {
    for (const at of [(born: number) => born + BIRTH_MARGIN_MS - 60_000, () => undefined]) {
      h = await withContacts();
      const ledger = newSqlite();
      const first = await run(h, ledger, job(at((await ledger.bornAt!())!)));
      expect(new Set(first.map((o) => o.status))).toEqual(new Set(['created']));
      // Nothing found on the first run: each batch looked up, then created.
      expect(h.fake.count('associations/contacts/notes/batch/read')).toBe(3);
      expect(h.fake.count('associations/contacts/tasks/batch/read')).toBe(3);
      expect(h.fake.count('batch/create')).toBe(6);
      h.fake.core.resetLog();
      const again = newSqlite();
      await run(h, again, job(at((await again.bornAt!())!)));
      expectEachOnce(h);
      expect(h.fake.count('batch/create')).toBe(0);
      await h.stop();
      h = undefined;
    }
  });

  it('verifyCreates after-failure trusts even a new ledger: the re-run writes every note and task again', async () => {
    h = await withContacts();
    const actions = job(Date.now() - 24 * HOUR);
    await run(h, newSqlite(), actions, { verifyCreates: 'after-failure' });
    h.fake.core.resetLog();
    await run(h, newSqlite(), actions, { verifyCreates: 'after-failure' });
    expect(h.fake.count('associations/contacts/notes/batch/read')).toBe(0);
    expect(h.fake.records('notes').length).toBe(2 * CONTACTS);
  });
});
