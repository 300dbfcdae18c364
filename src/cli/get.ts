/**
 * `crm-upsert get <object> <id...> [--by FIELD] [--fields a,b] [--links] [--config PATH]`: read
 * records by external id (or by a `lookupBy` field) and print one JSON line per id asked, in order:
 * what a sync wrote, as the CRM holds it now. Writes nothing and opens no ledger.
 */
import { createSync } from '../engine/index.js';
import { CrmError, ValidationError } from '../errors.js';
import { memoryLedger } from '../ledger/memory.js';
import { authFix } from './auth-hint.js';
import { buildAdapter, engineSettings, loadConfig } from './config.js';
import { ExitCode, plainMessage, UsageError } from './exit.js';

export interface GetFlags {
  config: string;
  by?: string;
  fields?: string;
  links?: boolean;
}

/** Exit 0 when every id was found, 1 when some was not (its line says `"found": false`), 2 for a bad request or a refused token. */
export async function getCommand(object: string, ids: readonly string[], flags: GetFlags, out: (line: string) => void = (l) => process.stdout.write(l)): Promise<number> {
  const config = await loadConfig(flags.config);
  const adapter = await buildAdapter(config, process.env, { sharedBudget: false });
  // A read touches no ledger; the engine wants one, so it gets one that is never used.
  const sync = createSync({ adapter, ledger: memoryLedger(), ...engineSettings(config), telemetry: false });
  try {
    const fields = flags.fields?.split(',').map((f) => f.trim()).filter((f) => f.length > 0);
    const answers = await sync.read(object, ids, { ...(flags.by !== undefined ? { by: flags.by } : {}), ...(fields ? { fields } : {}), ...(flags.links ? { links: true } : {}) });
    for (const answer of answers) out(`${JSON.stringify(answer)}\n`);
    return answers.every((a) => a.found) ? ExitCode.ok : ExitCode.problems;
  } catch (err) {
    if (err instanceof ValidationError) throw new UsageError(`get: ${err.issues.map((i) => `${flagOf(i.path)}: ${i.message}`).join('; ')}`);
    if (err instanceof CrmError && err.kind === 'auth') throw new UsageError(authFix(config, err));
    if (err instanceof CrmError) {
      process.stderr.write(`crm-upsert: get: the read failed: ${plainMessage(err)}\n`);
      return ExitCode.problems;
    }
    throw err;
  } finally {
    await sync.close();
  }
}

const flagOf = (path: string) => (path === 'by' ? '--by' : path.startsWith('fields') ? '--fields' : path.startsWith('ids') ? `id ${Number(path.split('.')[1]) + 1}` : path);
