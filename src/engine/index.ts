/** The engine: `createSync` and the types of what it returns. */
export { createSync, type ApplyEachOptions, type ApplyManyOptions, type SharedKeys, type Prepared, type Settled, type Sync, type SyncOptions, type ReadAnswer, type ReadOptions } from './create-sync.js';
export type { BulkMode } from './types.js';
export type { HandleContext, HandleEvent, HandleResult, Handler, HandlerAction } from './guarded.js';
export { OutcomeStatus, type Outcome } from '../outcome.js';
export { decodeActionFailure, storedAction, type ActionFailure } from './payloads.js';
