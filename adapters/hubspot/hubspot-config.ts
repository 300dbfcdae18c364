/**
 * The `hubspot` section of crm-upsert.config.json and the object map hubspotAdapter takes.
 * Secrets are never part of it: the token comes from HUBSPOT_ACCESS_TOKEN.
 */
import { z } from 'zod';
import { configSection, fieldListSchema, inlineDefinitionsSchema, nameSchema, onMissingSchema, rateLimitSchema } from '../kit/config-kit.js';

/** The environment variable holding the private-app access token. */
export const HUBSPOT_TOKEN_ENV = 'HUBSPOT_ACCESS_TOKEN';

export const hubspotRecordSchema = z.strictObject({
  kind: z.literal('record'),
  /** HubSpot object type: `contacts`, `companies`, `deals`, `p_custom`. */
  objectType: nameSchema,
  /** The unique-value property the upsert matches on. */
  idProperty: nameSchema,
  fields: fieldListSchema,
  /** Definitions written by hand for some of `fields` (type, options, length): checked before any claim. */
  definitions: inlineDefinitionsSchema.optional(),
  /**
   * Logical record object -> association type id (HUBSPOT_DEFINED) of the records this one may
   * link to (contact `{ company: 279 }`, deal `{ contact: 3, company: 341 }`): written with
   * `POST /crm/v4/associations/{from}/{to}/batch/create` after the upsert.
   */
  links: z.record(nameSchema, z.number().int().positive()).optional(),
  /** Fields a read answers besides `fields` (`['hubspot_owner_id', 'dealstage', 'createdate']`): read-only, never written. Default none. */
  readFields: fieldListSchema.optional(),
  /** Unique fields a read may match on instead of the external id (`['email']`; check-setup checks they are unique). Default none. */
  lookupBy: fieldListSchema.optional(),
  /** A record this ledger wrote that is gone from the CRM: `create` it again (reported `recreated`) or `skip` it (`RECORD_GONE`). Default `create`. */
  onMissing: onMissingSchema.optional(),
});

export const hubspotActivitySchema = z.strictObject({
  kind: z.literal('activity'),
  /** `notes`, `tasks`, `calls`, `emails`, `meetings`. */
  objectType: nameSchema,
  /** A (non-unique) text property holding the action key. */
  keyProperty: nameSchema,
  fields: fieldListSchema,
  /** Definitions written by hand for some of `fields` (type, options, length): checked before any claim. */
  definitions: inlineDefinitionsSchema.optional(),
  /**
   * Logical parent object -> HUBSPOT_DEFINED association type id (note->contact 202, task->contact
   * 204): where a create's `target` and its `links` may point, all sent inline with the create.
   */
  parents: z.record(nameSchema, z.number().int().positive()),
});

export const hubspotObjectSchema = z.discriminatedUnion('kind', [hubspotRecordSchema, hubspotActivitySchema]);
export type HubSpotObjectConfig = z.infer<typeof hubspotObjectSchema>;

export const hubspotConfigSchema = configSection(HUBSPOT_TOKEN_ENV, {
  /** API origin. Default https://api.hubapi.com. */
  basePath: z.url().optional(),
  objects: z.record(nameSchema, hubspotObjectSchema),
  /** The adapter's in-process request budget. Default 100 per 10 s. */
  rateLimit: rateLimitSchema.optional(),
});
export type HubSpotConfig = z.infer<typeof hubspotConfigSchema>;
