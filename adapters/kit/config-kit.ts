/**
 * Building blocks of a vendor's section in crm-upsert.config.json (zod only: schemas/config.ts
 * composes the sections, so nothing here may import src/ or a vendor SDK).
 */
import { z } from 'zod';
import { inlineFieldDefinitionSchema } from '../../schemas/field-definitions.js';

/** A non-empty name: an object, property or field. */
export const nameSchema = z.string().min(1, 'must not be empty');

/** A field allowlist: at least one field. */
export const fieldListSchema = z.array(nameSchema).min(1, 'must list at least one field');

/**
 * Field definitions written by hand in an object's config (`definitions`): for fields the CRM
 * types loosely and the user wants to narrow, or for tests. Each names an allowlisted field.
 */
export const inlineDefinitionsSchema = z.array(inlineFieldDefinitionSchema);

/**
 * What a record upsert does when the record this ledger wrote before is gone from the CRM (deleted
 * or merged away since): `create` writes it again and reports it `recreated`; `skip` leaves it gone
 * and fails the action with `RECORD_GONE`, naming the id it had. Records never written through the
 * ledger are upserted either way. Default `create`.
 */
export const onMissingSchema = z.enum(['create', 'skip']);

/** An in-process request budget: `points` requests per `durationMs`. */
export const rateLimitSchema = z.strictObject({
  points: z.number().int().positive(),
  durationMs: z.number().int().positive(),
});

const SECRET_KEYS = ['accessToken', 'token', 'password', 'clientSecret', 'refreshToken'];

/**
 * A vendor section: a secret in it is refused first, with the environment variable that holds
 * the token instead (`tokenEnv`); then the section is checked strictly (unknown keys refused).
 */
export function configSection<T extends z.ZodRawShape>(tokenEnv: string, shape: T): Section<T> {
  // Typed loosely here: zod cannot relate a generic shape's loose output to its strict input.
  const strict: z.ZodType<unknown, Record<string, unknown>> = z.strictObject(shape);
  const loose: z.ZodType<Record<string, unknown>> = z.looseObject(shape);
  const section = loose
    .superRefine((value: Record<string, unknown>, ctx) => {
      for (const key of SECRET_KEYS) {
        if (key in value) ctx.addIssue({ code: 'custom', path: [key], message: `secrets never go in the config file: set ${tokenEnv} in the environment` });
      }
    })
    .pipe(strict);
  return section as unknown as Section<T>;
}

/** What `configSection` parses to: the strict object of `T`. */
export type Section<T extends z.ZodRawShape> = z.ZodType<z.output<z.ZodObject<T, z.core.$strict>>, z.input<z.ZodObject<T, z.core.$strict>>>;
