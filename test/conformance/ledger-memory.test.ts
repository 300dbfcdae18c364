import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerConformance } from '../../src/ledger/conformance/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';

const framework = { describe, it, expect, beforeEach, afterEach };

// A ledger clock a little ahead of this machine's, as a shared ledger's often is.
ledgerConformance('memory', () => memoryLedger({ clock: () => Date.now() + 1500 }), { ...framework, clock: true, durable: false });

// The wiring of docs/ledger.md "Writing your own backend": no clock or durability stated.
describe('with only the framework given', () => {
  ledgerConformance('memory', () => memoryLedger(), framework);
});
