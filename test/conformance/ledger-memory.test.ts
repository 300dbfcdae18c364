import { memoryLedger } from '../../src/ledger/memory.js';
import { describeLedgerConformance } from './ledger.suite.js';

describeLedgerConformance('memory', async () => memoryLedger());
