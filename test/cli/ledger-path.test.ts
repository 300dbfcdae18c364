/**
 * The default SQLite ledger (and a relative `sqlite:` path in the config file) lives next to the
 * config file, wherever the command runs from: a re-run from another working directory finds the
 * ledger the first run wrote and replays every line (0 CRM requests, no duplicate note).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { duplicates, HUBSPOT_OBJECTS, pairsFile, runCli, startFakeHubSpot, tempDir } from './helpers.js';

const env = { HUBSPOT_ACCESS_TOKEN: 'pat-na1-ledger-path-0001' };
const PAIRS = 20;

describe('the config\'s SQLite ledger is found from any working directory', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> } | undefined;

  // A fake of its own per test: a new ledger would find the notes an earlier test left (same keys).
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each([
    ['no ledger in the config (the default)', {}],
    ['the starter config\'s relative sqlite:.crm-upsert/ledger.db', { ledger: 'sqlite:.crm-upsert/ledger.db' }],
  ])('%s: a run from another directory replays the first run from the ledger next to the config', async (_name, ledger) => {
    ({ fake, server } = await startFakeHubSpot());
    const root = tempDir();
    const project = join(root, 'project');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(project);
    mkdirSync(elsewhere);
    const config = join(project, 'crm-upsert.config.json');
    writeFileSync(config, JSON.stringify({ crm: 'hubspot', ...ledger, hubspot: { basePath: server!.basePath, objects: HUBSPOT_OBJECTS, rateLimit: { points: 1_000_000, durationMs: 1_000 } } }));
    const file = join(root, 'job.jsonl');
    pairsFile(file, PAIRS);

    const first = await runCli(['sync', file], { cwd: project, env });
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(join(project, '.crm-upsert', 'ledger.db'))).toBe(true);
    expect(fake.records('notes').length).toBe(PAIRS);

    const requests = fake.count();
    const again = await runCli(['sync', '--config', relative(elsewhere, config), relative(elsewhere, file)], { cwd: elsewhere, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`replayed\\D+${2 * PAIRS}\\b`));
    expect(fake.count()).toBe(requests);
    expect(fake.records('notes').length).toBe(PAIRS);
    expect(duplicates(fake.records('notes').map((n) => n.properties.crm_upsert_key))).toBe(0);
    // Nothing was opened where the command ran.
    expect(readdirSync(elsewhere)).toEqual([]);

    const listed = await runCli(['ledger', 'list', '--status', 'completed', '--config', config], { cwd: elsewhere, env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n').length).toBe(2 * PAIRS);
  });

  it('a --ledger path is the caller\'s own: relative to the working directory', async () => {
    ({ fake, server } = await startFakeHubSpot());
    const root = tempDir();
    const config = join(root, 'crm-upsert.config.json');
    writeFileSync(config, JSON.stringify({ crm: 'hubspot', hubspot: { basePath: server!.basePath, objects: HUBSPOT_OBJECTS } }));
    const cwd = join(root, 'work');
    mkdirSync(cwd);
    const file = join(root, 'job.jsonl');
    pairsFile(file, 2);
    const r = await runCli(['sync', file, '--config', config, '--ledger', 'sqlite:mine.db'], { cwd, env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(cwd, 'mine.db'))).toBe(true);
    expect(existsSync(join(root, '.crm-upsert'))).toBe(false);
  });
});
