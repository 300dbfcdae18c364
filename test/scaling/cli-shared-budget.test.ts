/**
 * Two `crm-upsert sync` processes on one HubSpot account whose ten-second limit is 10 requests:
 * with `sharedRateBudget` in the config (Redis, 10 per 10 s) they take turns and the CRM never
 * answers 429; with only their own in-process budgets (10 per 10 s each) they overrun it.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot } from '../../adapters/testing/index.js';
import { ensureBuilt, runCli, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { runId } from '../helpers/services.js';
import { redisUrl } from './services.js';
import { writeFileSync } from 'node:fs';

const LIMIT = 10;
const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-shared-budget' };
const url = await redisUrl();
const prefixes: string[] = [];

beforeAll(() => ensureBuilt(), 180_000);
afterAll(async () => {
  if (!url || prefixes.length === 0) return;
  const c = new Redis(url);
  for (const prefix of prefixes) {
    const keys = await c.keys(`${prefix}*`);
    if (keys.length > 0) await c.del(...keys);
  }
  await c.quit();
});

/** `pairs` contacts, each with a note, for process `p` (distinct ids per process). */
function actionsFile(path: string, p: number, pairs: number): void {
  const lines: string[] = [];
  for (let i = 0; i < pairs; i++) {
    const externalId = `p${p}-c${i}`;
    lines.push(JSON.stringify({ source: 'crm', eventId: `p${p}-u${i}`, op: 'upsert', object: 'contact', externalId, fields: { email: `${externalId}@example.test` } }));
    lines.push(JSON.stringify({ source: 'crm', eventId: `p${p}-n${i}`, op: 'create', object: 'note', target: { object: 'contact', externalId }, fields: { hs_note_body: `note ${i}`, hs_timestamp: '2026-11-29T10:00:00Z' } }));
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

async function twoProcesses(configFor: (dir: string, basePath: string) => string) {
  const fake = fakeHubSpot({ tenSecondLimit: LIMIT });
  const server = await fake.listen();
  try {
    const started = Date.now();
    const runs = await Promise.all([0, 1].map((p) => {
      const dir = tempDir();
      const file = join(dir, 'actions.jsonl');
      actionsFile(file, p, 400);
      return runCli(['sync', file, '--config', configFor(dir, server.basePath)], { env });
    }));
    return {
      runs,
      seconds: (Date.now() - started) / 1000,
      http429: fake.core.log.filter((e) => e.status === 429).length,
      contacts: fake.records('contacts').length,
      notes: fake.records('notes').length,
    };
  } finally {
    await server.close();
  }
}

describe('crm-upsert sync with a shared rate budget', () => {
  it.skipIf(url === undefined)('keeps two processes together under the account limit: no 429, everything written once', async () => {
    const keyPrefix = `crm-upsert-test-${runId()}`;
    prefixes.push(keyPrefix);
    const result = await twoProcesses((dir, basePath) =>
      writeHubSpotConfig(dir, basePath, { sharedRateBudget: { url: url!, points: LIMIT, durationMs: 10_000, keyPrefix } }));
    expect(result.runs.map((r) => r.code)).toEqual([0, 0]);
    expect(result.http429).toBe(0);
    expect([result.contacts, result.notes]).toEqual([800, 800]);
    // 20 requests at 10 per 10 s: the second ten had to wait for the window.
    expect(result.seconds).toBeGreaterThanOrEqual(9);
  }, 120_000);

  it('draws 429s when each process only has its own budget (the failure the shared one prevents)', async () => {
    const result = await twoProcesses((dir, basePath) => writeHubSpotConfig(dir, basePath, {}, { rateLimit: { points: LIMIT, durationMs: 10_000 } }));
    expect(result.http429).toBeGreaterThan(0);
    expect([result.contacts, result.notes]).toEqual([800, 800]);
  }, 120_000);
});
