/**
 * crm-upsert-sync: make AI-generated CRM writes safe to repeat.
 * The root entry loads no vendor SDK and no database driver.
 */
export { createSync, OutcomeStatus } from './engine/index.js';
export type { Sync, SyncOptions, Outcome, HandleEvent, HandleContext, HandleResult, HandlerAction, Prepared, ApplyEachOptions, ApplyManyOptions, BulkMode, SharedKeys, Settled, ReadAnswer, ReadOptions } from './engine/index.js';
export type { Handler } from './engine/index.js';
export { deriveKey, childKey, eventKey, fingerprintOf, periodBucket, identityOf, KEY_VERSION, MAX_KEY_LENGTH, type KeyOptions } from './key.js';
export { openLedger } from './ledger/index.js';
export { memoryLedger } from './ledger/memory.js';
export type * from './ledger/types.js';
export { EntryStatus } from './ledger/types.js';
export type { CrmAdapter, AdapterCapabilities, ObjectSpec, RecordWrite, ActivityWrite, WriteResult, BatchContext, Fields, FieldValue, ReadRequest, ReadResult, ReadLink, BulkLane, BulkHooks, BulkJobRef, BulkRowResult } from './adapter.js';
export { parentMemoKey } from './adapter.js';
export {
  CrmSyncError,
  ConfigError,
  ValidationError,
  KeyConflictError,
  LedgerError,
  CrmError,
  CrmErrorKind,
  ErrorCode,
  recordGoneError,
  redact,
  registerSecret,
  serializeError,
  type SerializedError,
  type ValidationIssue,
} from './errors.js';
export { localRateBudget, unlimitedRateBudget, type RateBudget, type LocalRateBudgetOptions } from './rate-budget.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry.js';
export { windowId } from './dedupe-window.js';
export { actionSchema, actionJsonSchema, type Action } from '../schemas/action.js';
export { toolSchema, optionalParameters, SCHEMA_DIALECTS, ANTHROPIC_MAX_OPTIONAL_PARAMETERS, type SchemaDialect, type ToolSchemaOptions } from './tool-schema.js';
export { toolCallAction, DEFAULT_TOOL_CALL_SOURCE, type ToolCallOptions } from './tool-call.js';
export type { FieldDefinition, FieldDefinitionsFile, FieldType } from '../schemas/field-definitions.js';
