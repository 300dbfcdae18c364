/**
 * `crm-upsert sync --bulk` through the built bin against the fake Salesforce on loopback: a Bulk
 * API 2.0 job per object when the lane takes the upserts (`always`, or `auto` from the config's
 * `salesforce.bulk.minRecords`), none under `never`, the same file again costs 0 requests, a bad
 * flag value or config key is a usage error naming it, and the dry run says which objects would
 * go through a job (record upserts, and keyed Task creates upserted on their key).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeSalesforce, type FakeSalesforce } from '../../adapters/testing/index.js';
import { ensureBuilt, runCli, tempDir } from './helpers.js';

const env = { SF_ACCESS_TOKEN: 'sf-bulk-cli-token' };
const EXT = 'AI_External_Id__c';
const OBJECTS = { contact: { kind: 'record', sobject: 'Contact', externalIdField: EXT, fields: ['Email', 'LastName'] } };
const TASK = { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject'], parents: { contact: 'WhoId' } };

/** A Task on contact `c-i`: keyed by its event id, or keyless (its key from its content and time, windowed). */
const task = (i: number, keyless = false) => JSON.stringify({ source: 'test', ...(keyless ? { occurredAt: '2026-12-01T09:00:00.000Z' } : { eventId: `task-evt-${i}` }), op: 'create', object: 'task', target: { object: 'contact', externalId: `c-${i}` }, fields: { Subject: `Call ${i}` } });
const contact = (i: number) => JSON.stringify({ source: 'test', eventId: `bulk-evt-${i}`, op: 'upsert', object: 'contact', externalId: `c-${i}`, fields: { Email: `user${i}@example.com`, LastName: `User ${i}` } });

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});
beforeAll(() => ensureBuilt());

interface Org {
  fake: FakeSalesforce;
  dir: string;
  config: string;
  file: string;
}

/**
 * A fake Salesforce, a config pointing at it (`bulk` as salesforce.bulk) and a file of `contacts`
 * upserts, then (with `tasks`) Task creates on the first contacts, keyed then keyless.
 */
async function org(contacts: number, bulk: Record<string, unknown> = {}, tasks?: { keyed: number; keyless: number }): Promise<Org> {
  const fake = fakeSalesforce({ accessToken: env.SF_ACCESS_TOKEN, bulk: { pollsToComplete: 2 } });
  const server = await fake.listen();
  stops.push(server.close);
  const dir = tempDir('crm-upsert-bulk-cli-');
  const config = join(dir, 'crm-upsert.config.json');
  // A poll every millisecond: the fake's jobs finish on their second poll.
  writeFileSync(config, JSON.stringify({ crm: 'salesforce', ledger: `sqlite:${join(dir, 'ledger.db')}`, salesforce: { instanceUrl: server.instanceUrl, objects: tasks ? { ...OBJECTS, task: TASK } : OBJECTS, bulk: { pollIntervalMs: 1, maxPollIntervalMs: 1, ...bulk } } }));
  const file = join(dir, 'contacts.jsonl');
  const taskLines = tasks ? [...Array.from({ length: tasks.keyed }, (_, i) => task(i)), ...Array.from({ length: tasks.keyless }, (_, i) => task(tasks.keyed + i, true))] : [];
  writeFileSync(file, `${[...Array.from({ length: contacts }, (_, i) => contact(i)), ...taskLines].join('\n')}\n`);
  return { fake, dir, config, file };
}

const collections = (fake: FakeSalesforce) => fake.requests.filter((r) => r.path.includes('/composite/sobjects/')).length;
const summary = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('sync --bulk', () => {
  it('always: a small file goes through one job; the same file again makes 0 requests', async () => {
    const { fake, config, file } = await org(5);
    const first = await runCli(['sync', file, '--config', config, '--bulk', 'always'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', operation: 'upsert', externalIdFieldName: EXT, state: 'JobComplete', rows: 5, numberRecordsProcessed: 5, numberRecordsFailed: 0 }]);
    expect(fake.records('Contact')).toHaveLength(5);
    expect(collections(fake)).toBe(0);
    // Create, upload, close, two polls (the fake's job completes on its second), the successful results: no row failed.
    const requests = fake.count();
    expect(fake.requests.map((r) => r.method)).toEqual(['POST', 'PUT', 'PATCH', 'GET', 'GET', 'GET']);
    expect(fake.requests.at(-1)!.path).toMatch(/\/successfulResults\/?$/);
    expect(summary(first.stdout)).toMatchObject({ counts: { created: 5 }, apiCalls: requests });
    // Not on a terminal: no job line on stderr.
    expect(first.stderr).not.toContain('job ');

    const again = await runCli(['sync', file, '--config', config, '--bulk', 'always'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(fake.count()).toBe(requests);
    expect(summary(again.stdout)).toMatchObject({ counts: { replayed: 5 }, apiCalls: 0 });
    expect(fake.bulkJobs()).toHaveLength(1);
  });

  it('never: no job, whatever the config says', async () => {
    const { fake, config, file } = await org(5, { minRecords: 1 });
    const run = await runCli(['sync', file, '--config', config, '--bulk', 'never'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(fake.bulkJobs()).toEqual([]);
    expect(fake.records('Contact')).toHaveLength(5);
    expect(collections(fake)).toBe(1);
  });

  it('auto (the default) honours salesforce.bulk.minRecords: 150 contacts over a minimum of 100 go in one job, run again 0 requests', async () => {
    const { fake, config, file } = await org(150, { minRecords: 100 });
    const first = await runCli(['sync', file, '--config', config], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', state: 'JobComplete', rows: 150 }]);
    expect(fake.records('Contact')).toHaveLength(150);
    expect(collections(fake)).toBe(0);
    const requests = fake.count();

    const again = await runCli(['sync', file, '--config', config], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(fake.count()).toBe(requests);
    expect(summary(again.stdout)).toMatchObject({ counts: { replayed: 150 }, apiCalls: 0 });
  });

  it('auto below the default minimum sends batches, no job', async () => {
    const { fake, config, file } = await org(150);
    const run = await runCli(['sync', file, '--config', config], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(fake.bulkJobs()).toEqual([]);
    expect(collections(fake)).toBe(1);
  });

  it('a value other than auto, always or never is a usage error naming the flag and the allowed values', async () => {
    const { fake, config, file } = await org(1);
    const run = await runCli(['sync', file, '--config', config, '--bulk', 'bogus'], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("option '--bulk <mode>' argument 'bogus' is invalid. Allowed choices are auto, always, never.");
    expect(fake.count()).toBe(0);
  });

  it('always or never with --queue is a usage error: the workers choose, under auto', async () => {
    const { fake, config, file } = await org(1);
    const run = await runCli(['sync', file, '--config', config, '--queue', 'redis://127.0.0.1:1', '--bulk', 'always'], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--bulk always cannot be combined with --queue');
    expect(fake.count()).toBe(0);
  });

  it.each([
    ['minRecords', 0],
    ['pollIntervalMs', -5],
    ['timeoutMs', 1.5],
    ['maxUploadBytes', '100'],
  ])('a salesforce.bulk.%s of %j is a usage error naming the key', async (key, value) => {
    const { fake, config, file } = await org(1, { [key]: value });
    const run = await runCli(['sync', file, '--config', config], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`salesforce.bulk.${key}:`);
    expect(fake.count()).toBe(0);
  });

  it('an unknown salesforce.bulk key is a usage error naming it', async () => {
    const { config, file } = await org(1, { pollsToComplete: 2 });
    const run = await runCli(['sync', file, '--config', config], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('salesforce.bulk');
    expect(run.stderr).toContain('pollsToComplete');
  });

  it('--dry-run says which objects would go through a job, and sends nothing', async () => {
    const { fake, config, file } = await org(150, { minRecords: 100 });
    const auto = await runCli(['sync', file, '--config', config, '--dry-run'], { env });
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stderr).toContain('contact: 150 upserts in a Bulk API 2.0 job (create, upload, close, polls, results), not the batch requests shown for them (--bulk auto: 100 or more upserts of an object in one call)');
    expect(summary(auto.stdout)).toMatchObject({ dryRun: true, bulkJobs: { contact: { upserts: 150, calls: 1 } }, apiCalls: 0 });

    const never = await runCli(['sync', file, '--config', config, '--dry-run', '--bulk', 'never'], { env });
    expect(never.code, never.stderr).toBe(0);
    expect(never.stderr).not.toContain('Bulk API');
    expect(summary(never.stdout)).not.toHaveProperty('bulkJobs');
    expect(fake.count()).toBe(0);
  });

  it('--dry-run counts the keyed Task creates a job would upsert on their key, not the keyless ones, as the run then does', async () => {
    const { fake, config, file } = await org(150, { minRecords: 100 }, { keyed: 120, keyless: 10 });
    const dry = await runCli(['sync', file, '--config', config, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain('contact: 150 upserts in a Bulk API 2.0 job');
    expect(dry.stderr).toContain('task: 120 creates upserted on their key in a Bulk API 2.0 job (create, upload, close, polls, results), not the batch requests shown for them (--bulk auto: 100 or more keyed creates of an object in one call)');
    expect(summary(dry.stdout)).toMatchObject({ dryRun: true, would: { upsert: 150, create: 130 }, bulkJobs: { contact: { upserts: 150, calls: 1 }, task: { creates: 120, calls: 1 } }, apiCalls: 0 });
    expect(fake.count()).toBe(0);

    const run = await runCli(['sync', file, '--config', config], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(fake.bulkJobs()).toMatchObject([
      { object: 'Contact', rows: 150, state: 'JobComplete' },
      { object: 'Task', externalIdFieldName: 'AI_Idempotency_Key__c', rows: 120, state: 'JobComplete' },
    ]);
    // The keyless creates went through Collections.
    expect(fake.records('Task')).toHaveLength(130);
  });

  it('--dry-run leaves Task creates under minRecords to the batch calls: keyless ones do not count toward it', async () => {
    const { fake, config, file } = await org(150, { minRecords: 100 }, { keyed: 95, keyless: 10 });
    const dry = await runCli(['sync', file, '--config', config, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).not.toContain('task:');
    expect(summary(dry.stdout)).toMatchObject({ bulkJobs: { contact: { upserts: 150, calls: 1 } } });
    expect(summary(dry.stdout).bulkJobs).not.toHaveProperty('task');

    const run = await runCli(['sync', file, '--config', config], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', rows: 150 }]);
    expect(fake.records('Task')).toHaveLength(105);
  });
});
