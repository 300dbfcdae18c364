/** `parseWith`: a zod parse that throws this package's ValidationError, naming each field and reason. */
import type { z } from 'zod';
import { formatZodIssues, needsOf } from '../schemas/parse.js';
import { ValidationError } from './errors.js';

export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new ValidationError(formatZodIssues(parsed.error, { input, needs: needsOf(schema) }));
  return parsed.data;
}
