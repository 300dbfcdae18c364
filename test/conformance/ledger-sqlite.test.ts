import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqliteLedger } from '../../src/ledger/sqlite.js';
import { ledgerConformance } from '../../src/ledger/conformance/index.js';
import { describeMultiProcessClaims } from './ledger-multi-process.js';

const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-sqlite-'));
let n = 0;
let last = '';
let fresh = '';
afterAll(() => rmSync(dir, { recursive: true, force: true }));

ledgerConformance('sqlite', async () => {
  last = join(dir, `nested/dir/ledger-${n++}.db`);
  return sqliteLedger({ path: last });
}, {
  describe, it, expect, beforeEach, afterEach,
  clock: false,
  durable: true,
  readOnly: {
    openLast: async () => sqliteLedger({ path: last, createSchema: false }),
    openFresh: async () => {
      fresh = join(dir, `fresh-${n++}/ledger.db`);
      return sqliteLedger({ path: fresh, createSchema: false });
    },
    created: async () => {
      const parent = join(fresh, '..');
      return existsSync(parent) ? [parent, ...readdirSync(parent)] : [];
    },
  },
});

describeMultiProcessClaims('sqlite', {
  backend: 'sqlite',
  factory: 'sqliteLedger',
  options: () => ({ path: join(dir, `multi-${n++}.db`), busyTimeoutMs: 30_000 }),
  open: async (options) => sqliteLedger(options as { path: string }),
});
