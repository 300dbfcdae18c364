/**
 * pipedriveAdapter options: validated once with zod, so a typo fails at construction with the
 * field named, not at the first write.
 */
import { z } from 'zod';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { formatZodIssues } from '../../schemas/parse.js';
import { linkLevels } from '../../src/engine/link-levels.js';
import { ConfigError } from '../../src/errors.js';
import { loadFieldDefinitions } from '../../src/field-definitions.js';
import { localRateBudget, type RateBudget } from '../../src/rate-budget.js';
import { engineObjects } from '../kit/adapter-kit.js';
import type { PipedriveHttp } from './pipedrive-client.js';
import { PIPEDRIVE_TOKEN_ENV, pipedriveObjectSchema, type PipedriveObjectConfig } from './pipedrive-config.js';

export type { PipedriveObjectConfig };

export interface PipedriveAdapterOptions {
  /** API token, sent as the `x-api-token` header (never in a URL). Default: env PIPEDRIVE_API_TOKEN. Not needed with `http`. */
  apiToken?: string;
  /** The company's subdomain: `acme` for https://acme.pipedrive.com. Needed unless `basePath` is given. */
  companyDomain?: string;
  /** API origin. Default `https://{companyDomain}.pipedrive.com`; tests point it at a fake on loopback. */
  basePath?: string;
  /** An injected HTTP client (see pipedrive-client.ts). Default: one built on fetch from the token and base path. */
  http?: PipedriveHttp;
  /** Logical object name -> Pipedrive entity (see pipedrive-config.ts). */
  objects: Record<string, PipedriveObjectConfig>;
  /**
   * What each allowlisted field accepts (crm-upsert.fields.json from `crm-upsert schema pull`, parsed
   * or its path): values (option labels to ids included) are checked before anything is claimed. Default none.
   */
  fieldDefinitions?: FieldDefinitionsFile | string;
  /** Budget spent before every request; share one across workers. Default: local 20 per 2 s. */
  rateBudget?: RateBudget;
  /** Shorthand for a local `rateBudget`. Ignored when `rateBudget` is given. Default { points: 20, durationMs: 2000 }. */
  rateLimit?: { points: number; durationMs: number };
  /** Budget also spent before each search request. Default: local 10 per 2 s (Pipedrive's search limit on every plan). */
  searchRateBudget?: RateBudget;
  /**
   * After a create whose answer was lost, how long to keep looking it up before the action fails
   * retryable (never re-sent while unconfirmed): the waits between lookups, in ms. Default [250, 1000, 2500].
   */
  recoveryDelaysMs?: readonly number[];
  /**
   * How long a create that may have committed stays unconfirmed in this process: within it, a
   * retry looks the record up again and never re-sends the create. Default 120000 (two minutes,
   * far beyond the search index's usual lag).
   */
  unconfirmedCreateMs?: number;
  /**
   * Before the search, look a record up in the entity's list of records updated in the last ten
   * minutes too (the database, not the lagging index): 1 more request per record not known to the
   * ledger, and a record another ledger's writer, or another process retrying a lost create, made
   * a moment ago is found instead of created again. Default false (one ledger shared by every
   * writer serializes them without it).
   */
  recentLookup?: boolean;
  /** Per-request timeout in ms. Default 30000. */
  timeoutMs?: number;
}

export interface ResolvedPipedriveOptions {
  apiToken?: string;
  basePath: string;
  http?: PipedriveHttp;
  objects: Record<string, PipedriveObjectConfig>;
  fieldDefinitions?: FieldDefinitionsFile;
  rateBudget: RateBudget;
  searchRateBudget: RateBudget;
  recoveryDelaysMs: readonly number[];
  unconfirmedCreateMs: number;
  recentLookup: boolean;
  timeoutMs: number;
}

export const DEFAULT_RATE_LIMIT = { points: 20, durationMs: 2_000 } as const;
export const DEFAULT_SEARCH_RATE_LIMIT = { points: 10, durationMs: 2_000 } as const;
export const DEFAULT_RECOVERY_DELAYS_MS = [250, 1_000, 2_500] as const;

const budget = z.custom<RateBudget>((v) => typeof (v as RateBudget | null)?.acquire === 'function', 'must be a RateBudget (an object with acquire())');

const optionsSchema = z.strictObject({
  apiToken: z.string().min(1, 'must not be empty').optional(),
  companyDomain: z.string().regex(/^[a-z0-9-]+$/i, 'must be the subdomain alone, like "acme"').optional(),
  basePath: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  http: z.custom<PipedriveHttp>((v) => typeof (v as PipedriveHttp | null)?.send === 'function', 'must be a PipedriveHttp (an object with send())').optional(),
  objects: z.record(z.string().min(1), pipedriveObjectSchema).refine((o) => Object.keys(o).length > 0, 'must configure at least one object'),
  fieldDefinitions: z.union([z.string().min(1), z.custom<FieldDefinitionsFile>((v) => typeof v === 'object' && v !== null, 'must be the parsed crm-upsert.fields.json or its path')]).optional(),
  rateBudget: budget.optional(),
  rateLimit: z.strictObject({ points: z.number().int().positive(), durationMs: z.number().int().positive() }).optional(),
  searchRateBudget: budget.optional(),
  recoveryDelaysMs: z.array(z.number().int().nonnegative()).max(20).optional(),
  unconfirmedCreateMs: z.number().int().nonnegative().optional(),
  recentLookup: z.boolean().optional(),
  timeoutMs: z.number().int().positive().optional(),
});

/** Validate options and fill defaults; throws ConfigError naming the bad field. */
export function resolvePipedriveOptions(options: PipedriveAdapterOptions, env: NodeJS.ProcessEnv = process.env): ResolvedPipedriveOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error).map((i) => `${i.path || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid pipedriveAdapter options: ${issues.join('; ')}`);
  }
  const o = parsed.data;
  for (const [name, object] of Object.entries(o.objects)) {
    const refs = object.kind === 'record' ? Object.entries(object.links ?? {}) : Object.entries(object.parents);
    const map = object.kind === 'record' ? 'links' : 'parents';
    for (const [to, field] of refs) {
      const target = o.objects[to];
      if (target?.kind !== 'record') throw new ConfigError(`invalid pipedriveAdapter options: objects.${name}.${map}.${to}: must name a configured record object`);
      const wants = { person_id: 'person', org_id: 'organization', deal_id: 'deal' }[field];
      if (target.entity !== wants) throw new ConfigError(`invalid pipedriveAdapter options: objects.${name}.${map}.${to}: ${field} points at a ${wants}, but ${to} is a ${target.entity}`);
    }
    if (object.kind === 'record' && object.fields.includes(object.idField)) {
      throw new ConfigError(`invalid pipedriveAdapter options: objects.${name}.fields: must not list the idField ${object.idField} (the adapter writes it)`);
    }
  }
  const fieldDefinitions = o.fieldDefinitions === undefined ? undefined : loadFieldDefinitions(o.fieldDefinitions, 'pipedrive');
  linkLevels(engineObjects(o.objects, { slotted: true, ...(fieldDefinitions ? { definitions: fieldDefinitions } : {}), vendor: 'pipedriveAdapter' }), 'pipedriveAdapter');
  const apiToken = o.apiToken ?? (env[PIPEDRIVE_TOKEN_ENV] || undefined);
  if (!o.http && !apiToken) throw new ConfigError(`pipedriveAdapter needs an API token: set ${PIPEDRIVE_TOKEN_ENV} (or pass apiToken)`);
  if (!o.basePath && !o.companyDomain && !o.http) throw new ConfigError('pipedriveAdapter needs companyDomain (acme for https://acme.pipedrive.com) or basePath');
  const basePath = (o.basePath ?? `https://${o.companyDomain ?? 'api'}.pipedrive.com`).replace(/\/+$/, '');
  return {
    ...(apiToken ? { apiToken } : {}),
    basePath,
    ...(o.http ? { http: o.http } : {}),
    objects: o.objects,
    ...(fieldDefinitions ? { fieldDefinitions } : {}),
    rateBudget: o.rateBudget ?? localRateBudget({ ...(o.rateLimit ?? DEFAULT_RATE_LIMIT), label: 'Pipedrive burst limit' }),
    searchRateBudget: o.searchRateBudget ?? localRateBudget({ ...DEFAULT_SEARCH_RATE_LIMIT, label: 'Pipedrive search limit' }),
    recoveryDelaysMs: o.recoveryDelaysMs ?? DEFAULT_RECOVERY_DELAYS_MS,
    unconfirmedCreateMs: o.unconfirmedCreateMs ?? 120_000,
    recentLookup: o.recentLookup ?? false,
    timeoutMs: o.timeoutMs ?? 30_000,
  };
}
