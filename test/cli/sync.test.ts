import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { contactLine, ensureBuilt, noteLine, pairsFile, runCli, tempDir, writeHubSpotConfig } from './helpers.js';

interface Report {
  counts: Record<string, number>;
  apiCalls: number;
  problems: { line: number; key: string; status: string; reason: string }[];
  stopped?: { reason: string; message?: string };
}

const readReport = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;
const ledgerRows = (dir: string) => {
  const db = new Database(join(dir, 'ledger.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM entries ORDER BY key').all() as { key: string; status: string }[];
  } finally {
    db.close();
  }
};

describe('crm-upsert sync', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;
  let config: string;
  const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-sync' };

  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot();
    server = await fake.listen();
  });
  afterAll(async () => server?.close());
  beforeEach(() => {
    dir = tempDir();
    config = writeHubSpotConfig(dir, server.basePath);
  });

  it('writes valid lines and reports each bad line with its number and reason, exiting 1', async () => {
    const file = join(dir, 'mixed.jsonl');
    const huge = JSON.stringify({ source: 'test', eventId: 'huge', op: 'create', object: 'note', target: { object: 'contact', externalId: 'mix-1' }, fields: { hs_note_body: 'x'.repeat(10 * 1024 * 1024), hs_timestamp: '2026-11-28T10:00:00Z' } });
    writeFileSync(file, [
      contactLine(1, { externalId: 'mix-1', eventId: 'mix-evt-1' }),
      '{"source": "test", "op": ',
      JSON.stringify({ source: 'test', eventId: 'bad-op', op: 'delete', object: 'contact', externalId: 'mix-2', fields: {} }),
      JSON.stringify({ source: 'test', eventId: 'bad-field', op: 'upsert', object: 'contact', externalId: 'mix-3', fields: { email: 'a@b.c', hubspot_owner_id: '7' } }),
      huge,
      '',
      noteLine(6, 'mix-1'),
      'not json at all',
    ].join('\n'));
    const report = join(dir, 'report.json');

    const result = await runCli(['sync', file, '--config', config, '--report', report], { env });

    expect(result.code).toBe(1);
    const r = readReport(report);
    expect(result.stderr).toBe([
      'crm-upsert: 5 problems (5 rejected):',
      ...r.problems.map((p) => `  line ${p.line} ${p.status}: ${p.reason}`),
    ].join('\n') + '\n');
    expect(r.counts).toEqual({ created: 2, rejected: 5 });
    expect(r.problems.map((p) => [p.line, p.status])).toEqual([[2, 'rejected'], [3, 'rejected'], [4, 'rejected'], [5, 'rejected'], [8, 'rejected']]);
    expect(r.problems[0]!.reason).toMatch(/^invalid JSON/);
    expect(r.problems[1]!.reason).toMatch(/^op: /);
    expect(r.problems[2]!.reason).toMatch(/fields\.hubspot_owner_id: not on the allowlist/);
    expect(r.problems[3]!.reason).toMatch(/line is 10485\d+ bytes, over the limit of 1048576 bytes/);
    expect(r.problems[4]!.reason).toMatch(/^invalid JSON/);
    const contacts = fake.records('contacts').filter((c) => c.properties.ai_external_id?.startsWith('mix-'));
    expect(contacts.map((c) => c.properties.ai_external_id)).toEqual(['mix-1']);
    const notes = fake.records('notes').filter((n) => n.properties.hs_note_body === 'Summary of call 6');
    expect(notes).toHaveLength(1);
    expect(fake.records('notes').some((n) => (n.properties.hs_note_body ?? '').length > 1000)).toBe(false);
    expect(ledgerRows(dir)).toHaveLength(2);
  });

  it('writes notes that come before their contacts in the file in one run: exit 0, no contact read', async () => {
    const file = join(dir, 'notes-first.jsonl');
    const note = (i: number) => JSON.stringify({ source: 'test', eventId: `late-n-${i}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `late-${i}` }, fields: { hs_note_body: `Late note ${i}`, hs_timestamp: '2026-11-28T10:00:00Z' } });
    const lines = [...Array.from({ length: 30 }, (_, i) => note(i)), ...Array.from({ length: 30 }, (_, i) => contactLine(i, { externalId: `late-${i}`, eventId: `late-c-${i}` }))];
    writeFileSync(file, `${lines.join('\n')}\n`);
    fake.core.resetLog();
    const report = join(dir, 'report.json');

    const result = await runCli(['sync', file, '--config', config, '--report', report, '--batch-size', '10'], { env });

    expect(result.code).toBe(0);
    expect(readReport(report).counts).toEqual({ created: 60 });
    expect(fake.count('contacts/batch/read')).toBe(0);
    const bodies = fake.records('notes').map((n) => n.properties.hs_note_body ?? '').filter((b) => b.startsWith('Late note '));
    expect(bodies).toHaveLength(30);
    expect(new Set(bodies).size).toBe(30);
    expect(ledgerRows(dir).filter((r) => r.status === 'completed')).toHaveLength(60);
  });

  it('writes the latest of keyless upserts of one record in one bucket (event-time order), and nothing when run again', async () => {
    const file = join(dir, 'stages.jsonl');
    const stage = (at: string, lifecyclestage: string) => JSON.stringify({ source: 'scorer', occurredAt: at, op: 'upsert', object: 'contact', externalId: 'stage-1', fields: { email: 'stage-1@example.com', lifecyclestage } });
    writeFileSync(file, `${[stage('2026-11-28T10:02:00Z', 'customer'), stage('2026-11-28T10:00:00Z', 'lead')].join('\n')}\n`);
    const report = join(dir, 'report.json');
    const contact = () => fake.records('contacts').filter((c) => c.properties.ai_external_id === 'stage-1');

    expect((await runCli(['sync', file, '--config', config, '--report', report], { env })).code).toBe(0);
    expect(readReport(report).counts).toEqual({ created: 1, updated: 1 });
    expect(contact()).toHaveLength(1);
    expect(contact()[0]!.properties.lifecyclestage).toBe('customer');

    expect((await runCli(['sync', file, '--config', config, '--report', report], { env })).code).toBe(0);
    expect(readReport(report)).toMatchObject({ counts: { suppressed: 2 }, apiCalls: 0 });

    const later = join(dir, 'later.jsonl');
    writeFileSync(later, `${[stage('2026-11-28T10:05:00Z', 'lead'), stage('2026-11-28T10:07:00Z', 'lead')].join('\n')}\n`);
    expect((await runCli(['sync', later, '--config', config, '--report', report], { env })).code).toBe(0);
    expect(readReport(report)).toMatchObject({ counts: { updated: 2 }, apiCalls: 1 });
    expect(contact()[0]!.properties.lifecyclestage).toBe('lead');
    expect(contact()).toHaveLength(1);
  });

  it('sends what a run left between completed lines in full batches when run again over the same file', async () => {
    const line = (i: number) => contactLine(i, { externalId: `again-${i}`, eventId: `again-evt-${i}` });
    const left = (i: number) => i % 10 === 3;
    const earlier = join(dir, 'earlier.jsonl');
    writeFileSync(earlier, `${Array.from({ length: 300 }, (_, i) => i).filter((i) => !left(i)).map(line).join('\n')}\n`);
    expect((await runCli(['sync', earlier, '--config', config], { env })).code).toBe(0);
    const file = join(dir, 'all.jsonl');
    writeFileSync(file, `${Array.from({ length: 300 }, (_, i) => line(i)).join('\n')}\n`);
    const report = join(dir, 'report.json');

    const result = await runCli(['sync', file, '--config', config, '--batch-size', '100', '--report', report], { env });

    expect(result.code).toBe(0);
    const r = readReport(report);
    expect(r.counts).toEqual({ replayed: 270, created: 30 });
    // The 30 left, one in every ten lines, go out in one upsert, not one per 100 lines.
    expect(r.apiCalls).toBe(1);
    expect(fake.records('contacts').filter((c) => c.properties.ai_external_id?.startsWith('again-'))).toHaveLength(300);
  });

  it('reads actions from stdin with -', async () => {
    const result = await runCli(['sync', '-', '--config', config], { env, input: `${contactLine(501)}\n${contactLine(502)}\n` });

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout.trim())).toMatchObject({ command: 'sync', actions: 2, counts: { created: 2 }, exitCode: 0 });
  });

  it('makes zero CRM requests and zero ledger writes with --dry-run, and prints each verdict with its payload', async () => {
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, 3);
    await runCli(['sync', file, '--config', config], { env });
    writeFileSync(file, [contactLine(0), noteLine(0), contactLine(900), noteLine(900), '{oops'].join('\n'));
    const dbPath = join(dir, 'ledger.db');
    const before = { mtime: statSync(dbPath).mtimeMs, bytes: readFileSync(dbPath), rows: ledgerRows(dir) };
    const requests = fake.count();

    const result = await runCli(['sync', file, '--config', config, '--dry-run'], { env });

    expect(fake.count()).toBe(requests);
    expect(statSync(dbPath).mtimeMs).toBe(before.mtime);
    expect(readFileSync(dbPath).equals(before.bytes)).toBe(true);
    expect(ledgerRows(dir)).toEqual(before.rows);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.slice(0, 5).map((l) => l.would)).toEqual(['replay', 'replay', 'upsert', 'create', 'reject']);
    expect(lines[2]).toMatchObject({
      request: 'POST /crm/v3/objects/contacts/batch/upsert',
      body: { idProperty: 'ai_external_id', id: 'c-900', properties: { email: 'user900@example.com', firstname: 'User900' } },
    });
    expect(lines[3]).toMatchObject({ request: 'POST /crm/v3/objects/notes/batch/create', body: { properties: { crm_upsert_key: lines[3]!.key, hs_note_body: 'Summary of call 900' } } });
    expect(lines[5]).toMatchObject({ dryRun: true, apiCalls: 0, ledgerWrites: 0, would: { replay: 2, upsert: 1, create: 1, reject: 1 } });
  });

  it('does not create the SQLite ledger file on a dry run', async () => {
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, 1);

    const result = await runCli(['sync', file, '--config', config, '--dry-run'], { env: {} });

    expect(result.code).toBe(0);
    expect(() => statSync(join(dir, 'ledger.db'))).toThrow();
  });

  it('keeps secrets from the environment out of stdout, stderr, the report and the ledger file', async () => {
    const secret = `pat-na1-${'s3cr3t'.repeat(4)}-${Date.now()}`;
    const file = join(dir, 'actions.jsonl');
    writeFileSync(file, [contactLine(700), noteLine(701, 'missing-parent'), '{bad json', contactLine(702, { fields: { hubspot_owner_id: secret } })].join('\n'));
    const report = join(dir, 'report.json');

    const good = await runCli(['sync', file, '--config', config, '--report', report, '--job', 'secrets'], { env: { HUBSPOT_ACCESS_TOKEN: secret } });
    const strict = fakeHubSpot({ token: 'another-token' });
    const strictServer = await strict.listen();
    const strictConfig = writeHubSpotConfig(tempDir(), strictServer.basePath);
    const denied = await runCli(['sync', file, '--config', strictConfig, '--report', join(dir, 'denied.json')], { env: { HUBSPOT_ACCESS_TOKEN: secret } });
    const dry = await runCli(['sync', file, '--config', config, '--dry-run'], { env: { HUBSPOT_ACCESS_TOKEN: secret } });
    await strictServer.close();

    expect(good.code).toBe(1);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain('the token in HUBSPOT_ACCESS_TOKEN was refused');
    expect(readReport(join(dir, 'denied.json')).stopped).toMatchObject({ reason: 'auth', message: expect.stringContaining('401') });
    const ledgerFiles = ['ledger.db', 'ledger.db-wal'].map((f) => join(dir, f)).filter((p) => { try { return statSync(p).isFile(); } catch { return false; } });
    const haystacks = [good.stdout, good.stderr, denied.stdout, denied.stderr, dry.stdout, dry.stderr, readFileSync(report, 'utf8'), readFileSync(join(dir, 'denied.json'), 'utf8'), ...ledgerFiles.map((p) => readFileSync(p).toString('latin1'))];
    for (const text of haystacks) expect(text).not.toContain(secret);
  });

  it.each([
    ['a missing idProperty', { crm: 'hubspot', hubspot: { objects: { contact: { kind: 'record', objectType: 'contacts', fields: ['email'] } } } }, 'hubspot.objects.contact.idProperty'],
    ['an accessToken in the file', { crm: 'hubspot', hubspot: { accessToken: 'pat-in-file', objects: { contact: { kind: 'record', objectType: 'contacts', idProperty: 'x', fields: ['email'] } } } }, 'hubspot.accessToken'],
    ['an unknown crm', { crm: 'pipedrive' }, 'crm'],
    ['a missing section', { crm: 'salesforce' }, 'salesforce'],
  ])('exits 2 naming the field for a config with %s', async (_name, body, field) => {
    const path = join(dir, 'bad.config.json');
    writeFileSync(path, JSON.stringify(body));
    pairsFile(join(dir, 'a.jsonl'), 1);

    const result = await runCli(['sync', join(dir, 'a.jsonl'), '--config', path], { env });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(field);
    expect(result.stderr).not.toContain('pat-in-file');
  });

  it.each([
    ['a missing config file', ['sync', 'x.jsonl', '--config', '/nonexistent/crm-upsert.config.json'], 'not found', env],
    ['a missing token', ['sync', '__FILE__', '--config', '__CONFIG__'], 'HUBSPOT_ACCESS_TOKEN', {}],
    ['a missing input file', ['sync', '/nonexistent/a.jsonl', '--config', '__CONFIG__'], 'not found', env],
    ['a bad --concurrency', ['sync', '__FILE__', '--config', '__CONFIG__', '--concurrency', 'many'], '--concurrency', env],
    ['an unknown command', ['synch'], 'unknown command', env],
    ['a bad ledger URL', ['sync', '__FILE__', '--config', '__CONFIG__', '--ledger', 'mongodb://x'], 'ledger', env],
  ])('exits 2 for %s', async (_name, args, message, runEnv) => {
    const file = join(dir, 'a.jsonl');
    pairsFile(file, 1);

    const result = await runCli(args.map((a) => (a === '__FILE__' ? file : a === '__CONFIG__' ? config : a)), { env: runEnv });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
