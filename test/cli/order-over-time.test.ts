/**
 * Order over time from the CLI (the real bin against the fake HubSpot, a SQLite ledger kept
 * between runs): a file of older events synced after a file of newer ones leaves the newer values
 * in the CRM, counts the older actions `superseded` (or `updated` for the fields no newer event set)
 * and exits 0; `retry-failed` of an older failed line after a newer write is `superseded`, 0 calls.
 * Two lines of one deal in one file: the older one, second, is `superseded`. With
 * `order: 'arrival'` in the config, the last file to arrive wins.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { HUBSPOT_OBJECTS, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from './helpers.js';

const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-order' };
const objects = { ...HUBSPOT_OBJECTS, deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'dealstage', 'amount'] } };
const at = (hhmm: string) => `2026-11-30T${hhmm}:00.000Z`;
const dealLine = (externalId: string, time: string, fields: Record<string, unknown>) =>
  JSON.stringify({ source: 'crm-test', eventId: `${externalId}-${time}`, occurredAt: at(time), op: 'upsert', object: 'deal', externalId, fields });

describe('crm-upsert sync and retry-failed: an older event never overwrites a newer value', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(async () => server?.close());

  const held = (externalId: string) => fake.records('deals').find((d) => d.properties.ai_external_id === externalId)?.properties;
  const setup = (extra: Record<string, unknown> = {}) => {
    const dir = tempDir('crm-upsert-order-');
    const config = writeHubSpotConfig(dir, server.basePath, { retry: { retries: 0 }, ...extra }, { objects });
    const file = (name: string, lines: string[]) => {
      const path = join(dir, name);
      writeFileSync(path, `${lines.join('\n')}\n`);
      return path;
    };
    return { dir, config, file };
  };
  const summaryOf = (stdout: string) => JSON.parse(stdout.trim()) as Record<string, unknown>;

  it('syncs a file of older events after the newer ones: superseded in the summary and the report, exit 0, the newer values kept', async () => {
    const { dir, config, file } = setup();
    const newer = file('newer.jsonl', [dealLine('ord-1', '10:00', { dealname: 'Renewal', dealstage: 'closedwon' }), dealLine('ord-2', '10:00', { dealname: 'Upsell', dealstage: 'closedwon' })]);
    const first = await runCli(['sync', newer, '--config', config], { env });
    expect(first.code).toBe(0);
    expect(summaryOf(first.stdout)).toMatchObject({ counts: { created: 2 } });

    const older = file('older.jsonl', [dealLine('ord-1', '09:55', { dealstage: 'closedlost' }), dealLine('ord-2', '09:55', { dealstage: 'closedlost', amount: 300 })]);
    const report = join(dir, 'report.json');
    const second = await runCli(['sync', older, '--config', config, '--report', report], { env });
    expect(second.code).toBe(0);
    expect(summaryOf(second.stdout)).toMatchObject({ actions: 2, counts: { superseded: 1, updated: 1 }, apiCalls: 1, exitCode: 0 });
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ counts: { superseded: 1, updated: 1 }, problems: [] });
    expect(held('ord-1')).toMatchObject({ dealstage: 'closedwon' });
    expect(held('ord-2')).toMatchObject({ dealstage: 'closedwon', amount: '300' });
  });

  it('counts the older of two lines of one deal in one file superseded when it comes second', async () => {
    const { config, file } = setup();
    const both = file('both.jsonl', [dealLine('ord-5', '10:00', { dealname: 'Renewal', dealstage: 'closedwon' }), dealLine('ord-5', '09:55', { dealstage: 'closedlost' })]);
    const run = await runCli(['sync', both, '--config', config], { env });
    expect(run.code).toBe(0);
    expect(summaryOf(run.stdout)).toMatchObject({ actions: 2, counts: { created: 1, superseded: 1 }, apiCalls: 1 });
    expect(held('ord-5')).toMatchObject({ dealstage: 'closedwon' });
  });

  it('retry-failed of an older line that failed, after a newer write, is superseded with 0 calls', async () => {
    const { dir, config, file } = setup();
    fake.failNext('server_error', { endpoint: 'deals/batch/upsert' });
    const failing = await runCli(['sync', file('older.jsonl', [dealLine('ord-3', '09:55', { dealname: 'Renewal', dealstage: 'closedlost' })]), '--config', config], { env });
    expect(failing.code).toBe(1);
    expect(summaryOf(failing.stdout)).toMatchObject({ counts: { failed: 1 } });

    const newer = await runCli(['sync', file('newer.jsonl', [dealLine('ord-3', '10:00', { dealname: 'Renewal', dealstage: 'closedwon' })]), '--config', config], { env });
    expect(newer.code).toBe(0);
    expect(held('ord-3')).toMatchObject({ dealstage: 'closedwon' });

    const report = join(dir, 'retry.json');
    const retry = await runCli(['retry-failed', '--config', config, '--report', report], { env });
    expect(retry.code).toBe(0);
    expect(summaryOf(retry.stdout)).toMatchObject({ command: 'retry-failed', actions: 1, counts: { superseded: 1 }, apiCalls: 0, exitCode: 0 });
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ counts: { superseded: 1 }, problems: [] });
    expect(held('ord-3')).toMatchObject({ dealstage: 'closedwon' });
  });

  it("writes the older file's values over the newer ones with order: 'arrival' in the config, as the CRM itself would", async () => {
    const { config, file } = setup({ order: 'arrival' });
    expect((await runCli(['sync', file('newer.jsonl', [dealLine('ord-4', '10:00', { dealname: 'Renewal', dealstage: 'closedwon' })]), '--config', config], { env })).code).toBe(0);
    const older = await runCli(['sync', file('older.jsonl', [dealLine('ord-4', '09:55', { dealstage: 'closedlost' })]), '--config', config], { env });
    expect(older.code).toBe(0);
    expect(summaryOf(older.stdout)).toMatchObject({ counts: { updated: 1 }, apiCalls: 1 });
    expect(held('ord-4')).toMatchObject({ dealstage: 'closedlost' });
  });
});
