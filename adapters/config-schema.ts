/** The config of the built-in CRMs: the core settings with the HubSpot, Salesforce and Pipedrive sections. */
import type { z } from 'zod';
import { composeConfigSchema } from '../schemas/config.js';
import { hubspotConfigSchema } from './hubspot/hubspot-config.js';
import { salesforceConfigSchema } from './salesforce/salesforce-config.js';
import { pipedriveConfigSchema } from './pipedrive/pipedrive-config.js';

export {
  hubspotActivitySchema,
  hubspotConfigSchema,
  hubspotObjectSchema,
  hubspotRecordSchema,
  type HubSpotConfig,
  type HubSpotObjectConfig,
} from './hubspot/hubspot-config.js';
export {
  salesforceActivitySchema,
  salesforceConfigSchema,
  salesforceObjectSchema,
  salesforceRecordSchema,
  type SalesforceConfig,
  type SalesforceObjectConfig,
} from './salesforce/salesforce-config.js';
export {
  pipedriveActivitySchema,
  pipedriveConfigSchema,
  pipedriveObjectSchema,
  pipedriveRecordSchema,
  type PipedriveConfig,
  type PipedriveObjectConfig,
} from './pipedrive/pipedrive-config.js';

export const configSchema = composeConfigSchema({ hubspot: hubspotConfigSchema, salesforce: salesforceConfigSchema, pipedrive: pipedriveConfigSchema });

export type Config = z.infer<typeof configSchema>;
