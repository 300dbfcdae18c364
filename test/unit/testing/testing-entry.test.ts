import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../../cli/helpers.js';

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('crm-upsert-sync/testing', () => {
  beforeAll(() => ensureBuilt());

  it('exports the fakes and the adapter conformance suite from the built package', () => {
    const script = `const m = await import('crm-upsert-sync/testing'); console.log(JSON.stringify(['fakeHubSpot', 'fakeSalesforce', 'adapterConformance', 'seededRandom'].map((n) => typeof m[n])));`;
    const types = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })) as string[];
    expect(types).toEqual(['function', 'function', 'function', 'function']);
  });

  it('imports no test runner anywhere under adapters/ or src/ (the suite takes the runner functions)', () => {
    const files = [...sources('adapters'), ...sources('src')];
    const offenders = files.filter((f) => /^\s*(import|export)\b[^\n]*from '(vitest|jest|@jest\/globals|mocha)'|import\('(vitest|jest)'\)/m.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
