/**
 * Salesforce upserts a Task on its key natively: a job of tasks re-run with a new SQLite ledger
 * writes no duplicate and needs no lookup before it (one upsert per 200 tasks, as the first run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { sqliteLedger } from '../../src/ledger/sqlite.js';
import { harness, statuses, type Harness } from './salesforce-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const CONTACTS = 150;
const contact = (n: number) => ({ source: 'sf-test', eventId: `evt-c${n}`, op: 'upsert', object: 'contact', externalId: `C-${n}`, fields: { LastName: `Person ${n}`, Email: `c${n}@example.test` } });
const occurredAt = new Date(Date.now() - 24 * 3_600_000).toISOString();
/** Two tasks per contact, from events a day old. */
const job = Array.from({ length: CONTACTS }, (_, n) => [1, 2].map((k) => ({
  source: 'sf-test', eventId: `evt-t${n}-${k}`, occurredAt, op: 'create', object: 'task', target: { object: 'contact', externalId: `C-${n}` },
  fields: { Subject: `follow up ${n}/${k}`, Description: `AI summary ${n}/${k}`, ActivityDate: '2026-12-01' },
}))).flat();

const dirs: string[] = [];
const newSqlite = () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-sf-new-ledger-'));
  dirs.push(dir);
  return sqliteLedger({ path: join(dir, 'ledger.db') });
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function run(h: Harness): Promise<Outcome[]> {
  const sync = createSync({ adapter: h.adapter, ledger: newSqlite(), retry: fast });
  const outcomes: Outcome[] = [];
  for await (const settled of sync.applyEach(job, { batchSize: 100 })) for (const { index, outcome } of settled) outcomes[index] = outcome;
  await sync.close();
  return outcomes;
}

describe('a job of tasks re-run with a new ledger (salesforceAdapter over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  it('upserts every task on its key again: 0 duplicates, no lookup, the same requests as the first run', async () => {
    h = await harness('loopback');
    const seed = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    expect(statuses(await seed.applyMany(Array.from({ length: CONTACTS }, (_, n) => contact(n))))).toEqual({ created: CONTACTS });
    await seed.close();
    h.fake.core.resetLog();

    const first = await run(h);
    expect(statuses(first)).toEqual({ created: 2 * CONTACTS });
    const firstCounts = h.fake.counts();
    h.fake.core.resetLog();

    const again = await run(h);
    expect(statuses(again)).toEqual({ created: 2 * CONTACTS });
    expect(again.map((o) => o.recordId)).toEqual(first.map((o) => o.recordId));
    const tasks = h.fake.records('Task');
    expect(tasks).toHaveLength(2 * CONTACTS);
    expect(new Set(tasks.map((t) => t.AI_Idempotency_Key__c)).size).toBe(2 * CONTACTS);
    // Contacts read once per call of 100 lines, the tasks upserted on their key: no lookup.
    expect(h.fake.counts()).toEqual(firstCounts);
    expect(h.fake.counts()).toEqual({ 'GET /query': 3, 'PATCH /composite/sobjects/Task/AI_Idempotency_Key__c': 3 });
  });
});
