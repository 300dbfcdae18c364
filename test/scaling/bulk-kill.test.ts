/**
 * A backfill process killed (SIGKILL) in the middle of its Bulk API 2.0 job, twice: once right
 * after the job's upload and close, once while Salesforce processes it. Each run started again
 * finds the job on its claims in the ledger (the dead holder's claims are taken over at once: same
 * host, its pid gone) and follows it: one job in the fake, the rows uploaded once, every contact
 * once with its account, every outcome right.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeSalesforce, type FakeSalesforce } from '../../adapters/testing/index.js';
import { TOKEN } from '../e2e/salesforce-helpers.js';
import { ACCOUNTS, CONTACTS } from './bulk-actions.js';

const WORKER = fileURLToPath(new URL('./bulk-worker.ts', import.meta.url));
const EXT = 'AI_External_Id__c';

function start(env: Record<string, string>): { child: ChildProcess; done: Promise<Record<string, number> | 'killed'> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<Record<string, number> | 'killed'>((resolve, reject) =>
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve(JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>);
      else reject(new Error(`worker exited ${code}: ${err}`));
    }),
  );
  return { child, done };
}

/** Resolves once the fake's one job is in `state` (checked every few ms). */
async function jobIn(fake: FakeSalesforce, state: string, exited: Promise<unknown>): Promise<void> {
  let over = false;
  void exited.then(() => (over = true), () => (over = true));
  while (fake.bulkJobs()[0]?.state !== state) {
    if (over) throw new Error(`the worker ended before the job was ${state}: ${JSON.stringify(fake.bulkJobs())}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('a backfill killed during its Bulk job (two OS processes in turn, one SQLite ledger, fakeSalesforce over loopback)', () => {
  it(`killed after the upload and again while Salesforce processes: one job, ${CONTACTS} contacts once each with their account`, async () => {
    const fake = fakeSalesforce({ accessToken: TOKEN, dailyLimit: 10_000_000, bulk: { pollsToComplete: 4 } });
    const front = await fake.open('loopback', 'https://killed.my.salesforce.com');
    const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-bulk-kill-'));
    const env = { BW_URL: front.url, BW_LEDGER: join(dir, 'ledger.db') };
    try {
      // 1. Killed once the job is closed (UploadComplete), before its first poll.
      const first = start(env);
      await jobIn(fake, 'UploadComplete', first.done);
      first.child.kill('SIGKILL');
      expect(await first.done).toBe('killed');
      expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(1);

      // 2. Started again: it follows the same job; killed while Salesforce processes it.
      const second = start(env);
      await jobIn(fake, 'InProgress', second.done);
      second.child.kill('SIGKILL');
      expect(await second.done).toBe('killed');

      // 3. Started again: it follows the job to its end and settles every claim.
      const third = await start(env).done;
      expect(third).toEqual({ replayed: ACCOUNTS, created: CONTACTS });
      expect(fake.bulkJobs()).toMatchObject([{ object: 'Contact', state: 'JobComplete', rows: CONTACTS }]);
      expect(fake.count('POST /jobs/ingest')).toBe(1);
      expect(fake.count('PUT /jobs/ingest/{id}/batches')).toBe(1);
      const accounts = new Map(fake.records('Account').map((r) => [String(r[EXT]), r.Id]));
      expect(accounts.size).toBe(ACCOUNTS);
      const contacts = fake.records('Contact');
      expect(contacts).toHaveLength(CONTACTS);
      expect(new Set(contacts.map((r) => r[EXT])).size).toBe(CONTACTS);
      for (const c of contacts) expect(c.AccountId).toBe(accounts.get(`a-${Number(String(c[EXT]).slice(2)) % ACCOUNTS}`));

      // 4. Once more: everything replayed, 0 requests.
      fake.core.resetLog();
      expect(await start(env).done).toEqual({ replayed: ACCOUNTS + CONTACTS });
      expect(fake.counts()).toEqual({});
    } finally {
      await front.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
