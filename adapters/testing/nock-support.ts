/**
 * Which nock the fakes' nock front works with. nock is an optional peer (`^14.0.0 || ^15.0.0`),
 * needed only by `fake.open('nock')` / `intercept()`. On Node 20, nock 15.0.1 and later make
 * every intercepted request fail with "Promise.withResolvers is not a function" (they need Node
 * 22 APIs; 15.0.1 and 15.0.2 still declare Node 20 in their engines), so the front refuses them
 * up front with a message saying what to install instead.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const NOCK_INSTALL = 'npm install -D nock@14';

export type NockSupport = { ok: true } | { ok: false; message: string };

const parse = (version: string): [number, number, number] | undefined => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
};

/**
 * Whether nock `nockVersion` (undefined: not installed) works on Node `nodeVersion`
 * (`process.versions.node`). Pure: versions in, ok or the message out.
 */
export function nockSupport(nockVersion: string | undefined, nodeVersion: string): NockSupport {
  if (nockVersion === undefined) return { ok: false, message: `the fakes' nock front needs nock (^14.0.0, or exactly 15.0.0 on Node 20): ${NOCK_INSTALL}` };
  const nock = parse(nockVersion);
  const node = parse(nodeVersion);
  if (!nock || !node) return { ok: true };
  const [major, minor, patch] = nock;
  const needsNode22 = major > 15 || (major === 15 && (minor > 0 || patch >= 1));
  if (needsNode22 && node[0] < 22) {
    return { ok: false, message: `nock ${nockVersion} is not supported on Node ${node[0]}; install nock@14 or nock@15.0.0 (nock 15.0.1 and later need Node 22)` };
  }
  return { ok: true };
}

/**
 * The installed nock's version, read from its package.json (nock 15.0.1+ exports only its
 * entry, so the package.json is found from the resolved entry). Undefined when nock is missing.
 */
export function installedNockVersion(require: NodeJS.Require = createRequire(import.meta.url)): string | undefined {
  let entry: string;
  try {
    entry = require.resolve('nock');
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'nock') return pkg.version;
    } catch {
      // no package.json here: keep walking up
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Throw unless the installed nock works on this Node: what `fake.open('nock')` and `intercept()` check first. */
export function assertNockSupported(): void {
  const support = nockSupport(installedNockVersion(), process.versions.node);
  if (!support.ok) throw new Error(`[crm-upsert] ${support.message}`);
}
