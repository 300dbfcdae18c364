/**
 * The `pipedrive` section of crm-upsert.config.json and the object map pipedriveAdapter takes.
 * Secrets are never part of it: the API token comes from PIPEDRIVE_API_TOKEN.
 */
import { z } from 'zod';
import { configSection, fieldListSchema, inlineDefinitionsSchema, nameSchema, rateLimitSchema } from '../kit/config-kit.js';

/** The environment variable holding the API token (sent as the `x-api-token` header). */
export const PIPEDRIVE_TOKEN_ENV = 'PIPEDRIVE_API_TOKEN';

/** The Pipedrive entities a record object can be. */
export const RECORD_ENTITIES = ['person', 'organization', 'deal'] as const;
export type RecordEntity = (typeof RECORD_ENTITIES)[number];

/** The Pipedrive entities an activity object can be: a v1 note, or a v2 activity (task, call, ...). */
export const ACTIVITY_ENTITIES = ['note', 'activity'] as const;
export type ActivityEntity = (typeof ACTIVITY_ENTITIES)[number];

/** A 40-character custom field key (Pipedrive's hash key), as opposed to a field's name. */
export const isCustomFieldKey = (name: string): boolean => /^[0-9a-f]{40}$/.test(name);

export const pipedriveRecordSchema = z.strictObject({
  kind: z.literal('record'),
  entity: z.enum(RECORD_ENTITIES),
  /**
   * The custom field holding the external id: its name (`ai_external_id`) or its 40-character key.
   * It must be a `varchar` field (searchable, 255 characters at most): `check-setup --create` makes it.
   */
  idField: nameSchema,
  /** Standard fields by API key (`name`, `email`, `title`, `value`), custom fields by name or 40-character key. */
  fields: fieldListSchema,
  /** Definitions written by hand for some of `fields` (type, options, length): checked before any claim. */
  definitions: inlineDefinitionsSchema.optional(),
  /**
   * Logical record object -> the relation field this record sets to it: a person `{ company: 'org_id' }`,
   * a deal `{ contact: 'person_id', company: 'org_id' }`. Sent in the record's own create or update.
   */
  links: z.record(nameSchema, z.enum(['org_id', 'person_id'])).optional(),
  /** Fields a read answers besides `fields` (`['owner_id', 'add_time']`): read-only, never written. Default none. */
  readFields: fieldListSchema.optional(),
  /** Fields a read may match on instead of the external id (`['email']` for persons). Default none. */
  lookupBy: fieldListSchema.optional(),
});

export const pipedriveActivitySchema = z.strictObject({
  kind: z.literal('activity'),
  entity: z.enum(ACTIVITY_ENTITIES),
  /** For `entity: 'activity'`: its type key (`task`, `call`, `meeting`, ...). Default `task`. */
  activityType: nameSchema.optional(),
  /** Note: `content`; activity: `subject`, `note`, `due_date`, `due_time`, `done`, ... (no custom fields exist on either). */
  fields: fieldListSchema,
  /** Definitions written by hand for some of `fields` (type, options, length): checked before any claim. */
  definitions: inlineDefinitionsSchema.optional(),
  /**
   * Logical record object -> the relation field of the note or activity: `person_id`, `org_id`,
   * `deal_id`. A create's target and its links may point at each, all sent in the one create.
   */
  parents: z.record(nameSchema, z.enum(['person_id', 'org_id', 'deal_id'])),
});

export const pipedriveObjectSchema = z.discriminatedUnion('kind', [pipedriveRecordSchema, pipedriveActivitySchema]);
export type PipedriveObjectConfig = z.infer<typeof pipedriveObjectSchema>;
export type PipedriveRecordConfig = Extract<PipedriveObjectConfig, { kind: 'record' }>;
export type PipedriveActivityConfig = Extract<PipedriveObjectConfig, { kind: 'activity' }>;

export const pipedriveConfigSchema = configSection(PIPEDRIVE_TOKEN_ENV, {
  /** The company's subdomain (`acme` for https://acme.pipedrive.com). Needed unless `basePath` is given. */
  companyDomain: z.string().regex(/^[a-z0-9-]+$/i, 'must be the subdomain alone, like "acme"').optional(),
  /** API origin. Default `https://{companyDomain}.pipedrive.com`. */
  basePath: z.url().optional(),
  objects: z.record(nameSchema, pipedriveObjectSchema),
  /** The adapter's in-process request budget. Default 20 per 2 s (the smallest plan's burst limit). */
  rateLimit: rateLimitSchema.optional(),
  /** Also look records up in the recent-update list before the search (see the adapter option). Default false. */
  recentLookup: z.boolean().optional(),
});
export type PipedriveConfig = z.infer<typeof pipedriveConfigSchema>;
