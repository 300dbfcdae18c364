/**
 * crm-upsert.config.json: the core settings, and the vendor sections composed onto them. Each
 * vendor's section and object map is defined in its own folder (adapters/<vendor>/<vendor>-config.ts,
 * zod only); `configSchema` (adapters/config-schema.ts) composes the built-in CRMs' sections, and
 * the CLI composes its own from its vendor registry with `composeConfigSchema`. Secrets are never part of it: tokens come from
 * the environment (HUBSPOT_ACCESS_TOKEN, SF_INSTANCE_URL, SF_ACCESS_TOKEN).
 */
import { z } from 'zod';
import { queueConfigSchema } from './queue.js';
import { webhooksConfigSchema } from './webhooks.js';

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

/** How the engine retries a CRM call that did not answer (5xx, resets, lost responses) and waits out rate limits. */
export const retryConfigSchema = z
  .strictObject({
    /** Retries after the first attempt for transient failures. Default 6. */
    retries: z.number().int().min(0).max(50).optional(),
    /** First backoff, ms. Default 250. */
    minTimeoutMs: z.number().int().nonnegative().optional(),
    /** Largest backoff, ms. Default 15,000. */
    maxTimeoutMs: z.number().int().nonnegative().optional(),
    /** Longest Retry-After honoured, ms; a longer one fails the attempt for a later run. Default 120,000. */
    maxRetryAfterMs: z.number().int().nonnegative().optional(),
    /** Rate-limit waits allowed in one call before giving up. Default 20. */
    maxRateLimitWaits: z.number().int().nonnegative().optional(),
  })
  .refine((r) => r.minTimeoutMs === undefined || r.maxTimeoutMs === undefined || r.minTimeoutMs <= r.maxTimeoutMs, {
    path: ['minTimeoutMs'],
    message: 'must not be larger than maxTimeoutMs',
  });

/** The settings every CRM shares (everything but `crm` and the vendor sections). */
export const coreConfigShape = {
  ledger: z.string().min(1).default('sqlite:.crm-upsert/ledger.db'),
  /** Table prefix, schema or key prefix of the ledger inside its store. */
  ledgerOptions: ledgerOptionsSchema.optional(),
  /**
   * crm-upsert.fields.json (written by `crm-upsert schema pull`), relative to the working
   * directory: values are checked and normalized against it before anything is claimed.
   */
  fieldDefinitions: z.string().min(1).optional(),
  /** With fieldDefinitions: bring values to the CRM's form where that cannot change their meaning. Default true. */
  normalize: z.boolean().optional(),
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
  /**
   * How writes to one record are ordered over time. `event` (default): a field is not written by an
   * event older than the one that last set it through this ledger (the older action is
   * `superseded`). `arrival`: the last write to arrive wins, as the CRM itself does.
   */
  order: z.enum(['event', 'arrival']).default('event'),
  /** The engine's retries of CRM calls; each field defaults as in `createSync`. */
  retry: retryConfigSchema.optional(),
  /** Replaces the adapter's in-process budget (hubspot.rateLimit) with one shared across processes. */
  sharedRateBudget: sharedRateBudgetSchema.optional(),
  /** The BullMQ queue of `serve`, `worker` and `sync --queue`. */
  queue: queueConfigSchema.optional(),
  /** The webhook sources of `serve` and their handlers. */
  webhooks: webhooksConfigSchema.optional(),
};

export type CoreConfig = z.infer<z.ZodObject<typeof coreConfigShape>>;

type SectionsOf<S extends Record<string, z.ZodType>> = { [K in keyof S]: z.ZodOptional<S[K]> };

/**
 * The config for these CRMs: `crm` names one of `sections`' keys, each section is optional
 * except the one `crm` names, and every section present is validated.
 */
export function composeConfigSchema<const S extends Record<string, z.ZodType>>(sections: S) {
  const names = Object.keys(sections) as [Extract<keyof S, string>, ...Extract<keyof S, string>[]];
  const optional = Object.fromEntries(Object.entries(sections).map(([k, v]) => [k, v.optional()])) as SectionsOf<S>;
  return z
    .strictObject({ crm: z.enum(names), ...coreConfigShape, ...optional })
    .superRefine((value: unknown, ctx) => {
      const c = value as Record<string, unknown> & { crm: string };
      if (!c[c.crm]) ctx.addIssue({ code: 'custom', path: [c.crm], message: `is required when crm is "${c.crm}"` });
    });
}
