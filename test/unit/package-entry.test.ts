import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it, beforeAll } from 'vitest';

/** Which vendor SDKs and database drivers a fresh Node process has loaded after importing `entry`. */
function driversLoadedBy(entry: string): string[] {
  const script = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(entry)});
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const names = ['better-sqlite3', 'pg', 'ioredis', 'jsforce', '@hubspot/api-client'];
    console.log(JSON.stringify(names.filter((n) => cache.some((f) => f.includes('/node_modules/' + n + '/')))));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
}

describe('package entry points', () => {
  beforeAll(() => {
    if (!existsSync('dist/src/index.js')) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  });

  it('loads no vendor SDK and no database driver when the root is imported', () => {
    expect(driversLoadedBy('./dist/src/index.js'.replace(/^\.\//, `${process.cwd()}/`))).toEqual([]);
  });

  it('loads a driver only through its own entry (the check can see drivers)', () => {
    expect(driversLoadedBy(`${process.cwd()}/dist/src/ledger/sqlite.js`)).toEqual(['better-sqlite3']);
  });
});
