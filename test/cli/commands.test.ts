import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { fakeHubSpot, fakeSalesforce, type FakeHubSpot } from '../../adapters/testing/index.js';
import { BIN, cliEnv, contactLine, ensureBuilt, HUBSPOT_OBJECTS, noteLine, runCli, tempDir, writeHubSpotConfig } from './helpers.js';

describe('crm-upsert commands', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-commands' };

  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot();
    server = await fake.listen();
  });
  afterAll(async () => server?.close());

  it.each([[['--help']], [['sync', '--help']]])('lists every exit code in %j', async (args) => {
    const result = await runCli(args);

    expect(result.code).toBe(0);
    const help = result.stdout.slice(result.stdout.indexOf('Exit codes:'));
    for (const [code, meaning] of [['0', 'every action completed'], ['1', 'rejected, failed'], ['2', 'usage, config or auth'], ['3', 'holds the lock'], ['4', 'infrastructure fault'], ['130/143', 'SIGINT / SIGTERM']]) {
      expect(help).toMatch(new RegExp(`^  ${code} +.*${meaning}`, 'm'));
    }
  });

  it('prints every line of a 2,000-entry ledger list into a pipe and into a socket', async () => {
    const dir = tempDir();
    const url = `sqlite:${join(dir, 'ledger.db')}`;
    const ledger = openLedger(url);
    const keys = Array.from({ length: 2000 }, (_, i) => `v1:e:pipe-${String(i).padStart(5, '0')}`);
    const now = Date.now();
    const claims = await ledger.claim(keys.map((key) => ({ key, fingerprint: 'f', leaseMs: 60_000 })), now);
    await ledger.complete(keys.map((key, i) => ({ key, token: claims[i]!.token!, result: { status: 'created', recordId: String(i) } })), now);
    await ledger.close();

    const piped = await promisify(execFile)('sh', ['-c', `"${process.execPath}" "${BIN}" ledger list --limit 5000 --ledger "${url}" | wc -l`], { env: cliEnv() });
    // A child's stdout from Node's spawn is a socket, written asynchronously: what exit used to cut.
    const direct = await runCli(['ledger', 'list', '--limit', '5000', '--ledger', url]);

    expect(Number(piped.stdout.trim())).toBe(2000);
    expect(direct.code).toBe(0);
    expect(direct.stdout.split('\n').filter(Boolean)).toHaveLength(2000);
  });

  it('lists an in-progress entry\'s note as its note, never as a result', async () => {
    const dir = tempDir();
    const url = `sqlite:${join(dir, 'ledger.db')}`;
    const ledger = openLedger(url);
    const now = Date.now();
    const [held, done] = await ledger.claim(['v1:e:held', 'v1:e:done'].map((key) => ({ key, fingerprint: 'f', leaseMs: 60_000 })), now);
    await ledger.note!([{ key: 'v1:e:held', token: held!.token!, note: { bulkJob: '750xx', uploaded: true } }], now);
    await ledger.complete([{ key: 'v1:e:done', token: done!.token!, result: { status: 'created', recordId: '7' } }], now);
    await ledger.close();

    const listed = await runCli(['ledger', 'list', '--ledger', url]);
    const lines = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ key: 'v1:e:done', status: 'completed', result: { status: 'created', recordId: '7' } }),
      expect.objectContaining({ key: 'v1:e:held', status: 'in_progress', note: { bulkJob: '750xx', uploaded: true } }),
    ]);
    expect(lines[1]).not.toHaveProperty('result');
  });

  it('prints the action JSON Schema', async () => {
    const result = await runCli(['schema']);

    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout) as { $schema: string; properties: Record<string, { enum?: string[] }>; required: string[] };
    expect(schema.$schema).toContain('2020-12');
    expect(schema.properties.op!.enum).toEqual(['upsert', 'create']);
    expect(schema.required).toEqual(expect.arrayContaining(['source', 'op', 'object', 'fields']));
  });

  it('retries failed actions: a note whose parent was missing is written once the parent exists', async () => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath);
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, `${noteLine(1, 'retry-parent')}\n`);
    const first = await runCli(['sync', file, '--config', config, '--report', join(dir, 'r1.json')], { env });
    expect(first.code).toBe(1);
    const problem = (JSON.parse(readFileSync(join(dir, 'r1.json'), 'utf8')) as { problems: { status: string; reason: string }[] }).problems[0]!;
    expect(problem).toMatchObject({ status: 'failed' });
    expect(problem.reason).toContain('retry-parent');

    writeFileSync(file, `${contactLine(1, { externalId: 'retry-parent', eventId: 'retry-parent-evt' })}\n`);
    expect((await runCli(['sync', file, '--config', config], { env })).code).toBe(0);
    const retry = await runCli(['retry-failed', '--config', config, '--report', join(dir, 'r2.json')], { env });

    expect(retry.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'r2.json'), 'utf8'))).toMatchObject({ counts: { created: 1 }, problems: [] });
    expect(fake.records('notes').filter((n) => n.properties.hs_note_body === 'Summary of call 1')).toHaveLength(1);
    const again = await runCli(['retry-failed', '--config', config], { env });
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ actions: 0, apiCalls: 0, exitCode: 0 });
  });

  it('shows, lists and prunes ledger entries', async () => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath);
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, `${contactLine(31)}\n${contactLine(32)}\n${noteLine(33, 'nobody')}\n`);
    await runCli(['sync', file, '--config', config], { env });

    const list = await runCli(['ledger', 'list', '--config', config]);
    const entries = list.stdout.trim().split('\n').map((l) => JSON.parse(l) as { key: string; status: string });
    const failed = await runCli(['ledger', 'list', '--status', 'failed', '--config', config]);
    const show = await runCli(['ledger', 'show', entries[0]!.key, '--config', config]);
    const missing = await runCli(['ledger', 'show', 'v1:e:nope', '--config', config]);
    const keep = await runCli(['ledger', 'prune', '--older-than', '30d', '--config', config]);
    const badDuration = await runCli(['ledger', 'prune', '--older-than', 'a while', '--config', config]);
    const migrate = await runCli(['ledger', 'migrate', '--ledger', `sqlite:${join(dir, 'other.db')}`]);
    await new Promise((r) => setTimeout(r, 20));
    const prune = await runCli(['ledger', 'prune', '--older-than', '1ms', '--config', config]);
    const after = await runCli(['ledger', 'list', '--config', config]);

    expect(list.code).toBe(0);
    expect(entries.map((e) => e.status).sort()).toEqual(['completed', 'completed', 'failed']);
    expect(failed.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(show.stdout)).toMatchObject({ key: entries[0]!.key, status: expect.any(String), createdAt: expect.stringMatching(/^\d{4}-/) });
    expect(missing.code).toBe(1);
    expect(JSON.parse(keep.stdout)).toMatchObject({ removed: 0 });
    expect(badDuration.code).toBe(2);
    expect(badDuration.stderr).toContain('--older-than');
    expect(migrate.code).toBe(0);
    expect(JSON.parse(prune.stdout)).toMatchObject({ removed: 3 });
    expect(after.stdout.trim()).toBe('');
  });

  it('verifies the HubSpot key properties and creates the missing ones with --create', async () => {
    const dir = tempDir();
    const objects = {
      ...HUBSPOT_OBJECTS,
      company: { kind: 'record', objectType: 'companies', idProperty: 'ai_company_id', fields: ['name'] },
      task: { kind: 'activity', objectType: 'tasks', keyProperty: 'ai_task_key', fields: ['hs_task_subject'], parents: { contact: 204 } },
    };
    const config = writeHubSpotConfig(dir, server.basePath, {}, { objects });

    const check = await runCli(['check-setup', '--config', config], { env });
    const create = await runCli(['check-setup', '--create', '--config', config], { env });
    const recheck = await runCli(['check-setup', '--config', config], { env });

    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/MISSING\s+company -> companies\.ai_company_id/);
    expect(check.stdout).toMatch(/MISSING\s+task -> tasks\.ai_task_key/);
    expect(check.stdout).toMatch(/ok\s+contact -> contacts\.ai_external_id \(unique\)/);
    expect(create.code).toBe(0);
    expect(create.stdout).toMatch(/created\s+company -> companies\.ai_company_id/);
    expect(recheck.code).toBe(0);
    const property = (await fetch(`${server.basePath}/crm/v3/properties/companies/ai_company_id`, { headers: { authorization: 'Bearer t' } }).then((r) => r.json())) as { hasUniqueValue: boolean };
    expect(property.hasUniqueValue).toBe(true);
  });

  it('verifies Salesforce external-id fields by describe and prints the definitions of missing ones', async () => {
    const sf = fakeSalesforce();
    const sfServer = await sf.listen();
    const dir = tempDir();
    const path = join(dir, 'sf.config.json');
    writeFileSync(path, JSON.stringify({
      crm: 'salesforce',
      ledger: `sqlite:${join(dir, 'ledger.db')}`,
      salesforce: {
        instanceUrl: sfServer.instanceUrl,
        objects: {
          contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'] },
          account: { kind: 'record', sobject: 'Account', externalIdField: 'AI_Account_Key__c', fields: ['Name'] },
        },
      },
    }));
    try {
      const result = await runCli(['check-setup', '--create', '--config', path], { env: { SF_ACCESS_TOKEN: 'sf-test-token' } });

      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/ok\s+contact -> Contact\.AI_External_Id__c/);
      expect(result.stdout).toMatch(/MISSING\s+account -> Account\.AI_Account_Key__c/);
      expect(result.stdout).toContain('<fullName>AI_Account_Key__c</fullName>');
      expect(result.stdout).toContain('<externalId>true</externalId>');
    } finally {
      await sfServer.close();
    }
  });
});
