import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHubSpot } from '../../adapters/testing/index.js';
import { duplicates, pairsFile, runCli, sleep, spawnCli, tempDir, writeHubSpotConfig, startFakeHubSpot } from './helpers.js';

const PAIRS = 10_000; // 20,000 lines: a contact upsert and a note on it per pair
const LEASE_MS = 2_000;

describe('crm-upsert sync after SIGKILL', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;

  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    dir = tempDir();
  });
  afterAll(async () => server?.close());

  it('completes every one of 20,000 actions exactly once when a run is killed at ~50% and run again', async () => {
    const config = writeHubSpotConfig(dir, server.basePath, { leaseMs: LEASE_MS });
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, PAIRS);
    const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-resume' };

    // Kill the run at the 50th of 100 note batch creates, after the request reached the CRM and
    // before the response: the CRM commits the notes, the ledger still has them in progress.
    const run = spawnCli(['sync', file, '--config', config, '--job', 'backfill'], { env });
    const dispatch = fake.core.dispatch.bind(fake.core);
    let creates = 0;
    fake.core.dispatch = (req) => {
      if (req.path.endsWith('/notes/batch/create') && ++creates === PAIRS / 200) run.child.kill('SIGKILL');
      return dispatch(req);
    };
    const killed = await run.done;
    fake.core.dispatch = dispatch;
    expect(killed.signal).toBe('SIGKILL');
    const contactsAtKill = fake.records('contacts').length;
    expect(contactsAtKill).toBeGreaterThan(0);
    expect(contactsAtKill).toBeLessThan(PAIRS);
    const atKill = new Database(join(dir, 'ledger.db'), { readonly: true });
    const inProgress = (atKill.prepare("SELECT count(*) AS n FROM entries WHERE status = 'in_progress' AND key NOT LIKE 'job:%'").get() as { n: number }).n;
    atKill.close();
    expect(inProgress).toBeGreaterThan(0);

    // Claims the killed run held (and its job lock) expire with their lease.
    await sleep(LEASE_MS + 500);
    const started = Date.now();
    const report = join(dir, 'report.json');
    const rerun = await runCli(['sync', file, '--config', config, '--job', 'backfill', '--report', report], { env });
    const rerunMs = Date.now() - started;

    expect(rerun.stderr).toBe('');
    expect(rerun.code).toBe(0);
    const summary = JSON.parse(rerun.stdout.trim().split('\n').pop()!) as { counts: Record<string, number>; actions: number };
    expect(summary.actions).toBe(2 * PAIRS);
    expect(summary.counts.replayed).toBeGreaterThan(0);
    const contacts = fake.records('contacts');
    const notes = fake.records('notes');
    expect(contacts).toHaveLength(PAIRS);
    expect(duplicates(contacts.map((c) => c.properties.ai_external_id))).toBe(0);
    expect(notes).toHaveLength(PAIRS);
    expect(duplicates(notes.map((n) => n.properties.crm_upsert_key))).toBe(0);
    const db = new Database(join(dir, 'ledger.db'), { readonly: true });
    const rows = db.prepare("SELECT status, count(*) AS n FROM entries WHERE key NOT LIKE 'job:%' GROUP BY status").all() as { status: string; n: number }[];
    db.close();
    expect(rows).toEqual([{ status: 'completed', n: 2 * PAIRS }]);
    console.log(`resume: killed at ${contactsAtKill} contacts, ${inProgress} lines in progress; re-run of 20,000 lines took ${rerunMs} ms`);
  });
});
