/**
 * `crm-upsert sync` over records deleted in the CRM since an earlier run wrote them (the real bin
 * against the fake HubSpot, a SQLite ledger kept between runs): the summary line and the report
 * count them as `recreated`, besides `created`; a run that re-created nothing has no such count.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { summaryTable } from '../../src/cli/progress.js';
import { contactLine, HUBSPOT_OBJECTS, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from './helpers.js';

const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-recreated' };
const line = (i: number, eventId: string, firstname: string) => contactLine(i, { externalId: `rec-${i}`, eventId, fields: { email: `rec${i}@example.com`, firstname } });

describe('crm-upsert sync: records deleted in the CRM and written again', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(async () => server?.close());

  const contactsNamed = (externalId: string) => fake.records('contacts').filter((c) => c.properties.ai_external_id === externalId);

  it('counts the contacts it created again after they were deleted in the CRM in the summary line and the report', async () => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath);
    const report = join(dir, 'report.json');
    const first = join(dir, 'first.jsonl');
    writeFileSync(first, `${[line(1, 'rec-evt-1a', 'Ana'), line(2, 'rec-evt-2a', 'Ben'), line(3, 'rec-evt-3a', 'Cy')].join('\n')}\n`);
    const run1 = await runCli(['sync', first, '--config', config, '--report', report], { env });
    expect(run1.code).toBe(0);
    const summary1 = JSON.parse(run1.stdout.trim()) as Record<string, unknown>;
    expect(summary1).toMatchObject({ counts: { created: 3 } });
    expect(summary1).not.toHaveProperty('recreated');
    expect(JSON.parse(readFileSync(report, 'utf8'))).not.toHaveProperty('recreated');

    const deleted = [contactsNamed('rec-1')[0]!.id, contactsNamed('rec-2')[0]!.id];
    for (const id of deleted) expect(fake.delete('contacts', id)).toBe(true);

    const second = join(dir, 'second.jsonl');
    writeFileSync(second, `${[line(1, 'rec-evt-1b', 'Ana M.'), line(2, 'rec-evt-2b', 'Ben O.'), line(3, 'rec-evt-3b', 'Cy D.'), line(4, 'rec-evt-4a', 'Dee')].join('\n')}\n`);
    const run2 = await runCli(['sync', second, '--config', config, '--report', report], { env });
    expect(run2.code).toBe(0);
    const summary2 = JSON.parse(run2.stdout.trim()) as Record<string, unknown>;
    expect(summary2).toMatchObject({ actions: 4, counts: { created: 3, updated: 1 }, recreated: 2 });
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ counts: { created: 3, updated: 1 }, recreated: 2 });
    for (const n of [1, 2]) {
      const held = contactsNamed(`rec-${n}`);
      expect(held).toHaveLength(1);
      expect(deleted).not.toContain(held[0]!.id);
    }
    expect(contactsNamed('rec-3')[0]!.properties.firstname).toBe('Cy D.');
  });

  it('with "onMissing": "skip" on the object, leaves the deleted contacts deleted: failed lines whose reason says RECORD_GONE, exit 1', async () => {
    const dir = tempDir();
    const objects = { contact: { ...HUBSPOT_OBJECTS.contact, onMissing: 'skip' }, note: HUBSPOT_OBJECTS.note };
    const config = writeHubSpotConfig(dir, server.basePath, {}, { objects });
    const report = join(dir, 'report.json');
    const skipLine = (i: number, eventId: string, firstname: string) => contactLine(i, { externalId: `skip-${i}`, eventId, fields: { email: `skip${i}@example.com`, firstname } });
    const first = join(dir, 'first.jsonl');
    writeFileSync(first, `${[skipLine(1, 'skip-evt-1a', 'Ana'), skipLine(2, 'skip-evt-2a', 'Ben')].join('\n')}\n`);
    expect((await runCli(['sync', first, '--config', config], { env })).code).toBe(0);
    const gone = contactsNamed('skip-1')[0]!.id;
    expect(fake.delete('contacts', gone)).toBe(true);

    const second = join(dir, 'second.jsonl');
    writeFileSync(second, `${[skipLine(1, 'skip-evt-1b', 'Ana M.'), skipLine(2, 'skip-evt-2b', 'Ben O.'), skipLine(3, 'skip-evt-3a', 'Cy')].join('\n')}\n`);
    const run = await runCli(['sync', second, '--config', config, '--report', report], { env });
    expect(run.code).toBe(1);
    const written = JSON.parse(readFileSync(report, 'utf8')) as { counts: Record<string, number>; problems: { line: number; status: string; reason: string }[] };
    expect(written).toMatchObject({ counts: { failed: 1, updated: 1, created: 1 } });
    expect(written).not.toHaveProperty('recreated');
    expect(written.problems).toMatchObject([{ line: 1, status: 'failed', reason: expect.stringContaining('RECORD_GONE') }]);
    expect(written.problems[0]!.reason).toContain(gone);
    expect(contactsNamed('skip-1')).toEqual([]);
    expect(contactsNamed('skip-2')[0]!.properties.firstname).toBe('Ben O.');
  });

  it('shows the re-created count in the table a terminal gets, and no such row when there is none', () => {
    const base = { command: 'sync', input: 'in.jsonl', actions: 4, counts: { created: 3, updated: 1 }, apiCalls: 1, exitCode: 0 };
    expect(summaryTable({ ...base, recreated: 2 })).toMatch(/ {2}total\s+4\n\n {2}re-created\s+2\n {2}API calls\s+1\n/);
    expect(summaryTable(base)).not.toContain('re-created');
  });
});
