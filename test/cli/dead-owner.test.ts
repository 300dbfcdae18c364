import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHubSpot } from '../../adapters/testing/index.js';
import { duplicates, pairsFile, runCli, spawnCli, tempDir, writeHubSpotConfig, startFakeHubSpot } from './helpers.js';

const PAIRS = 1_000; // 2,000 lines: a contact upsert and a note on it per pair

describe('crm-upsert sync re-run right after kill -9', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;

  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    dir = tempDir();
  });
  afterAll(async () => server?.close());

  it('finishes the killed run at once, with a lease far longer than the gap, writing nothing twice', async () => {
    // A 10-minute lease: waiting it out is not what makes the re-run succeed.
    const config = writeHubSpotConfig(dir, server.basePath, { leaseMs: 600_000 });
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, PAIRS);
    const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-dead-owner' };

    // Killed after the CRM committed the 3rd of 5 note batches, before the response came back.
    const run = spawnCli(['sync', file, '--config', config, '--job', 'nightly'], { env });
    const dispatch = fake.core.dispatch.bind(fake.core);
    let creates = 0;
    fake.core.dispatch = (req) => {
      if (req.path.endsWith('/notes/batch/create') && ++creates === 3) run.child.kill('SIGKILL');
      return dispatch(req);
    };
    expect((await run.done).signal).toBe('SIGKILL');
    fake.core.dispatch = dispatch;
    const atKill = new Database(join(dir, 'ledger.db'), { readonly: true });
    const held = (atKill.prepare("SELECT count(*) AS n FROM entries WHERE status = 'in_progress'").get() as { n: number }).n;
    atKill.close();
    expect(held).toBeGreaterThan(1); // the job lock and the killed chunk's claims

    const rerun = await runCli(['sync', file, '--config', config, '--job', 'nightly'], { env });
    expect(rerun.stderr).toBe('');
    expect(rerun.code).toBe(0);
    const summary = JSON.parse(rerun.stdout.trim().split('\n').pop()!) as { counts: Record<string, number>; actions: number };
    expect(summary.actions).toBe(2 * PAIRS);
    expect(summary.counts.in_flight ?? 0).toBe(0);
    expect(fake.records('contacts')).toHaveLength(PAIRS);
    expect(fake.records('notes')).toHaveLength(PAIRS);
    expect(duplicates(fake.records('notes').map((n) => n.properties.crm_upsert_key))).toBe(0);
    const db = new Database(join(dir, 'ledger.db'), { readonly: true });
    const rows = db.prepare("SELECT status, count(*) AS n FROM entries WHERE key NOT LIKE 'job:%' GROUP BY status").all();
    db.close();
    expect(rows).toEqual([{ status: 'completed', n: 2 * PAIRS }]);
  }, 120_000);
});
