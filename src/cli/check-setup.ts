/**
 * `crm-upsert check-setup [--create]`: verify through the CRM API what the guarantees rely on,
 * and create what can be created.
 *
 * - Every id / key field exists, and record ids are unique (and, where the CRM can match them
 *   case-insensitively, case-sensitive: else `ACME-1` and `acme-1` match one record).
 * - Every allowlisted field (and every parent lookup field) exists and is writable.
 * - Every `lookupBy` field exists and is unique; every `readFields` field exists.
 * - With a `fieldDefinitions` file: what drifted between it and the CRM's definitions now.
 * - A refused token is an auth failure (exit 2), named by its environment variable.
 *
 * The checks themselves are the vendor's (`VendorCli.checkSetup`); this prints them. Where the
 * CRM cannot create a field through its API, the vendor's appendix says how.
 */
import { loadFieldDefinitions } from '../field-definitions.js';
import { ConfigError } from '../errors.js';
import { loadConfig, sectionOf, type Config } from './config.js';
import { ExitCode, plainMessage } from './exit.js';
import { DEFAULT_FIELDS_FILE } from './schema.js';
import { vendorOf } from './vendors.js';
import type { SetupFinding, SetupReport } from '../../adapters/kit/vendor-cli.js';

export interface CheckSetupFlags {
  config: string;
  create?: boolean;
}

const MARK: Record<SetupFinding['status'], string> = { ok: 'ok     ', created: 'created', missing: 'MISSING', problem: 'PROBLEM', warning: 'WARNING', info: 'info   ' };

export async function checkSetupCommand(flags: CheckSetupFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  const report = await vendorOf(config.crm).checkSetup(sectionOf(config), process.env, { create: Boolean(flags.create) });
  const findings = [...report.findings, ...(await driftOf(config, report))];
  for (const f of findings) {
    const detail = f.detail && f.status !== 'created' ? `: ${f.detail}` : '';
    const fix = f.fix && f.status !== 'ok' && f.status !== 'created' && f.status !== 'info' ? `. Fix: ${f.fix}` : '';
    process.stdout.write(`${MARK[f.status]}  ${f.object} -> ${f.target} ${f.role}${detail}${fix}\n`);
  }
  if (report.appendix) process.stdout.write(`\n${report.appendix}\n`);
  const checks = findings.filter((f) => f.status !== 'info');
  const bad = checks.filter((f) => f.status === 'missing' || f.status === 'problem');
  const warnings = checks.filter((f) => f.status === 'warning').length;
  const warned = warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : '';
  if (bad.length > 0) {
    process.stderr.write(`crm-upsert: ${bad.length} of ${checks.length} checks failed${warned}: ${[...new Set(bad.map((f) => f.target))].join(', ')}\n`);
    return ExitCode.problems;
  }
  process.stdout.write(`all ${checks.length} checks passed${warned}\n`);
  return ExitCode.ok;
}

/**
 * The drift findings of the config's field definitions file: an info line when there is none, a
 * problem when it cannot be loaded, one `ok` when nothing drifted.
 */
async function driftOf(config: Config, report: SetupReport): Promise<SetupFinding[]> {
  const at = (target: string, status: SetupFinding['status'], detail: string, fix?: string): SetupFinding =>
    ({ object: 'fieldDefinitions', target, role: '(field definitions)', status, detail, ...(fix ? { fix } : {}) });
  if (config.fieldDefinitions === undefined) {
    return [at('(none)', 'info', 'no field definitions file in the config, so no drift check (crm-upsert schema pull writes one; "fieldDefinitions" names it)')];
  }
  const path = config.fieldDefinitions;
  const fix = `run \`crm-upsert schema pull${path === DEFAULT_FIELDS_FILE ? '' : ` --out ${path}`}\` to refresh the file, then review and commit it`;
  if (!report.fieldDrift) return [at(path, 'info', `${vendorOf(config.crm).label} definitions cannot be read, so no drift check`)];
  let file;
  try {
    file = loadFieldDefinitions(path, config.crm);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return [at(path, 'problem', plainMessage(err).replace(`field definitions ${path}: `, ''), fix)];
  }
  const drift = await report.fieldDrift(file, { fix });
  if (drift.length > 0) return drift;
  return [at(path, 'ok', `pulled ${file.pulledAt}; every configured object's allowlisted fields match ${vendorOf(config.crm).label} now`)];
}
