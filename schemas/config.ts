/**
 * crm-upsert.config.json, and the object maps both adapters take. Secrets are never part of
 * it: tokens come from the environment (HUBSPOT_ACCESS_TOKEN, SF_INSTANCE_URL, SF_ACCESS_TOKEN).
 */
import { z } from 'zod';

const name = z.string().min(1, 'must not be empty');
const fieldList = z.array(name).min(1, 'must list at least one field');

export const hubspotRecordSchema = z.strictObject({
  kind: z.literal('record'),
  /** HubSpot object type: `contacts`, `companies`, `deals`, `p_custom`. */
  objectType: name,
  /** The unique-value property the upsert matches on. */
  idProperty: name,
  fields: fieldList,
});

export const hubspotActivitySchema = z.strictObject({
  kind: z.literal('activity'),
  /** `notes`, `tasks`, `calls`, `emails`, `meetings`. */
  objectType: name,
  /** A (non-unique) text property holding the action key. */
  keyProperty: name,
  fields: fieldList,
  /** Logical parent object -> HUBSPOT_DEFINED association type id (note->contact 202, task->contact 204). */
  parents: z.record(name, z.number().int().positive()),
});

export const hubspotObjectSchema = z.discriminatedUnion('kind', [hubspotRecordSchema, hubspotActivitySchema]);

export const salesforceRecordSchema = z.strictObject({
  kind: z.literal('record'),
  sobject: name,
  /** An External ID (and Unique) field on the sObject. */
  externalIdField: name,
  fields: fieldList,
});

export const salesforceActivitySchema = z.strictObject({
  kind: z.literal('activity'),
  sobject: name,
  /** An External ID (Unique) field on the activity holding the action key: Task upserts on it. */
  externalIdField: name,
  fields: fieldList,
  /** Logical parent object -> lookup field on the activity (`WhoId`, `WhatId`). */
  parents: z.record(name, name),
});

export const salesforceObjectSchema = z.discriminatedUnion('kind', [salesforceRecordSchema, salesforceActivitySchema]);

export type HubSpotObjectConfig = z.infer<typeof hubspotObjectSchema>;
export type SalesforceObjectConfig = z.infer<typeof salesforceObjectSchema>;

const rateLimitSchema = z.strictObject({
  points: z.number().int().positive(),
  durationMs: z.number().int().positive(),
});

const noSecrets = (section: string) => (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
  for (const key of ['accessToken', 'token', 'password', 'clientSecret', 'refreshToken']) {
    if (key in value) {
      ctx.addIssue({ code: 'custom', path: [key], message: `secrets never go in the config file: set ${section === 'hubspot' ? 'HUBSPOT_ACCESS_TOKEN' : 'SF_ACCESS_TOKEN'} in the environment` });
    }
  }
};

export const hubspotConfigSchema = z
  .looseObject({
    basePath: z.url().optional(),
    objects: z.record(name, hubspotObjectSchema),
    rateLimit: rateLimitSchema.optional(),
  })
  .superRefine(noSecrets('hubspot'))
  .pipe(z.strictObject({ basePath: z.url().optional(), objects: z.record(name, hubspotObjectSchema), rateLimit: rateLimitSchema.optional() }));

export const salesforceConfigSchema = z
  .looseObject({
    instanceUrl: z.url().optional(),
    apiVersion: z.string().regex(/^\d+\.\d$/, 'must look like "60.0"').optional(),
    objects: z.record(name, salesforceObjectSchema),
    dailyLimitShare: z.number().gt(0).max(1).optional(),
    allowDuplicateSave: z.boolean().optional(),
  })
  .superRefine(noSecrets('salesforce'))
  .pipe(
    z.strictObject({
      instanceUrl: z.url().optional(),
      apiVersion: z.string().optional(),
      objects: z.record(name, salesforceObjectSchema),
      dailyLimitShare: z.number().optional(),
      allowDuplicateSave: z.boolean().optional(),
    }),
  );

/** A request budget shared by every process syncing into one CRM account (Redis or Postgres). */
export const sharedRateBudgetSchema = z.strictObject({
  url: z.string().regex(/^(rediss?|postgres(ql)?):\/\//, 'must be a redis://, rediss://, postgres:// or postgresql:// URL'),
  points: z.number().int().positive(),
  durationMs: z.number().int().min(1000, 'must be at least 1000'),
  /** Processes with the same prefix share one allowance: one per CRM account. */
  keyPrefix: z.string().min(1).optional(),
});

/** Where inside a shared database the ledger lives (several ledgers can share one server). */
export const ledgerOptionsSchema = z.strictObject({
  /** postgres: prefix of the ledger's table names. Default `crm_upsert_`. */
  tablePrefix: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,40}$/, 'must be a plain identifier prefix').optional(),
  /** postgres: schema holding the tables. Default `public`. */
  schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a plain identifier').optional(),
  /** redis: prefix of every key the ledger writes. Default `{crm-upsert}:`. */
  keyPrefix: z.string().min(1).optional(),
});

export const configSchema = z
  .strictObject({
    crm: z.enum(['hubspot', 'salesforce']),
    ledger: z.string().min(1).default('sqlite:.crm-upsert/ledger.db'),
    /** Table prefix, schema or key prefix of the ledger inside its store. */
    ledgerOptions: ledgerOptionsSchema.optional(),
    dedupeWindowMs: z.number().int().nonnegative().default(600_000),
    leaseMs: z.number().int().positive().optional(),
    /** Reject a keyless action without `occurredAt` (its key would come from the clock). Default true. */
    requireOccurredAt: z.boolean().default(true),
    /**
     * When activity (create-only) writes look their key up in the CRM before creating: `auto`
     * after an ambiguous failure, a takeover, or on a ledger that cannot vouch for its history;
     * `always` before every create; `after-failure` only after an ambiguous failure or takeover.
     * Default `auto`.
     */
    verifyCreates: z.enum(['auto', 'always', 'after-failure']).default('auto'),
    /** Replaces the adapter's in-process budget (hubspot.rateLimit) with one shared across processes. */
    sharedRateBudget: sharedRateBudgetSchema.optional(),
    hubspot: hubspotConfigSchema.optional(),
    salesforce: salesforceConfigSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (!c[c.crm]) ctx.addIssue({ code: 'custom', path: [c.crm], message: `is required when crm is "${c.crm}"` });
  });

export type Config = z.infer<typeof configSchema>;
