/** What validation reports about one field: the bottom of the error design (src/errors.ts wraps it in ValidationError). */
export interface ValidationIssue {
  /** Dotted path of the offending field, e.g. `fields.email` or `target.externalId`. */
  path: string;
  message: string;
}
