/**
 * `crm-upsert check-setup [--create]`: verify through the CRM API what the guarantees rely on,
 * and create what can be created.
 *
 * - Every id / key field exists, and record ids are unique (and, where the CRM can match them
 *   case-insensitively, case-sensitive: else `ACME-1` and `acme-1` match one record).
 * - Every allowlisted field (and every parent lookup field) exists and is writable.
 * - A refused token is an auth failure (exit 2), named by its environment variable.
 *
 * The checks themselves are the vendor's (`VendorCli.checkSetup`); this prints them. Where the
 * CRM cannot create a field through its API, the vendor's appendix says how.
 */
import { loadConfig, sectionOf } from './config.js';
import { ExitCode } from './exit.js';
import { vendorOf } from './vendors.js';
import type { SetupFinding } from '../../adapters/kit/vendor-cli.js';

export interface CheckSetupFlags {
  config: string;
  create?: boolean;
}

const MARK: Record<SetupFinding['status'], string> = { ok: 'ok     ', created: 'created', missing: 'MISSING', problem: 'PROBLEM' };

export async function checkSetupCommand(flags: CheckSetupFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  const { findings, appendix } = await vendorOf(config.crm).checkSetup(sectionOf(config), process.env, { create: Boolean(flags.create) });
  for (const f of findings) {
    const detail = f.detail && f.status !== 'created' ? `: ${f.detail}` : '';
    const fix = f.fix && f.status !== 'ok' && f.status !== 'created' ? `. Fix: ${f.fix}` : '';
    process.stdout.write(`${MARK[f.status]}  ${f.object} -> ${f.target} ${f.role}${detail}${fix}\n`);
  }
  if (appendix) process.stdout.write(`\n${appendix}\n`);
  const bad = findings.filter((f) => f.status === 'missing' || f.status === 'problem');
  if (bad.length > 0) {
    process.stderr.write(`crm-upsert: ${bad.length} of ${findings.length} checks failed: ${bad.map((f) => f.target).join(', ')}\n`);
    return ExitCode.problems;
  }
  process.stdout.write(`all ${findings.length} checks passed\n`);
  return ExitCode.ok;
}
