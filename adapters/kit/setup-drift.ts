/**
 * The drift part of `check-setup`, shared by the vendors: compare the field definitions file with
 * a fresh pull (schemas/field-drift.ts) and turn each drift into a finding named like the others
 * (`deal -> deals.dealstage (field definitions)`).
 */
import { compareFieldDefinitions, type DriftOptions } from '../../schemas/field-drift.js';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { redact } from '../../src/errors.js';
import type { SetupFinding } from './vendor-cli.js';

export const DRIFT_ROLE = '(field definitions)';

/** One finding per drift; `target(object, field)` names the CRM field (`deals.dealstage`). */
export function driftFindings(
  file: FieldDefinitionsFile,
  pulled: FieldDefinitionsFile,
  options: DriftOptions & { target(object: string, field: string): string; fix: string },
): SetupFinding[] {
  return compareFieldDefinitions(file, pulled, options).map((d) => ({
    object: d.object,
    target: options.target(d.object, d.field),
    role: DRIFT_ROLE,
    status: d.severity,
    detail: d.detail,
    fix: options.fix,
  }));
}

/** The finding when the pull itself failed (a pipelines read refused or failing, an answer that is not JSON). */
export function driftFailed(err: unknown): SetupFinding {
  const status = (err as { status?: unknown }).status;
  const why = typeof status === 'number' ? `the CRM answered HTTP ${status}` : redact((err as Error).message).replace(/^\[crm-upsert\]\s*(\[\w+\]\s*)?/, '');
  return {
    object: 'fieldDefinitions', target: 'the CRM\'s field definitions', role: DRIFT_ROLE, status: 'problem',
    detail: `reading them to compare with the file failed: ${why}`,
    fix: 'run check-setup again; if it keeps failing, check that the token may read the objects (and, on HubSpot, their pipelines)',
  };
}
