/**
 * Child processes cannot load TypeScript, so multi-process tests run the ledger backends
 * compiled to JavaScript: `dist/` when a build newer than the sources exists (`npm test` builds
 * first), otherwise a private tsc compile of just the ledger files (a few seconds).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Each backend's entry module, without its extension; tsc follows their imports. */
const ENTRIES = { sqlite: 'src/ledger/sqlite', postgres: 'src/ledger/postgres/index', redis: 'src/ledger/redis/index' } as const;

/** Every source a compiled backend is built from: the ledger folder and the errors it raises. */
const sources = (): string[] => [
  ...readdirSync(join(ROOT, 'src/ledger'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join('src/ledger', f)),
  'src/errors.ts',
];
const newest = () => Math.max(...sources().map((s) => statSync(join(ROOT, s)).mtimeMs));

// Per process: test files compile in parallel and must not write over each other.
const privateOut = () => join(ROOT, 'node_modules/.cache/crm-upsert-sync-tests', String(process.pid));

/** Removes this process's private compile output, if any. */
export function removeCompiledLedgers(): void {
  rmSync(privateOut(), { recursive: true, force: true });
}

/** file:// URL of the compiled module for `backend` (sqlite | postgres | redis). */
export async function compiledLedgerModule(backend: 'sqlite' | 'postgres' | 'redis'): Promise<string> {
  const dist = join(ROOT, 'dist', `${ENTRIES[backend]}.js`);
  if (existsSync(dist) && statSync(dist).mtimeMs >= newest()) return pathToFileURL(dist).href;

  const out = privateOut();
  const target = join(out, `${ENTRIES[backend]}.js`);
  if (!existsSync(target)) {
    mkdirSync(out, { recursive: true });
    // Inside node_modules the package scope stops, so the output needs its own "type": "module".
    writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [
      tsc, ...Object.values(ENTRIES).map((s) => join(ROOT, `${s}.ts`)), '--outDir', out, '--rootDir', ROOT,
      '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--esModuleInterop',
      '--skipLibCheck', '--types', 'node', '--strict',
    ], { cwd: ROOT, timeout: 120_000 }).catch((err: unknown) => {
      // Type errors still emit JavaScript; only a missing output is fatal.
      if (!existsSync(target)) throw err;
    });
  }
  return pathToFileURL(target).href;
}
