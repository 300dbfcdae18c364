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
});
export type SalesforceConfig = z.infer<typeof salesforceConfigSchema>;
