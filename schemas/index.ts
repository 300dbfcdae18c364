export { actionSchema, actionJsonSchema, fieldValueSchema, type Action } from './action.js';
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
export { parseWith, formatZodIssues } from './parse.js';
