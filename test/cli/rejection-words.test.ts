/**
 * JSONL lines that are not valid actions, through the built bin: each is rejected naming the field
 * and what it needs in words (never zod's "Invalid input: expected string, received undefined"),
 * in the report, on stderr and in a dry run alike, with no CRM call for them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { contactLine, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from './helpers.js';

const env = { HUBSPOT_ACCESS_TOKEN: 'pat-na1-rejection-words-0001' };
const ZOD_ENGLISH = /Invalid (input|option)|expected \w+, received|Too big|Unrecognized key/;

const valid = JSON.parse(contactLine(1)) as Record<string, unknown>;
const { source: _source, ...withoutSource } = valid;

/** Each bad line and the reason it must get. */
const CASES: Array<[string, Record<string, unknown>, string]> = [
  ['no source', { ...withoutSource, eventId: 'w-1' }, 'source: is required (a string naming the system the event came from, e.g. "zendesk")'],
  ['a source that is a number', { ...valid, eventId: 'w-2', source: 42 }, 'source: must be a string naming the system the event came from, e.g. "zendesk"; got the number 42'],
  ['an op off the enum', { ...valid, eventId: 'w-3', op: 'delete' }, 'op: must be one of "upsert", "create"; got "delete"'],
  ['an unknown key', { ...valid, eventId: 'w-4', priority: 'high' }, 'priority: is not a known property (known: source, eventId, occurredAt, op, object, externalId, target, intent, fields, links)'],
  ['a source too long', { ...valid, eventId: 'w-5', source: 's'.repeat(201) }, 'source: must be at most 200 characters'],
  ['fields that are a list', { ...valid, eventId: 'w-6', fields: ['email'] }, 'fields: must be an object of CRM field names and their values, e.g. { "email": "ann@acme.io" }; got a list'],
];

describe('a line that is not a valid action', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;
  let config: string;
  let file: string;

  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    dir = tempDir();
    config = writeHubSpotConfig(dir, server.basePath);
    file = join(dir, 'job.jsonl');
    writeFileSync(file, `${[...CASES.map(([, line]) => JSON.stringify(line)), contactLine(1)].join('\n')}\n`);
  });
  afterAll(async () => server?.close());

  it('sync: each rejected with the field and what it needs, in the report and on stderr; only the valid line is written', async () => {
    const report = join(dir, 'report.json');
    const r = await runCli(['sync', file, '--config', config, '--report', report], { env });
    expect(r.code).toBe(1);
    const problems = (JSON.parse(readFileSync(report, 'utf8')) as { problems: Array<{ line: number; status: string; reason: string }> }).problems;
    expect(problems).toEqual(CASES.map(([, , reason], i) => expect.objectContaining({ line: i + 1, status: 'rejected', reason })));
    expect(r.stderr).toContain(`line 1 rejected: ${CASES[0]![2]}`);
    expect(`${r.stdout}${r.stderr}${JSON.stringify(problems)}`).not.toMatch(ZOD_ENGLISH);
    expect(fake.records('contacts')).toHaveLength(1);
  });

  it('sync --dry-run: the same reasons on each line\'s verdict', async () => {
    const r = await runCli(['sync', file, '--dry-run', '--config', config], { env });
    const verdicts = r.stdout.trim().split('\n').slice(0, CASES.length).map((l) => JSON.parse(l) as { would: string; reason: string });
    expect(verdicts).toEqual(CASES.map(([, , reason]) => expect.objectContaining({ would: 'reject', reason })));
  });
});
