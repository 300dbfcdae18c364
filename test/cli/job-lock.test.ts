import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHubSpot } from '../../adapters/testing/index.js';
import { pairsFile, runCli, spawnCli, tempDir, waitFor, writeHubSpotConfig, startFakeHubSpot } from './helpers.js';

describe('crm-upsert sync --job', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };

  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(async () => server?.close());

  it('refuses an overlapping run of the same job with exit 3 naming the holder, and a later run replays everything', async () => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath);
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, 150);
    const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-lock' };
    fake.setFaults({ latencyMs: 150 });

    const first = spawnCli(['sync', file, '--config', config, '--job', 'nightly', '--batch-size', '50'], { env });
    await waitFor(() => fake.count() > 0);
    const second = await runCli(['sync', file, '--config', config, '--job', 'nightly'], { env });
    const firstResult = await first.done;
    fake.setFaults({});

    expect(second.code).toBe(3);
    expect(second.stderr).toContain('job "nightly" is already running');
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toMatch(/host \S+, pid \d+, since \d{4}-\d\d-\d\dT/);
    expect(firstResult.code).toBe(0);
    expect(fake.records('contacts')).toHaveLength(150);

    const before = fake.count();
    const report = join(dir, 'third.json');
    const third = await runCli(['sync', file, '--config', config, '--job', 'nightly', '--report', report], { env });
    expect(third.code).toBe(0);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toEqual({ counts: { replayed: 300 }, apiCalls: 0, problems: [] });
    expect(fake.count()).toBe(before);
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('stops on %s after the batch in flight, releases the lock, prints the summary and exits %i', async (signal, code) => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath);
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, 200);
    const env = { HUBSPOT_ACCESS_TOKEN: `pat-test-${signal}` };
    fake.setFaults({ latencyMs: 100 });
    const start = fake.count();

    const run = spawnCli(['sync', file, '--config', config, '--job', `term-${signal}`, '--batch-size', '20'], { env });
    await waitFor(() => fake.count() > start + 3);
    run.child.kill(signal);
    const stopped = await run.done;
    fake.setFaults({});

    expect(stopped.code).toBe(code);
    const summary = JSON.parse(stopped.stdout.trim().split('\n').pop()!) as { stopped: string; actions: number; counts: Record<string, number> };
    expect(summary.stopped).toBe(signal);
    expect(stopped.stderr).toContain(`${signal}: finishing the batch in flight`);
    expect(summary.actions).toBeGreaterThan(0);
    expect(summary.actions).toBeLessThan(400);
    expect(summary.counts.failed ?? 0).toBe(0);

    // The lock was released and nothing was left in progress: a re-run finishes at once.
    const rerun = await runCli(['sync', file, '--config', config, '--job', `term-${signal}`], { env });
    expect(rerun.code).toBe(0);
    const after = JSON.parse(rerun.stdout.trim()) as { counts: Record<string, number> };
    expect(after.counts.replayed).toBe(summary.actions);
    expect(after.counts.in_flight).toBeUndefined();
  });
});
