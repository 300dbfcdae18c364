/**
 * salesforceAdapter options: validated once at construction, defaults applied, secrets taken
 * from the environment when not passed.
 */
import type { BulkJobProgress } from '../kit/vendor-cli.js';
import { z } from 'zod';
import { linkLevels } from '../../src/engine/link-levels.js';
import { ConfigError } from '../../src/errors.js';
import { loadFieldDefinitions } from '../../src/field-definitions.js';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { engineObjects } from '../kit/adapter-kit.js';
import type { RateBudget } from '../../src/rate-budget.js';
import { salesforceObjectSchema, type SalesforceObjectConfig } from './salesforce-config.js';
import { relationshipName } from './salesforce-requests.js';
import { isApiName } from './soql.js';

export type { SalesforceObjectConfig };

/** The Bulk API 2.0 client's settings (`bulk` in the adapter's options). */
export interface SalesforceBulkOptions {
  /** Wait before the first poll of a job being processed, and the first backoff step, in ms. Default 5,000. */
  pollIntervalMs?: number;
  /** Longest wait between two polls; each wait is 1.5 times the last, up to this. Default 30,000. */
  maxPollIntervalMs?: number;
  /** Give up polling (the job goes on in Salesforce) once the waits add up to this, in ms. Default 3,600,000 (one hour). */
  timeoutMs?: number;
  /** Largest upload body in bytes (UTF-8); more rows go into further jobs. Default 100,000,000 (the guide's advice for its 150 MB limit). */
  maxUploadBytes?: number;
  /** Retries of a read (a poll, a result set) that failed transiently (5xx, 429, network). Default 3. */
  readRetries?: number;
  /** How to wait (tests inject one that does not). Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Fewest upserts of one object in one call that `sync` (and `applyMany` with `bulk: 'auto'`)
   * sends through a Bulk API 2.0 job instead of sObject Collections. Default 2,000 (Salesforce's
   * own advice for when Bulk API 2.0 pays).
   */
  minRecords?: number;
  /** Called as each job of the bulk lane moves: created, uploaded, each poll, finished (the CLI prints a progress line). */
  onProgress?: (progress: BulkProgress) => void;
}

/** Where one job of the bulk lane stands (the shape the CLI's progress line reads). */
export type BulkProgress = BulkJobProgress;

/**
 * The few members of a jsforce `Connection` the adapter uses (jsforce 3.10.16). A real
 * `new jsforce.Connection(...)` satisfies it.
 */
export interface SalesforceConnection {
  instanceUrl: string;
  version: string;
  accessToken?: string | null;
  /** Parsed by jsforce from `Sforce-Limit-Info: api-usage=N/M` after each response. */
  limitInfo?: { apiUsage?: { used: number; limit: number } };
  request<R = unknown>(request: SalesforceHttpRequest, options?: object): Promise<R>;
  /** jsforce emits `refresh` with the new access token when it refreshes the session. */
  on?(event: 'refresh', listener: (accessToken: string) => void): unknown;
}

export interface SalesforceHttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SalesforceAdapterOptions {
  /** `https://yourorg.my.salesforce.com`. Default: env `SF_INSTANCE_URL`. */
  instanceUrl?: string;
  /** OAuth access token (session id). Default: env `SF_ACCESS_TOKEN`. Never logged. */
  accessToken?: string;
  /** REST API version, a string like `'60.0'`; 46.0 or later (sObject Collections upsert). Default `'60.0'`. */
  apiVersion?: string;
  /** An existing jsforce Connection to use instead of building one (its own token and instance URL apply). */
  connection?: SalesforceConnection;
  /** Logical object name -> sObject, external-id field, field allowlist (and parents for activities). */
  objects: Record<string, SalesforceObjectConfig>;
  /** Spent before every HTTP request (share one across workers). Default: none. */
  rateBudget?: RateBudget;
  /** Stop (quota error) once this share of the daily API allocation is used, 0 < share <= 1. Default 0.9. */
  dailyLimitShare?: number;
  /** Send `Sforce-Duplicate-Rule-Header: allowSave=true` so duplicate *rules* do not block upserts. Default false. */
  allowDuplicateSave?: boolean;
  /**
   * What each allowlisted field accepts (crm-upsert.fields.json from `crm-upsert schema pull`, parsed
   * or its path): values are checked and normalized before anything is claimed. Default: none
   * (field names are checked, values are not).
   */
  fieldDefinitions?: FieldDefinitionsFile | string;
  /** Bulk API 2.0 (`adapter.bulk`, and the bulk lane of sync): when it is used, poll interval and backoff, timeout, upload size limit, progress. Defaults in SalesforceBulkOptions. */
  bulk?: SalesforceBulkOptions;
}

export interface ResolvedSalesforceOptions {
  instanceUrl?: string;
  accessToken?: string;
  apiVersion: string;
  connection?: SalesforceConnection;
  objects: Record<string, SalesforceObjectConfig>;
  rateBudget?: RateBudget;
  dailyLimitShare: number;
  allowDuplicateSave: boolean;
  fieldDefinitions?: FieldDefinitionsFile;
  bulk?: SalesforceBulkOptions;
}

const optionsSchema = z.strictObject({
  instanceUrl: z.url().optional(),
  accessToken: z.string().min(1).optional(),
  apiVersion: z
    .string()
    .regex(/^\d+\.\d$/, 'must look like "60.0"')
    .refine((v) => Number(v) >= 46, 'must be 46.0 or later (sObject Collections upsert)')
    .optional(),
  connection: z.custom<SalesforceConnection>((v) => typeof v === 'object' && v !== null && typeof (v as { request?: unknown }).request === 'function', 'must be a jsforce Connection').optional(),
  objects: z.record(z.string().min(1), salesforceObjectSchema).refine((o) => Object.keys(o).length > 0, 'must configure at least one object'),
  rateBudget: z.custom<RateBudget>((v) => typeof v === 'object' && v !== null && typeof (v as { acquire?: unknown }).acquire === 'function', 'must have acquire()').optional(),
  dailyLimitShare: z.number().gt(0).max(1).optional(),
  allowDuplicateSave: z.boolean().optional(),
  bulk: z
    .strictObject({
      pollIntervalMs: z.number().int().min(0).optional(),
      maxPollIntervalMs: z.number().int().min(0).optional(),
      timeoutMs: z.number().int().min(0).optional(),
      maxUploadBytes: z.number().int().positive().optional(),
      readRetries: z.number().int().min(0).optional(),
      minRecords: z.number().int().min(1).optional(),
      onProgress: z.custom<(p: BulkProgress) => void>((v) => typeof v === 'function', 'must be a function').optional(),
      sleep: z.custom<(ms: number) => Promise<void>>((v) => typeof v === 'function', 'must be a function').optional(),
    })
    .optional(),
  fieldDefinitions: z.union([z.string().min(1), z.custom<FieldDefinitionsFile>((v) => typeof v === 'object' && v !== null, 'must be the parsed crm-upsert.fields.json or its path')]).optional(),
});

/** Validate options, apply defaults and the environment. Throws ConfigError naming the field. */
export function resolveSalesforceOptions(options: SalesforceAdapterOptions, env: NodeJS.ProcessEnv = process.env): ResolvedSalesforceOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join('.');
    throw new ConfigError(`salesforce option ${path || '(root)'}: ${issue.message}`, { cause: parsed.error });
  }
  const o = parsed.data;
  for (const [name, spec] of Object.entries(o.objects)) {
    for (const [field, value] of [['sobject', spec.sobject], ['externalIdField', spec.externalIdField]] as const) {
      if (!isApiName(value)) throw new ConfigError(`salesforce option objects.${name}.${field}: "${value}" is not a Salesforce API name`);
    }
    if (spec.kind !== 'activity') {
      for (const [to, lookup] of Object.entries(spec.links ?? {})) {
        if (o.objects[to]?.kind !== 'record') throw new ConfigError(`salesforce option objects.${name}.links.${to}: must name a configured record object`);
        if (!isApiName(lookup)) throw new ConfigError(`salesforce option objects.${name}.links.${to}: "${lookup}" is not a lookup field API name`);
        // The link is sent by the lookup's relationship name, derived from the field's name.
        if (relationshipName(lookup) === undefined) throw new ConfigError(`salesforce option objects.${name}.links.${to}: "${lookup}" is not a lookup field name (a standard one ends in Id, a custom one in __c)`);
      }
      continue;
    }
    for (const [parent, lookup] of Object.entries(spec.parents)) {
      const parentSpec = o.objects[parent];
      if (!parentSpec || parentSpec.kind !== 'record') {
        throw new ConfigError(`salesforce option objects.${name}.parents.${parent}: must name a configured record object`);
      }
      if (!isApiName(lookup)) throw new ConfigError(`salesforce option objects.${name}.parents.${parent}: "${lookup}" is not a lookup field API name`);
    }
  }
  const fieldDefinitions = o.fieldDefinitions === undefined ? undefined : loadFieldDefinitions(o.fieldDefinitions, 'salesforce');
  linkLevels(engineObjects(o.objects, { ...(fieldDefinitions ? { definitions: fieldDefinitions } : {}), vendor: 'salesforce' }), 'salesforce');
  const resolved: ResolvedSalesforceOptions = {
    ...(fieldDefinitions ? { fieldDefinitions } : {}),
    apiVersion: o.apiVersion ?? '60.0',
    objects: o.objects,
    rateBudget: o.rateBudget,
    dailyLimitShare: o.dailyLimitShare ?? 0.9,
    allowDuplicateSave: o.allowDuplicateSave ?? false,
    ...(o.bulk ? { bulk: o.bulk } : {}),
  };
  if (o.connection) return { ...resolved, connection: o.connection };
  const instanceUrl = o.instanceUrl ?? env.SF_INSTANCE_URL;
  const accessToken = o.accessToken ?? env.SF_ACCESS_TOKEN;
  const missing = [!instanceUrl && 'SF_INSTANCE_URL (or option instanceUrl)', !accessToken && 'SF_ACCESS_TOKEN (or option accessToken)'].filter(Boolean);
  if (missing.length > 0) throw new ConfigError(`salesforce credentials missing: set ${missing.join(' and ')}`);
  if (!z.url().safeParse(instanceUrl).success) throw new ConfigError('salesforce option instanceUrl (SF_INSTANCE_URL): must be a URL like https://yourorg.my.salesforce.com');
  return { ...resolved, instanceUrl: instanceUrl!.replace(/\/+$/, ''), accessToken };
}
