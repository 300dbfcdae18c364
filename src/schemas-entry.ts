/**
 * `crm-upsert-sync/schemas`: the zod schemas (schemas/, which import nothing from src/) and
 * `parseWith`, which throws this package's ValidationError.
 */
import type { z } from 'zod';
import { formatZodIssues } from '../schemas/parse.js';
import { ValidationError } from './errors.js';

export * from '../schemas/index.js';

/** Parse or throw a ValidationError naming each field and reason. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new ValidationError(formatZodIssues(parsed.error));
  return parsed.data;
}
