/**
 * The ledger conformance suite: what every ledger backend must do (src/ledger/types.ts is the
 * spec), runnable against any backend from one test file:
 *
 *   import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 *   ledgerConformance('mine', async () => myLedger(), { describe, it, expect, beforeEach, afterEach });
 *
 * The test framework comes in (vitest's or jest's functions), so this module imports none. The
 * factory returns a fresh, empty ledger per test; the suite closes it after the test. Time is
 * always passed explicitly (`now`), never read from a clock.
 */
import type { LedgerBackend } from '../types.js';
import { birthSuite } from './birth.js';
import { claimTableSuite } from './claim-table.js';
import { deadHoldersSuite } from './dead-holders.js';
import { entriesSuite } from './entries.js';
import { fencingSuite } from './fencing.js';
import { lookupSuite } from './lookup.js';
import type { LedgerConformanceOptions, SuiteContext } from './harness.js';
import { holdersSuite } from './holders.js';
import { marksSuite } from './marks.js';
import { notesSuite } from './notes.js';
import { storageSuite } from './storage.js';
import { windowSuite } from './window.js';

export type { Assertion, LedgerConformanceOptions, ReadOnlyWiring, TestFramework } from './harness.js';
export { CLAIM_TABLE, type ClaimTableRow } from './claim-table.js';

/**
 * Registers `ledger conformance: <name>` with the framework in `options`. `name` must be what
 * the ledger's `name` says.
 */
export function ledgerConformance(name: string, factory: () => Promise<LedgerBackend> | LedgerBackend, options: LedgerConformanceOptions): void {
  const describe = options.skip === true ? options.describe.skip : options.describe;
  if (!describe) return;
  describe(`ledger conformance: ${name}`, () => {
    let current: LedgerBackend | undefined;
    options.beforeEach(async () => {
      current = await factory();
    });
    options.afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    const ledger = (): LedgerBackend => {
      if (!current) throw new Error('ledger conformance: the factory has not returned a ledger for this test');
      return current;
    };
    const ctx: SuiteContext = {
      t: options,
      ledger,
      claimOne: async (request, now) => (await ledger().claim([request], now))[0]!,
    };
    entriesSuite(name, ctx);
    claimTableSuite(ctx);
    fencingSuite(ctx);
    lookupSuite(ctx);
    marksSuite(ctx);
    holdersSuite(ctx);
    notesSuite(ctx);
    windowSuite(ctx);
    deadHoldersSuite(ctx);
    storageSuite(ctx);
    birthSuite(ctx);
  });
}
