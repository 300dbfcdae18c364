import type { z } from 'zod';
import type { ValidationIssue } from './issues.js';
import { escapeLoneSurrogates } from './unicode.js';

/** A path segment as text; a lone surrogate (which has no UTF-8 form) is written as `\uD800`. */
export const pathSegment = (key: PropertyKey): string => escapeLoneSurrogates(String(key));

const joinPath = (path: readonly PropertyKey[]) => path.map(pathSegment).join('.');

/** zod issues as `{ path: 'fields.email', message }`, the form every error and report uses. */
export function formatZodIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue) => {
    const path = joinPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: path ? `${path}.${pathSegment(key)}` : pathSegment(key), message: 'is not a known property' }));
    }
    if (issue.code === 'invalid_key') {
      // A record key that failed its own schema: say why, at the key's path.
      return issue.issues.map((inner) => ({ path, message: `field name ${inner.message}` }));
    }
    return [{ path, message: issue.message }];
  });
}
