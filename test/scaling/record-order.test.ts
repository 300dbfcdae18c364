/**
 * Two processes write two events of one record at once, 100 times (contacts R-0..R-99, one trial
 * each): one process the 09:55 event, the other the 10:00 event, both started within a few ms of
 * each other for every record, against one fakeHubSpot whose requests take a random 0-40 ms (so
 * either write may reach it last). On Postgres and on Redis: every record ends with the 10:00
 * values, each process's outcomes are settled ones, and the older event is never written after
 * the newer. In CI an unreachable backend fails this file.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import { dropStore } from '../../bench/chaos.js';
import { TOKEN } from '../e2e/hubspot-helpers.js';
import { runId } from '../helpers/services.js';
import { postgresUrl, redisUrl } from './services.js';

const TRIALS = 100;
const SPACING_MS = 40;
const WORKER = fileURLToPath(new URL('./record-order-worker.ts', import.meta.url));
const backends = [
  { name: 'postgres', url: await postgresUrl() },
  { name: 'redis', url: await redisUrl() },
];

function writer(role: 'old' | 'new', env: Record<string, string>): Promise<{ statuses: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, ...env, RO_ROLE: role }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as { statuses: string[] }) : reject(new Error(`${role} writer exited ${code}: ${err}`))));
  });
}

describe.each(backends)('two processes writing two events of one record at once, on $name', ({ name, url }) => {
  it.skipIf(url === undefined)(`the CRM holds the newer event's values in all ${TRIALS} trials`, async () => {
    const fake = fakeHubSpot({ token: TOKEN, faults: { latencyMs: [0, 40] } });
    const front = await fake.open('loopback');
    const prefix = runId();
    try {
      // Both processes start their trials at the same instants, once both have had time to load.
      const env = { RO_BASE_PATH: front.url, RO_LEDGER_URL: url!, RO_PREFIX: prefix, RO_TOKEN: TOKEN, RO_TRIALS: String(TRIALS), RO_SPACING_MS: String(SPACING_MS), RO_START: String(Date.now() + 4_000) };
      const [older, newer] = await Promise.all([writer('old', env), writer('new', env)]);

      const records = fake.records('contacts');
      expect(records).toHaveLength(TRIALS);
      const wrong = records.filter((r) => r.properties.lifecyclestage !== 'customer' || r.properties.firstname !== 'New').map((r) => r.properties.ai_external_id);
      expect(wrong, `records left with the 09:55 values on ${name}`).toEqual([]);
      expect(newer.statuses.every((s) => s === 'created' || s === 'updated')).toBe(true);
      expect(older.statuses.every((s) => s === 'created' || s === 'superseded')).toBe(true);
      // Where the older event's claim came first it was written, and the newer one after it.
      expect(older.statuses.filter((s) => s === 'created').length).toBe(newer.statuses.filter((s) => s === 'updated').length);
    } finally {
      await front.close();
      await dropStore(url!, prefix, ['entries', 'marks', 'windows', 'meta', 'schema_version']);
    }
  }, 60_000);
});

