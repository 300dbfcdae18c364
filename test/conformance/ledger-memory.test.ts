import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerConformance } from '../../src/ledger/conformance/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';

// A ledger clock a little ahead of this machine's, as a shared ledger's often is.
ledgerConformance('memory', () => memoryLedger({ clock: () => Date.now() + 1500 }), {
  describe, it, expect, beforeEach, afterEach, clock: true, durable: false,
});
