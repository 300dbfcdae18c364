import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { sqliteLedger } from '../../src/ledger/sqlite.js';
import { describeLedgerConformance, describeMultiProcessClaims } from './ledger.suite.js';

const dir = mkdtempSync(join(tmpdir(), 'crm-upsert-sqlite-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeLedgerConformance('sqlite', async () => sqliteLedger({ path: join(dir, `nested/dir/ledger-${n++}.db`) }));

describeMultiProcessClaims('sqlite', {
  backend: 'sqlite',
  factory: 'sqliteLedger',
  options: () => ({ path: join(dir, `multi-${n++}.db`), busyTimeoutMs: 30_000 }),
  open: async (options) => sqliteLedger(options as { path: string }),
});
