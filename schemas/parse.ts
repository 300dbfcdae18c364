import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../src/errors.js';

/** zod issues as `{ path: 'fields.email', message }`, the form every error and report uses. */
export function formatZodIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: path ? `${path}.${key}` : key, message: 'is not a known property' }));
    }
    return [{ path, message: issue.message }];
  });
}

/** Parse or throw a ValidationError naming each field and reason. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new ValidationError(formatZodIssues(parsed.error));
  return parsed.data;
}
