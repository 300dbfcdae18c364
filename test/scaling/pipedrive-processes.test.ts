/**
 * Two worker processes, each its own adapter and its own connection to one Postgres ledger, apply
 * the same 200 persons and 200 notes, each in its own order, at once, into a Pipedrive whose search
 * index lags 2 s: the ledger's claim on each key serializes them, so Pipedrive holds 200 persons
 * and 200 notes, each person created by one request. In CI an unreachable Postgres fails this file.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dropStore } from '../../bench/chaos.js';
import { fakePipedrive } from '../../adapters/testing/index.js';
import { externalIds } from '../e2e/pipedrive-helpers.js';
import { runId } from '../helpers/services.js';
import { N } from './pipedrive-actions.js';
import { postgresUrl } from './services.js';

const url = await postgresUrl();
const WORKER = fileURLToPath(new URL('./pipedrive-worker.ts', import.meta.url));

type Report = { first: Record<string, number>; second: Record<string, number> };

function worker(env: Record<string, string>): Promise<Report> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Report) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

describe('two worker processes on one Postgres ledger (fakePipedrive over loopback)', () => {
  it.skipIf(url === undefined)(`apply the same ${N} persons and ${N} notes at once: ${N} and ${N} in Pipedrive`, async () => {
    const prefix = `${runId()}_`;
    const fake = fakePipedrive({ searchLimit: false, burstLimit: false, searchLagMs: 2_000 });
    const front = await fake.open('loopback');
    try {
      const env = { PW_BASE_PATH: front.url, PW_LEDGER_URL: url!, PW_PREFIX: prefix, PW_START: String(Date.now() + 4_000) };
      const [a, b] = await Promise.all([worker({ ...env, PW_REVERSED: '0' }), worker({ ...env, PW_REVERSED: '1' })]);
      // Between them, each key was written by one worker (the other replayed it or saw it in flight).
      expect((a.first.created ?? 0) + (b.first.created ?? 0) + (a.second.created ?? 0) + (b.second.created ?? 0)).toBe(2 * N);
      const ids = externalIds(fake, 'person');
      expect(ids).toHaveLength(N);
      expect(new Set(ids).size).toBe(N);
      expect(fake.notes()).toHaveLength(N);
      expect(fake.count('POST /api/v2/persons')).toBe(N);
    } finally {
      await front.close();
      await dropStore(url!, prefix, ['entries', 'marks', 'windows', 'meta', 'schema_version']);
    }
  }, 120_000);
});
