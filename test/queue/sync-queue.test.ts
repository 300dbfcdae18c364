/**
 * `crm-upsert sync file.jsonl --queue redis://… --wait` with 4 `crm-upsert worker`s: the same
 * records in the CRM and the same report, line by line, as the single-process sync of the same
 * file; every record written before any activity; a second enqueue of the file costs 0 CRM calls.
 * (bench/queue.ts runs the same comparison on 20,000 lines.)
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { pairsFile, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { queueConfigExtra, spawnWorker, testQueue, type TestQueue, type WorkerProcess } from './helpers.js';

const redis = await redisUrl();
const PAIRS = 1_000;
const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-sync-queue' };

interface Report {
  counts: Record<string, number>;
  apiCalls: number;
  problems: { line: number; key: string; status: string; reason: string }[];
}

const contactsOf = (fake: FakeHubSpot) => new Map(fake.records('contacts').map((c) => [c.properties.ai_external_id, { email: c.properties.email, firstname: c.properties.firstname }]));
const notesOf = (fake: FakeHubSpot) => fake.records('notes').map((n) => `${n.properties.crm_upsert_key} ${n.properties.hs_note_body}`).sort();

describe.skipIf(redis === undefined)('crm-upsert sync --queue --wait', () => {
  let single: { fake: FakeHubSpot; server: { basePath: string; close(): Promise<void> } };
  let queued: { fake: FakeHubSpot; server: { basePath: string; close(): Promise<void> } };
  let tq: TestQueue;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    single = await startFakeHubSpot();
    const fake = fakeHubSpot();
    queued = { fake, server: await fake.listen() };
    tq = testQueue(redis!);
  }, 180_000);
  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.done));
    await tq.drop();
    await single.server.close();
    await queued.server.close();
  });

  it('writes the same records and report as one process, records first, and a second enqueue costs 0 CRM calls', async () => {
    const dir = tempDir('crm-upsert-sync-queue-');
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, PAIRS);
    appendFileSync(file, [
      '{"source":"test","eventId":"bad-json"',
      JSON.stringify({ source: 'test', eventId: 'bad-field', op: 'upsert', object: 'contact', externalId: 'c-x', fields: { phone: '1' } }),
      JSON.stringify({ source: 'test', eventId: 'orphan', op: 'create', object: 'note', target: { object: 'contact', externalId: 'c-missing' }, fields: { hs_note_body: 'x', hs_timestamp: '2026-11-28T10:00:00Z' } }),
    ].join('\n') + '\n');

    const localConfig = writeHubSpotConfig(tempDir('crm-upsert-sync-local-'), single.server.basePath);
    const localReport = join(dir, 'local.json');
    const local = await runCli(['sync', file, '--config', localConfig, '--batch-size', '250', '--report', localReport], { env });
    expect(local.code).toBe(1);

    const config = writeHubSpotConfig(dir, queued.server.basePath, queueConfigExtra(tq, { concurrency: 2 }));
    for (let i = 0; i < 4; i++) workers.push(await spawnWorker(config, env));
    await Promise.all(workers.map((w) => w.ready));
    const queuedReport = join(dir, 'queued.json');
    const run = await runCli(['sync', file, '--config', config, '--queue', tq.target.url, '--wait', '--batch-size', '250', '--report', queuedReport], { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const summary = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    expect(summary).toMatchObject({ command: 'sync', queue: tq.target.name, added: true, chunks: { records: 5, activities: 5 }, actions: 2 * PAIRS + 3, problems: 3, exitCode: 1 });

    const a = JSON.parse(readFileSync(localReport, 'utf8')) as Report;
    const b = JSON.parse(readFileSync(queuedReport, 'utf8')) as Report;
    expect(b.counts).toEqual(a.counts);
    expect(b.counts).toEqual({ created: 2 * PAIRS, rejected: 2, failed: 1 });
    expect(b.problems).toEqual(a.problems);
    expect(b.problems.map((p) => [p.line, p.status])).toEqual([[2 * PAIRS + 1, 'rejected'], [2 * PAIRS + 2, 'rejected'], [2 * PAIRS + 3, 'failed']]);
    expect(b.apiCalls).toBeGreaterThan(0);
    expect(contactsOf(queued.fake)).toEqual(contactsOf(single.fake));
    expect(notesOf(queued.fake)).toEqual(notesOf(single.fake));

    // Every record upsert reached the CRM before the first activity was created.
    const log = queued.fake.core.log;
    const lastUpsert = log.findLastIndex((e) => e.endpoint.includes('/contacts/batch/upsert'));
    const firstNote = log.findIndex((e) => e.endpoint.includes('/notes/batch/create'));
    expect(firstNote).toBeGreaterThan(lastUpsert);

    const calls = queued.fake.count();
    const again = await runCli(['sync', file, '--config', config, '--queue', tq.target.url, '--wait', '--batch-size', '250', '--report', join(dir, 'again.json')], { env });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ added: false, actions: 2 * PAIRS + 3 });
    expect(queued.fake.count()).toBe(calls);
    expect((JSON.parse(readFileSync(join(dir, 'again.json'), 'utf8')) as Report).counts).toEqual(b.counts);

    // Completed chunks are kept a day by default (what made the second enqueue add nothing), failed ones until retried.
    const completed = await tq.queue.getJobs(['completed']);
    expect(completed.length).toBeGreaterThanOrEqual(10);
    for (const job of completed) expect([job.opts.removeOnComplete, job.opts.removeOnFail]).toEqual([{ age: 86_400 }, false]);
  }, 90_000);
});
