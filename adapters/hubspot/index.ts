/** crm-upsert-sync/hubspot: the HubSpot adapter (loads @hubspot/api-client; the package root does not). */
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
