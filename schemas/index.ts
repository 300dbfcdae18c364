export { actionSchema, actionJsonSchema, fieldValueSchema, LONE_SURROGATE_MESSAGE, type Action } from './action.js';
export {
  configSchema,
  hubspotObjectSchema,
  salesforceObjectSchema,
  hubspotConfigSchema,
  salesforceConfigSchema,
  type Config,
  type HubSpotObjectConfig,
  type SalesforceObjectConfig,
} from './config.js';
export { checkAgainstObjects, DEFAULT_MAX_FIELD_LENGTH, type ObjectCheckOptions } from './objects.js';
export { parseWith, formatZodIssues, pathSegment } from './parse.js';
export { snapshotInput, MAX_INPUT_DEPTH, type Snapshot } from './snapshot.js';
export { isWellFormed, escapeLoneSurrogates } from './unicode.js';
