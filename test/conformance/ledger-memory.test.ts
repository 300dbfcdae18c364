import { memoryLedger } from '../../src/ledger/memory.js';
import { describeLedgerConformance } from './ledger.suite.js';

// A ledger clock a little ahead of this machine's, as a shared ledger's often is.
describeLedgerConformance('memory', async () => memoryLedger({ clock: () => Date.now() + 1500 }), { clock: true, durable: false });
