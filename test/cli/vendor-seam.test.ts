/**
 * The CLI reaches every CRM through one seam: its registry (src/cli/vendors.ts) maps `crm` to a
 * VendorCli in adapters/<vendor>/. Nothing else in src/cli names a CRM or branches on one, and
 * loading the CLI loads no vendor SDK.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { VENDOR_NAMES } from '../../src/cli/vendors.js';
import { ensureBuilt, ROOT } from './helpers.js';

const REGISTRY = 'src/cli/vendors.ts';

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `file:line: text` for every line of `files` matching `pattern`. */
function hits(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8').split('\n').flatMap((text, i) => (pattern.test(text) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
  );
}

/** Vendor names, their SDKs and their environment variables' prefixes. */
const VENDOR_WORDS = new RegExp([...VENDOR_NAMES, 'hubspot', 'salesforce', 'jsforce', 'HUBSPOT_', 'SF_'].join('|'), 'i');

describe('the vendor seam', () => {
  beforeAll(() => ensureBuilt());

  it('names no CRM in src/cli outside the registry', () => {
    const files = sources('src/cli').filter((f) => f !== REGISTRY);
    expect(files.length).toBeGreaterThan(5);
    expect(hits(files, VENDOR_WORDS)).toEqual([]);
  });

  it('imports vendor folders only from the registry, and adapters/ nowhere else in src', () => {
    const all = sources('src').filter((f) => f !== REGISTRY);
    const cli = all.filter((f) => f.startsWith('src/cli/'));
    // The CLI may use the kit's VendorCli contract; a vendor folder only through the registry.
    expect(hits(cli, /from '[./]*adapters\/(?!kit\/)/)).toEqual([]);
    expect(hits(all.filter((f) => !cli.includes(f)), /from '[./]*adapters\//)).toEqual([]);
  });

  it('registers every CRM with its own cli role file', () => {
    const registry = readFileSync(join(ROOT, REGISTRY), 'utf8');
    for (const name of VENDOR_NAMES) expect(registry).toContain(`'../../adapters/${name}/${name}-cli.js'`);
  });

  /** Which vendor SDKs a fresh Node process has loaded after importing `entry` (under dist/). */
  const sdksLoadedBy = (entry: string): string[] => {
    const script = `
      import { createRequire } from 'node:module';
      await import(${JSON.stringify(join(ROOT, 'dist', entry))});
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify(['jsforce', '@hubspot/api-client'].filter((n) => cache.some((f) => f.includes('/node_modules/' + n + '/')))));
    `;
    return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
  };

  it('loads no vendor SDK when the CLI program and its registry are loaded', () => {
    expect(sdksLoadedBy('src/cli/program.js')).toEqual([]);
    // The check can see an SDK: a vendor's own entry loads it.
    expect(sdksLoadedBy('adapters/hubspot/index.js')).toEqual(['@hubspot/api-client']);
  });
});
