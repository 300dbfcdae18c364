/**
 * The CLI's messages help: one `crm-upsert:` prefix, redaction that removes secrets and leaves
 * the words after them, unreachable stores named by host and port, hints that point to files a
 * user has (`crm-upsert init`), every default in `--help`, and job locks listed apart from entries.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { contactLine, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig, type CliResult } from './helpers.js';

const TOKEN = 'pat-na1-11111111-2222-3333-4444-555555555555';
const env = { HUBSPOT_ACCESS_TOKEN: TOKEN };

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('CLI messages', () => {
  let fakeServer: { basePath: string; close(): Promise<void> };
  let dir: string;
  let config: string;
  const seen: CliResult[] = [];
  const run = async (args: string[]) => {
    const r = await runCli(args, { cwd: dir, env });
    seen.push(r);
    return r;
  };

  beforeAll(async () => {
    ({ server: fakeServer } = await startFakeHubSpot());
    dir = tempDir();
    config = writeHubSpotConfig(dir, fakeServer.basePath);
    writeFileSync(join(dir, 'actions.jsonl'), `${contactLine(1)}\n${contactLine(2)}\n`);
  });
  afterAll(async () => {
    await fakeServer.close();
    // Whatever was printed, nothing says the prefix twice.
    for (const r of seen) expect(`${r.stdout}${r.stderr}`).not.toContain('[crm-upsert]');
  });

  it('keeps the words after a redacted field name', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ crm: 'hubspot', hubspot: { accessToken: TOKEN, objects: {} } }));
    const r = await run(['sync', 'actions.jsonl', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('hubspot.accessToken: secrets never go in the config file: set HUBSPOT_ACCESS_TOKEN in the environment');
    expect(r.stderr).not.toContain(TOKEN);
  });

  it('points a missing config at `crm-upsert init`, not at files inside the package', async () => {
    const r = await run(['sync', 'actions.jsonl', '--config', 'missing.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('crm-upsert: config file missing.json not found: run `crm-upsert init` to write a starter one here, or pass --config PATH\n');
  });

  it.each([
    ['redis', (port: number) => `redis://127.0.0.1:${port}`],
    ['postgres', (port: number) => `postgres://postgres@127.0.0.1:${port}/test`],
  ])('names the host and port of an unreachable %s ledger', async (backend, urlOf) => {
    const port = await closedPort();
    const r = await run(['ledger', 'list', '--ledger', urlOf(port)]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(new RegExp(`^crm-upsert: stopped by an infrastructure fault: ${backend} ledger at 127\\.0\\.0\\.1:${port}: list failed: `));
  });

  it('says one prefix for a config error from the library', async () => {
    const r = await run(['ledger', 'list', '--ledger', 'mysql://db/x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^crm-upsert: --ledger \/ config ledger: unsupported ledger URL scheme "mysql:"/);
  });

  it('lists job locks apart from entries: a released lock is a free job, not an entry in progress', async () => {
    const synced = await run(['sync', 'actions.jsonl', '--config', config, '--job', 'nightly']);
    expect(synced.code).toBe(0);
    const entries = (await run(['ledger', 'list', '--config', config])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { key: string; status: string });
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => e.status === 'completed' && !e.key.startsWith('job:'))).toBe(true);
    const inProgress = await run(['ledger', 'list', '--config', config, '--status', 'in_progress']);
    expect(inProgress.stdout).toBe('');
    const jobs = (await run(['ledger', 'jobs', '--config', config])).stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(jobs).toEqual([{ job: 'nightly', state: 'free', lastHolder: expect.objectContaining({ pid: expect.any(Number) }), releasedAt: expect.any(String) }]);
  });
});

describe('--help', () => {
  /** Options whose absence means "off" or "none": they have nothing to default to. */
  const NO_DEFAULT = new Set(['--job', '--report', '--after', '--status', '--faults', '--dir', '--port', '--older-than', '--create', '--dry-run', '--ledger', '--http', '--queue']);

  const commands = (c: Command): Command[] => [c, ...c.commands.flatMap(commands)];

  it('shows the default of every option that has one', () => {
    const missing = commands(buildProgram(() => undefined)).flatMap((c) =>
      (c.options as Option[])
        .filter((o) => !o.negate && !o.mandatory && o.required && !NO_DEFAULT.has(o.long!) && o.long !== '--help' && o.long !== '--version')
        .filter((o) => o.defaultValue === undefined && !/default/.test(o.description))
        .map((o) => `${c.name()} ${o.long}`),
    );
    expect(missing).toEqual([]);
  });

  it('prints the sync defaults', async () => {
    const help = (await runCli(['sync', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const text of ['--concurrency <n> batches written in parallel (default: 1)', '(default: 500)', '(default: 1048576)', '(default: "crm-upsert.config.json")']) {
      expect(help).toContain(text);
    }
  });
});
