/**
 * crm-upsert-sync/mcp as a package entry: it resolves through "exports", the root never loads the
 * MCP SDK (an optional peer), and `crm-upsert mcp` without the SDK installed says what to install.
 * A module resolve hook in a fresh Node process sees every ESM import the entry makes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, ensureBuilt, ROOT, tempDir, writeHubSpotConfig } from '../cli/helpers.js';

let watch: string;
let block: string;

beforeAll(() => {
  ensureBuilt();
  const dir = tempDir('crm-upsert-mcp-entry-');
  const hook = (body: string) => `export async function resolve(specifier, context, next) {\n${body}\n}\n`;
  writeFileSync(join(dir, 'watch-hook.mjs'), hook(`const r = await next(specifier, context);
    if (r.url.includes('/node_modules/@modelcontextprotocol/sdk/')) process.stderr.write('sdk-loaded\\n');
    return r;`));
  writeFileSync(join(dir, 'block-hook.mjs'), hook(`if (specifier.startsWith('@modelcontextprotocol/sdk')) {
      throw Object.assign(new Error("Cannot find package '@modelcontextprotocol/sdk' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' });
    }
    return next(specifier, context);`));
  for (const name of ['watch', 'block']) {
    writeFileSync(join(dir, `${name}.mjs`), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, `${name}-hook.mjs`)).href)});\n`);
  }
  watch = join(dir, 'watch.mjs');
  block = join(dir, 'block.mjs');
});

const importing = (entry: string) =>
  spawnSync(process.execPath, ['--import', watch, '--input-type=module', '-e', `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).sort().join(','));`], { cwd: ROOT, encoding: 'utf8' });

describe('crm-upsert-sync/mcp', () => {
  it('resolves through the package exports and loads the SDK', () => {
    const r = importing('crm-upsert-sync/mcp');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('createMcpServer');
    expect(r.stdout).toContain('serveMcpHttp');
    expect(r.stderr).toContain('sdk-loaded');
  });

  it('is never loaded by the package root', () => {
    const r = importing('crm-upsert-sync');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('createSync');
    expect(r.stderr).not.toContain('sdk-loaded');
  });

  it('leaves the other commands working without the SDK, and mcp names what to install (exit 2)', () => {
    const env = cliEnv({ HUBSPOT_ACCESS_TOKEN: 'pat-na1-mcp-entry-0000' });
    expect(execFileSync(process.execPath, ['--import', block, BIN, 'schema'], { env, encoding: 'utf8' })).toContain('"op"');
    const config = writeHubSpotConfig(tempDir('crm-upsert-mcp-entry-'), 'http://127.0.0.1:9');
    const r = spawnSync(process.execPath, ['--import', block, BIN, 'mcp', '--config', config], { env, encoding: 'utf8', input: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('crm-upsert: crm-upsert mcp needs @modelcontextprotocol/sdk (^1.32.2): npm install @modelcontextprotocol/sdk@^1.32.2\n');
  });
});
