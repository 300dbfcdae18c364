/**
 * `crm-upsert demo` against each CRM's fake, and the figures the docs quote from it: docs/cli.md
 * shows the HubSpot output and says Salesforce prints the same table, README.md quotes the second
 * pass. A change to the demo, the examples or the engine that moves a figure fails here until the
 * docs say what the demo prints.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT, runCli, type CliResult } from './helpers.js';

interface Row {
  [column: string]: number;
}

/** The demo's table rows (in its output or in a doc), keyed by column name. */
function parseTable(text: string): Row[] {
  const lines = text.split('\n');
  const header = lines.findIndex((l) => l.startsWith('pass '));
  const columns = lines[header]!.trim().split(/\s{2,}/);
  return lines.slice(header + 2).filter((l) => /^\d/.test(l)).map((l) => {
    const cells = l.trim().split(/\s+/).map(Number);
    return Object.fromEntries(columns.map((c, i) => [c, cells[i]!]));
  });
}

const CLI_DOC = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced block after "Output (HubSpot)" in docs/cli.md's demo section. */
function documentedOutput(): string[] {
  const at = CLI_DOC.indexOf('Output (HubSpot)');
  expect(at).toBeGreaterThan(0);
  const open = CLI_DOC.indexOf('```\n', at) + 4;
  return CLI_DOC.slice(open, CLI_DOC.indexOf('\n```', open)).split('\n');
}

const recordsLine = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('records in the CRM: '));

describe('crm-upsert demo', () => {
  const runs: Record<string, CliResult> = {};
  beforeAll(async () => {
    ensureBuilt();
    for (const crm of ['hubspot', 'salesforce']) runs[crm] = await runCli(['demo', '--crm', crm]);
  }, 120_000);

  it.each(['hubspot', 'salesforce'])('syncs the examples twice against a fake %s: the second pass makes 0 API calls and the CRM holds 0 duplicates', (crm) => {
    const result = runs[crm]!;

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [first, second] = parseTable(result.stdout);
    expect(first).toMatchObject({ pass: 1, actions: 26, rejected: 1, failed: 0, duplicates: 0 });
    expect(first!.created).toBeGreaterThan(0);
    expect(first!['API calls']).toBeGreaterThan(0);
    expect(second).toMatchObject({ pass: 2, actions: 26, created: 0, updated: 0, rejected: 1, failed: 0, 'API calls': 0, duplicates: 0 });
    expect(second!.replayed + second!.suppressed).toBe(25);
    expect(result.stdout).toMatch(/the second pass made 0 API calls/);
  });

  it('prints what docs/cli.md shows for HubSpot, line for line from the rejected line on', () => {
    const documented = documentedOutput();
    const printed = runs.hubspot!.stdout.trimEnd().split('\n');
    expect(documented.length).toBeGreaterThan(5);
    expect(printed.slice(-documented.length)).toEqual(documented);
  });

  it('prints for Salesforce the table docs/cli.md shows, the rejected field and the records line it quotes', () => {
    const stdout = runs.salesforce!.stdout;
    const quoted = /`--crm salesforce` prints the same table; its rejected line names `(\w+)` and its records line\s+reads `([^`]+)`\s+\(pass 1 makes (\d+) API calls there/.exec(CLI_DOC);
    expect(quoted).not.toBeNull();
    // The same table but for pass 1's API calls, which the docs quote.
    const documented = parseTable(documentedOutput().join('\n'));
    documented[0]!['API calls'] = Number(quoted![3]);
    expect(parseTable(stdout)).toEqual(documented);
    expect(stdout).toMatch(new RegExp(`^ {2}line \\d+ rejected: fields\\.${quoted![1]}: `, 'm'));
    expect(recordsLine(stdout)).toBe(quoted![2]);
  });

  it.each(['hubspot', 'salesforce'])('matches the figures README.md quotes, against %s', (crm) => {
    const quoted = /the second pass makes (\d+) API\s+calls and the CRM holds (\d+) duplicate records/.exec(README);
    expect(quoted).not.toBeNull();
    const invalid = /\b(one|two|three) invalid lines?\)/.exec(README);
    expect(invalid).not.toBeNull();
    const [first, second] = parseTable(runs[crm]!.stdout);
    expect(second!['API calls']).toBe(Number(quoted![1]));
    expect(second!.duplicates).toBe(Number(quoted![2]));
    expect(first!.rejected).toBe(['one', 'two', 'three'].indexOf(invalid![1]!) + 1);
  });

  it('runs with no credentials in the environment', async () => {
    const result = await runCli(['demo'], { env: {} });

    expect(result.code).toBe(0);
  });
});
