/**
 * `crm-upsert sync` and keys shared between lines: a file's lines are deliveries, so a later line
 * under an earlier line's key is that event delivered again (`replayed`, whatever its text,
 * exit 0), while two notes of one event on one contact with an `intent` each are two notes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from './helpers.js';

const EVENT = { source: 'zendesk', eventId: 'zd-shared-1', occurredAt: '2026-12-01T10:00:00Z' };
const contact = (id: string) => JSON.stringify({ ...EVENT, op: 'upsert', object: 'contact', externalId: id, fields: { email: `${id}@example.com` } });
const note = (id: string, body: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...EVENT, op: 'create', object: 'note', target: { object: 'contact', externalId: id }, fields: { hs_note_body: body, hs_timestamp: EVENT.occurredAt }, ...extra });

interface Summary {
  counts: Record<string, number>;
  exitCode: number;
}

describe('crm-upsert sync: lines sharing a key', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;
  let config: string;
  const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-shared-keys' };

  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()), 180_000);
  afterAll(async () => server?.close());
  beforeEach(() => {
    dir = tempDir('crm-upsert-shared-keys-');
    config = writeHubSpotConfig(dir, server.basePath);
  });

  async function sync(lines: string[]) {
    const file = join(dir, 'actions.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await runCli(['sync', file, '--config', config], { env });
    return { ...result, summary: JSON.parse(result.stdout.trim()) as Summary };
  }

  it('writes two notes of one event on one contact when each has its own intent', async () => {
    const run = await sync([contact('sk-1'), note('sk-1', 'Asked for a refund.', { intent: 'refund' }), note('sk-1', 'Promised a callback.', { intent: 'callback' })]);
    expect(run.code).toBe(0);
    expect(run.summary.counts).toEqual({ created: 3 });
    expect(fake.records('notes').filter((n) => ['Asked for a refund.', 'Promised a callback.'].includes(n.properties.hs_note_body ?? ''))).toHaveLength(2);
  });

  it('replays a later line under the same key as that event delivered again, whatever its text: one note, exit 0', async () => {
    const run = await sync([contact('sk-2'), note('sk-2', 'Ana could not export invoices.'), note('sk-2', 'Invoices would not export for Ana.')]);
    expect(run.code).toBe(0);
    expect(run.summary.counts).toEqual({ created: 2, replayed: 1 });
    const bodies = fake.records('notes').map((n) => n.properties.hs_note_body);
    expect(bodies).toContain('Ana could not export invoices.');
    expect(bodies).not.toContain('Invoices would not export for Ana.');
    expect(run.stderr).toBe('');
  });
});
