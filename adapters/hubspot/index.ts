/**
 * crm-upsert-sync/hubspot: the HubSpot adapter. Loads @hubspot/api-client, an optional peer
 * (`npm install @hubspot/api-client@^13.5`); without it, importing this entry throws one
 * ConfigError naming the package and its range. The package root and /testing do not need it.
 */
export { hubspotAdapter } from './hubspot-adapter.js';
export type { HubSpotClientLike } from './hubspot-client.js';
export {
  resolveHubSpotOptions,
  DEFAULT_BASE_PATH,
  DEFAULT_RATE_LIMIT,
  DEFAULT_SEARCH_RATE_LIMIT,
  type HubSpotAdapterOptions,
  type HubSpotObjectConfig,
  type ResolvedHubSpotOptions,
} from './hubspot-options.js';
export {
  classifyHubSpotError,
  classifyHubSpotItemError,
  HubSpotUnreadableResponse,
  readableResponses,
  REQUIRED_SCOPES,
  type HubSpotClassifyContext,
  type HubSpotErrorBody,
} from './hubspot-errors.js';
