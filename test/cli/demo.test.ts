import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from './helpers.js';

interface Row {
  [column: string]: number;
}

/** The demo's table rows, keyed by column name. */
function parseTable(stdout: string): Row[] {
  const lines = stdout.split('\n');
  const header = lines.findIndex((l) => l.startsWith('pass '));
  const columns = lines[header]!.trim().split(/\s{2,}/);
  return lines.slice(header + 2).filter((l) => /^\d/.test(l)).map((l) => {
    const cells = l.trim().split(/\s+/).map(Number);
    return Object.fromEntries(columns.map((c, i) => [c, cells[i]!]));
  });
}

describe('crm-upsert demo', () => {
  beforeAll(() => ensureBuilt());

  it.each(['hubspot', 'salesforce'])('syncs the examples twice against a fake %s: the second pass makes 0 API calls and the CRM holds 0 duplicates', async (crm) => {
    const result = await runCli(['demo', '--crm', crm]);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [first, second] = parseTable(result.stdout);
    expect(first).toMatchObject({ pass: 1, actions: 20, rejected: 1, failed: 0, duplicates: 0 });
    expect(first!.created).toBeGreaterThan(0);
    expect(first!['API calls']).toBeGreaterThan(0);
    expect(second).toMatchObject({ pass: 2, actions: 20, created: 0, updated: 0, rejected: 1, failed: 0, 'API calls': 0, duplicates: 0 });
    expect(second!.replayed + second!.suppressed).toBe(19);
    expect(result.stdout).toMatch(/the second pass made 0 API calls/);
  });

  it('runs with no credentials in the environment', async () => {
    const result = await runCli(['demo'], { env: {} });

    expect(result.code).toBe(0);
  });
});
