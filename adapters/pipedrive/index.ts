/**
 * crm-upsert-sync/pipedrive: the Pipedrive adapter. It talks HTTP through its own small client on
 * the platform's fetch (no SDK to install): see docs/pipedrive.md for why.
 */
export { pipedriveAdapter, type PipedriveAdapter } from './pipedrive-adapter.js';
export { pipedriveHttp, type PipedriveAnswer, type PipedriveHttp, type PipedriveHttpOptions, type PipedriveRequest } from './pipedrive-client.js';
export {
  DEFAULT_RATE_LIMIT,
  DEFAULT_RECOVERY_DELAYS_MS,
  DEFAULT_SEARCH_RATE_LIMIT,
  resolvePipedriveOptions,
  type PipedriveAdapterOptions,
  type PipedriveObjectConfig,
  type ResolvedPipedriveOptions,
} from './pipedrive-options.js';
export { classifyPipedriveError, PipedriveHttpError, type PipedriveErrorBody } from './pipedrive-errors.js';
export { PIPEDRIVE_TOKEN_ENV, type PipedriveConfig } from './pipedrive-config.js';
