export { actionSchema, actionJsonSchema, fieldValueSchema, LONE_SURROGATE_MESSAGE, type Action } from './action.js';
export { composeConfigSchema, coreConfigShape, ledgerOptionsSchema, sharedRateBudgetSchema, type CoreConfig } from './config.js';
export { checkAgainstObjects, DEFAULT_MAX_FIELD_LENGTH, type ObjectCheckOptions } from './objects.js';
export { formatZodIssues, pathSegment } from './parse.js';
export type { ValidationIssue } from './issues.js';
export type { ObjectSpec } from './objects.js';
export { snapshotInput, MAX_INPUT_DEPTH, type Snapshot } from './snapshot.js';
export { isWellFormed, escapeLoneSurrogates } from './unicode.js';
