/**
 * A `crm-upsert sync` off a terminal (a scheduler, a pipe) says on stderr what went wrong: how many
 * problems, the first 10 by line with their reasons (one printable, secret-free line each) and
 * where the rest are, while stdout keeps its one JSON summary line. `--quiet` leaves stderr empty.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { problemDigest, problemLine, ReportBuilder, type Problem } from '../../src/cli/report.js';
import { contactLine, runCli, startFakeHubSpot, tempDir, writeHubSpotConfig } from './helpers.js';

const TOKEN = 'pat-na1-5f2b9c1e-problems-digest';

interface Report {
  problems: Problem[];
}

/** A report holding these problems, recorded out of line order as a run records them. */
function reportOf(problems: Array<[number, Problem['status'], string]>): ReportBuilder {
  const report = new ReportBuilder();
  for (const [line, status, reason] of problems) {
    if (status === 'rejected') report.reject(line, reason);
    else report.outcome(line, { key: `k${line}`, status, attempts: 1, error: { name: 'CrmError', code: 'CRM', message: reason } });
  }
  return report;
}

describe('problemDigest', () => {
  it('says nothing when every line ended well', () => {
    const report = new ReportBuilder();
    report.outcome(1, { key: 'k1', status: 'created', attempts: 1 });
    expect(problemDigest(report)).toEqual([]);
  });

  it('lists every problem in line order when there are 10 or fewer, with the count per status', () => {
    const report = reportOf([[7, 'failed', 'the CRM said no'], [2, 'rejected', 'invalid JSON: x'], [4, 'in_flight', 'held elsewhere']]);
    expect(problemDigest(report, 'out/report.json')).toEqual([
      'crm-upsert: 3 problems (1 rejected, 1 failed, 1 in_flight):',
      '  line 2 rejected: invalid JSON: x',
      '  line 4 in_flight: held elsewhere',
      '  line 7 failed: the CRM said no',
    ]);
  });

  it('lists the first 10 and says where the rest are: the report, or how to get one', () => {
    const report = reportOf(Array.from({ length: 25 }, (_, i) => [25 - i, i % 2 ? 'failed' : 'rejected', `reason ${25 - i}`] as [number, Problem['status'], string]));
    const digest = problemDigest(report, 'out/report.json');
    expect(digest[0]).toBe('crm-upsert: 25 problems (13 rejected, 12 failed); the first 10:');
    expect(digest.slice(1, 11).map((l) => Number(/^ {2}line (\d+) /.exec(l)![1]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(digest[11]).toBe('  and 15 more in out/report.json');
    expect(digest).toHaveLength(12);
    expect(problemDigest(report).at(-1)).toBe('  and 15 more: add --report FILE to list every problem');
  });

  it('keeps one printable line per problem: no newline or escape from the input, a long reason cut', () => {
    expect(problemLine({ line: 3, key: '', status: 'rejected', reason: 'fields.a\u001b[2J\nb: not on the allowlist' })).toBe('line 3 rejected: fields.a?[2J?b: not on the allowlist');
    const long = problemLine({ line: 4, key: '', status: 'failed', reason: 'x'.repeat(2_000) });
    expect(long).toBe(`line 4 failed: ${'x'.repeat(500)}… (2000 characters)`);
  });

  it('prints no secret the reason may carry', () => {
    expect(problemLine({ line: 5, key: '', status: 'failed', reason: 'HubSpot said: Authorization: Bearer pat-na1-0000-leaked' })).not.toContain('pat-na1-0000-leaked');
  });
});

describe('crm-upsert sync off a terminal, with problems', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;
  let config: string;
  let file: string;
  const env = { HUBSPOT_ACCESS_TOKEN: TOKEN };

  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    dir = tempDir();
    config = writeHubSpotConfig(dir, server.basePath, { ledger: 'memory:' });
    // Line 1 a good contact, then 100 problems: 60 rejected (3 kinds), 40 notes on contacts that exist nowhere (failed at the end).
    const lines = [contactLine(1)];
    for (let i = 0; i < 100; i++) {
      const kind = i % 5;
      if (kind === 0) lines.push(contactLine(100 + i, { fields: { email: `p${i}@example.com`, firstname: { first: 'Ana' } } }));
      else if (kind === 1) lines.push('{"source": "test", ');
      // A field name that echoes the token and a terminal escape: neither may reach the output.
      else if (kind === 2) lines.push(contactLine(100 + i, { fields: { [`x${TOKEN}\u001b[2J`]: '1' } }));
      else lines.push(JSON.stringify({ source: 'test', eventId: `ghost-note-${i}`, op: 'create', object: 'note', target: { object: 'contact', externalId: `ghost-${i}` }, fields: { hs_note_body: 'x', hs_timestamp: '2026-11-28T10:00:00Z' } }));
    }
    file = join(dir, 'actions.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
  });
  afterAll(async () => server?.close());

  const summaryOf = (stdout: string) => {
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    return JSON.parse(stdout) as Record<string, unknown>;
  };

  it('keeps stdout one JSON line and lists the count, the first 10 and how to get the rest on stderr', async () => {
    const r = await runCli(['sync', file, '--config', config], { env });

    expect(r.code).toBe(1);
    const summary = summaryOf(r.stdout);
    expect(Object.keys(summary)).toEqual(['command', 'input', 'actions', 'counts', 'apiCalls', 'problems', 'durationMs', 'exitCode']);
    expect(summary).toMatchObject({ actions: 101, counts: { created: 1, rejected: 60, failed: 40 }, problems: 100, exitCode: 1 });
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('crm-upsert: 100 problems (60 rejected, 40 failed); the first 10:');
    expect(lines.slice(1, 11)).toEqual([
      '  line 2 rejected: fields.firstname: must be a string, number, boolean, null or (for a multi-select field) a list of strings',
      expect.stringMatching(/^ {2}line 3 rejected: invalid JSON: /),
      expect.stringMatching(/^ {2}line 4 rejected: fields\.x\[redacted\]\?\[2J: not on the allowlist for "contact" \(allowed: /),
      '  line 5 failed: [hubspot] parent contact with ai_external_id=ghost-3 does not exist in HubSpot',
      '  line 6 failed: [hubspot] parent contact with ai_external_id=ghost-4 does not exist in HubSpot',
      '  line 7 rejected: fields.firstname: must be a string, number, boolean, null or (for a multi-select field) a list of strings',
      expect.stringMatching(/^ {2}line 8 rejected: invalid JSON: /),
      expect.stringMatching(/^ {2}line 9 rejected: fields\.x\[redacted\]\?\[2J: /),
      '  line 10 failed: [hubspot] parent contact with ai_external_id=ghost-8 does not exist in HubSpot',
      '  line 11 failed: [hubspot] parent contact with ai_external_id=ghost-9 does not exist in HubSpot',
    ]);
    expect(lines[11]).toBe('  and 90 more: add --report FILE to list every problem');
    expect(lines).toHaveLength(12);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    expect(r.stderr).not.toContain('\u001b');
  });

  it('points at the report for the rest, listing the report’s first 10', async () => {
    const path = join(dir, 'out', 'report.json');
    const r = await runCli(['sync', file, '--config', config, '--report', path], { env });

    expect(r.code).toBe(1);
    expect(summaryOf(r.stdout)).toMatchObject({ problems: 100, report: path });
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    expect(r.stderr).toBe([
      'crm-upsert: 100 problems (60 rejected, 40 failed); the first 10:',
      ...report.problems.slice(0, 10).map((p) => `  ${problemLine(p)}`),
      `  and 90 more in ${path}`,
    ].join('\n') + '\n');
  });

  it('prints only the summary line with --quiet', async () => {
    const r = await runCli(['sync', file, '--config', config, '--quiet'], { env });

    expect(r.code).toBe(1);
    expect(summaryOf(r.stdout)).toMatchObject({ problems: 100, exitCode: 1 });
    expect(r.stderr).toBe('');
  });

  it('prints nothing on stderr when every line ended well', async () => {
    const clean = join(dir, 'clean.jsonl');
    writeFileSync(clean, `${contactLine(7)}\n`);
    const r = await runCli(['sync', clean, '--config', config], { env });

    expect(r.code).toBe(0);
    expect(summaryOf(r.stdout)).toMatchObject({ problems: 0, exitCode: 0 });
    expect(r.stderr).toBe('');
    expect(fake.records('contacts').map((c) => c.properties.ai_external_id)).toContain('c-7');
  });
});
