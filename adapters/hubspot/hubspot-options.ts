/**
 * hubspotAdapter options: validated once with zod, so a typo fails at construction with the
 * field named, not at the first write.
 */
import { z } from 'zod';
import { hubspotObjectSchema, type HubSpotObjectConfig } from './hubspot-config.js';
import { formatZodIssues } from '../../schemas/parse.js';
import { linkLevels } from '../../src/engine/link-levels.js';
import { ConfigError } from '../../src/errors.js';
import { loadFieldDefinitions } from '../../src/field-definitions.js';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { engineObjects } from '../kit/adapter-kit.js';
import { hubspotEngineDefinitions } from './hubspot-fields.js';
import { localRateBudget, type RateBudget } from '../../src/rate-budget.js';
import type { HubSpotClientLike } from './hubspot-client.js';

export type { HubSpotObjectConfig };

export interface HubSpotAdapterOptions {
  /** Private-app access token. Default: env HUBSPOT_ACCESS_TOKEN. Not needed with `client`. */
  accessToken?: string;
  /** API origin, no trailing slash needed. Default https://api.hubapi.com (tests point it at a fake). */
  basePath?: string;
  /** An injected @hubspot/api-client Client (keep its retries off). Default: one built from the token. */
  client?: HubSpotClientLike;
  /** Logical object name -> HubSpot object (see hubspot-config.ts). */
  objects: Record<string, HubSpotObjectConfig>;
  /** Budget spent before every HTTP call; share one across workers. Default: local 100 per 10 s. */
  rateBudget?: RateBudget;
  /** Shorthand for a local `rateBudget`. Ignored when `rateBudget` is given. Default {points: 100, durationMs: 10000}. */
  rateLimit?: { points: number; durationMs: number };
  /** Budget also spent before search calls. Default: local 4 per second. */
  searchRateBudget?: RateBudget;
  /**
   * What each allowlisted field accepts (crm-upsert.fields.json from `crm-upsert schema pull`, parsed
   * or its path): values are checked and normalized before anything is claimed. Default: none
   * (field names are checked, values are not, except a contact's `email`, always an address).
   */
  fieldDefinitions?: FieldDefinitionsFile | string;
}

export interface ResolvedHubSpotOptions {
  accessToken?: string;
  basePath: string;
  client?: HubSpotClientLike;
  objects: Record<string, HubSpotObjectConfig>;
  rateBudget: RateBudget;
  searchRateBudget: RateBudget;
  fieldDefinitions?: FieldDefinitionsFile;
}

export const DEFAULT_BASE_PATH = 'https://api.hubapi.com';
export const DEFAULT_RATE_LIMIT = { points: 100, durationMs: 10_000 } as const;
export const DEFAULT_SEARCH_RATE_LIMIT = { points: 4, durationMs: 1_000 } as const;

const budget = z.custom<RateBudget>((v) => typeof (v as RateBudget | null)?.acquire === 'function', 'must be a RateBudget (an object with acquire())');
const clientSchema = z.custom<HubSpotClientLike>((v) => typeof (v as { crm?: unknown } | null)?.crm === 'object', 'must be a @hubspot/api-client Client');

const optionsSchema = z.strictObject({
  accessToken: z.string().min(1, 'must not be empty').optional(),
  basePath: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  client: clientSchema.optional(),
  objects: z
    .record(z.string().min(1), hubspotObjectSchema)
    .refine((o) => Object.keys(o).length > 0, 'must configure at least one object'),
  rateBudget: budget.optional(),
  rateLimit: z.strictObject({ points: z.number().int().positive(), durationMs: z.number().int().positive() }).optional(),
  searchRateBudget: budget.optional(),
  fieldDefinitions: z.union([z.string().min(1), z.custom<FieldDefinitionsFile>((v) => typeof v === 'object' && v !== null, 'must be the parsed crm-upsert.fields.json or its path')]).optional(),
});

/** How a wait for the local budget is described: HubSpot's own name for its limit when it is that one. */
const limitLabel = (limit: { durationMs: number }) => (limit.durationMs === 10_000 ? 'HubSpot ten-second limit' : 'HubSpot rate limit');

/** Validate options and fill defaults; throws ConfigError naming the bad field. */
export function resolveHubSpotOptions(options: HubSpotAdapterOptions, env: NodeJS.ProcessEnv = process.env): ResolvedHubSpotOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error).map((i) => `${i.path || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid hubspotAdapter options: ${issues.join('; ')}`);
  }
  const o = parsed.data;
  for (const [name, object] of Object.entries(o.objects)) {
    if (object.kind === 'record') {
      for (const to of Object.keys(object.links ?? {})) {
        if (o.objects[to]?.kind !== 'record') throw new ConfigError(`invalid hubspotAdapter options: objects.${name}.links.${to}: must name a configured record object`);
      }
      continue;
    }
    for (const parent of Object.keys(object.parents)) {
      if (o.objects[parent]?.kind !== 'record') {
        throw new ConfigError(`invalid hubspotAdapter options: objects.${name}.parents.${parent}: must name a configured record object`);
      }
    }
    if (object.fields.includes(object.keyProperty)) {
      throw new ConfigError(`invalid hubspotAdapter options: objects.${name}.fields: must not list the keyProperty ${object.keyProperty} (the adapter writes it)`);
    }
  }
  const fieldDefinitions = o.fieldDefinitions === undefined ? undefined : loadFieldDefinitions(o.fieldDefinitions, 'hubspot');
  linkLevels(engineObjects(o.objects, { definitions: hubspotEngineDefinitions(o.objects, fieldDefinitions), vendor: 'hubspotAdapter' }), 'hubspotAdapter');
  const accessToken = o.accessToken ?? (env.HUBSPOT_ACCESS_TOKEN || undefined);
  if (!o.client && !accessToken) {
    throw new ConfigError('hubspotAdapter needs a private-app access token: set HUBSPOT_ACCESS_TOKEN (or pass accessToken, or an injected client)');
  }
  return {
    accessToken,
    basePath: (o.basePath ?? DEFAULT_BASE_PATH).replace(/\/+$/, ''),
    client: o.client,
    objects: o.objects,
    ...(fieldDefinitions ? { fieldDefinitions } : {}),
    rateBudget: o.rateBudget ?? localRateBudget({ ...(o.rateLimit ?? DEFAULT_RATE_LIMIT), label: limitLabel(o.rateLimit ?? DEFAULT_RATE_LIMIT) }),
    searchRateBudget: o.searchRateBudget ?? localRateBudget({ ...DEFAULT_SEARCH_RATE_LIMIT, label: 'HubSpot search limit' }),
  };
}
