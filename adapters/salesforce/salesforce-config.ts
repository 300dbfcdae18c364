/**
 * The `salesforce` section of crm-upsert.config.json and the object map salesforceAdapter
 * takes. Secrets are never part of it: the token comes from SF_ACCESS_TOKEN (and the instance
 * URL from SF_INSTANCE_URL when the section has none).
 */
import { z } from 'zod';
import { configSection, fieldListSchema, inlineDefinitionsSchema, nameSchema, onMissingSchema } from '../kit/config-kit.js';

/** The environment variable holding the access token (session id). */
export const SALESFORCE_TOKEN_ENV = 'SF_ACCESS_TOKEN';
/** The environment variable holding the instance URL when the config has none. */
export const SALESFORCE_INSTANCE_ENV = 'SF_INSTANCE_URL';

export const salesforceRecordSchema = z.strictObject({
  kind: z.literal('record'),
  sobject: nameSchema,
  /** An External ID (and Unique) field on the sObject. */
  externalIdField: nameSchema,
  fields: fieldListSchema,
  /** Definitions written by hand for some of `fields` (type, options, length): checked before any claim. */
  definitions: inlineDefinitionsSchema.optional(),
  /**
   * Logical record object -> the lookup field on this sObject that a link to it sets (Contact
   * `{ company: 'AccountId' }`): sent inline in the upsert as an external-id reference, 0 extra calls.
   */
  links: z.record(nameSchema, nameSchema).optional(),
  /** Fields a read answers besides `fields` (`['OwnerId', 'StageName', 'CreatedDate']`): read-only, never written. Default none. */
  readFields: fieldListSchema.optional(),
  /** Unique fields a read may match on instead of the external id (`['email']`; check-setup checks they are unique). Default none. */
  lookupBy: fieldListSchema.optional(),
  /** A record this ledger wrote that is gone from the CRM: `create` it again (reported `recreated`) or `skip` it (`RECORD_GONE`). Default `create`. */
  onMissing: onMissingSchema.optional(),
});

export const salesforceActivitySchema = z.strictObject({
  kind: z.literal('activity'),
  sobject: nameSchema,
  /** An External ID (Unique) field on the activity holding the action key: Task upserts on it. */
  externalIdField: nameSchema,
  fields: fieldListSchema,
  /** Definitions written by hand for some of `fields` (type, options, length): checked before any claim. */
  definitions: inlineDefinitionsSchema.optional(),
  /** Logical parent object -> lookup field on the activity (`WhoId`, `WhatId`): where its `target` and `links` may point. */
  parents: z.record(nameSchema, nameSchema),
});

export const salesforceObjectSchema = z.discriminatedUnion('kind', [salesforceRecordSchema, salesforceActivitySchema]);
export type SalesforceObjectConfig = z.infer<typeof salesforceObjectSchema>;

/**
 * `salesforce.bulk`: when `sync` sends large upserts through a Bulk API 2.0 job and how it waits
 * for one; each key is passed to the adapter's `bulk` options (defaults in SalesforceBulkOptions).
 */
export const salesforceBulkConfigSchema = z.strictObject({
  /** Fewest upserts of one object in one call that go through a job under `--bulk auto`. Default 2,000. */
  minRecords: z.number().int().positive().optional(),
  /** Wait before the first poll of a job, and the first backoff step, in ms. Default 5,000. */
  pollIntervalMs: z.number().int().positive().optional(),
  /** Longest wait between two polls, in ms. Default 30,000. */
  maxPollIntervalMs: z.number().int().positive().optional(),
  /** Stop following a job (it goes on in Salesforce; the next run follows it) after this many ms of polling. Default 3,600,000. */
  timeoutMs: z.number().int().positive().optional(),
  /** Largest upload body in bytes; more rows go into further jobs. Default 100,000,000. */
  maxUploadBytes: z.number().int().positive().optional(),
});
export type SalesforceBulkConfig = z.infer<typeof salesforceBulkConfigSchema>;

export const salesforceConfigSchema = configSection(SALESFORCE_TOKEN_ENV, {
  /** `https://yourorg.my.salesforce.com`. Default: env SF_INSTANCE_URL. */
  instanceUrl: z.url().optional(),
  /** REST API version. Default `'60.0'`. */
  apiVersion: z.string().regex(/^\d+\.\d$/, 'must look like "60.0"').optional(),
  objects: z.record(nameSchema, salesforceObjectSchema),
  /** Stop once this share of the daily API allocation is used. Default 0.9. */
  dailyLimitShare: z.number().gt(0).max(1).optional(),
  /** Let duplicate rules allow the save. Default false. */
  allowDuplicateSave: z.boolean().optional(),
  /** Bulk API 2.0 for large upserts: threshold, polling, timeout, upload size. */
  bulk: salesforceBulkConfigSchema.optional(),
});
export type SalesforceConfig = z.infer<typeof salesforceConfigSchema>;
