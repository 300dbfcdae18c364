/**
 * A reader that goes away (`crm-upsert sync job.jsonl --dry-run | head -1`), through the built bin:
 * a command that only prints stops quietly with exit 141, no stack; a run that writes to the CRM
 * finishes its work, writes its report and exits with its own code, also quietly.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { contactLine, spawnCli, startFakeHubSpot, tempDir, writeHubSpotConfig, type CliResult } from './helpers.js';

const env = { HUBSPOT_ACCESS_TOKEN: 'pat-na1-closed-output-0001' };
const LINES = 3_000;

/** Spawn the CLI and close its stdout after the first line it prints (or at once with `atOnce`). */
async function readOneLineThenClose(args: string[], cwd: string, atOnce = false): Promise<{ first: string; result: CliResult }> {
  const spawned = spawnCli(args, { cwd, env });
  const stdout = spawned.child.stdout!;
  let first = '';
  if (atOnce) stdout.destroy();
  else {
    first = await new Promise<string>((resolveLine) => {
      let seen = '';
      const onData = (d: Buffer) => {
        seen += d.toString();
        const nl = seen.indexOf('\n');
        if (nl < 0) return;
        stdout.off('data', onData);
        stdout.destroy();
        resolveLine(seen.slice(0, nl));
      };
      stdout.on('data', onData);
    });
  }
  return { first, result: await spawned.done };
}

const quiet = (stderr: string) => {
  expect(stderr).not.toMatch(/EPIPE|Unhandled|node:events|\n\s+at /);
};

describe('a closed stdout', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;
  let config: string;

  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    dir = tempDir();
    config = writeHubSpotConfig(dir, server.basePath);
    writeFileSync(join(dir, 'job.jsonl'), `${Array.from({ length: LINES }, (_, i) => contactLine(i)).join('\n')}\n`);
  });
  afterAll(async () => server?.close());

  it('sync --dry-run | head -1: the first line, then exit 141 with nothing on stderr', async () => {
    const { first, result } = await readOneLineThenClose(['sync', 'job.jsonl', '--dry-run', '--config', config], dir);
    expect(JSON.parse(first)).toMatchObject({ line: 1, would: 'upsert' });
    expect(result.code).toBe(141);
    expect(result.stderr).toBe('');
    quiet(result.stderr);
    expect(fake.count()).toBe(0);
  });

  it('get with its stdout closed before it prints: exit 141, quietly', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `c-${i}`);
    const { result } = await readOneLineThenClose(['get', 'contact', ...ids, '--config', config], dir, true);
    expect(result.code).toBe(141);
    quiet(result.stderr);
  });

  it('schema with its stdout closed before it prints: exit 141, quietly', async () => {
    const { result } = await readOneLineThenClose(['schema'], dir, true);
    expect(result.code).toBe(141);
    quiet(result.stderr);
  });

  it('a real sync whose reader is gone still writes every record and its report, and exits 0 quietly', async () => {
    const report = join(dir, 'report.json');
    const { result } = await readOneLineThenClose(['sync', 'job.jsonl', '--config', config, '--report', report], dir, true);
    expect(result.code, result.stderr).toBe(0);
    quiet(result.stderr);
    expect(fake.records('contacts')).toHaveLength(LINES);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ counts: { created: LINES }, problems: [] });
  });
});
