/**
 * crm-upsert.config.json: load, validate (errors name the field), and build the adapter and
 * ledger it describes. Secrets come only from the environment (HUBSPOT_ACCESS_TOKEN,
 * SF_ACCESS_TOKEN; SF_INSTANCE_URL when the config has no instanceUrl), never from the file or argv.
 */
import { readFile } from 'node:fs/promises';
import { configSchema, type Config } from '../../schemas/config.js';
import { formatZodIssues } from '../../schemas/parse.js';
import type { CrmAdapter } from '../adapter.js';
import type { RateBudget } from '../rate-budget.js';
import { ConfigError, registerSecret } from '../errors.js';
import { openLedger, type OpenLedgerOptions } from '../ledger/index.js';
import type { LedgerBackend } from '../ledger/types.js';
import { UsageError } from './exit.js';

export type { Config };

export const DEFAULT_CONFIG_PATH = 'crm-upsert.config.json';

/** Environment variables holding secrets; registered for redaction at startup. */
export const SECRET_ENV = ['HUBSPOT_ACCESS_TOKEN', 'SF_ACCESS_TOKEN'] as const;

export function registerEnvSecrets(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of SECRET_ENV) registerSecret(env[name]);
}

/** Validate a parsed config object; throws UsageError listing `path: reason` for every issue. */
export function parseConfig(raw: unknown, source = 'config'): Config {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error).map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    throw new UsageError(`invalid ${source}:\n${issues.join('\n')}`);
  }
  return parsed.data;
}

/** Read and validate the config file at `path`. */
export async function loadConfig(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new UsageError(`config file ${path} not found: create it (see examples/crm-upsert.config.json) or pass --config PATH`);
    }
    throw new UsageError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(raw, `config file ${path}`);
}

/**
 * The adapter the config describes, with tokens from `env`. The vendor SDK is imported here,
 * on demand, so commands that never talk to the CRM (schema, ledger) do not load it.
 * `sharedBudget: false` leaves the shared rate budget out (a dry run sends nothing and must
 * write nothing, not even the budget's table).
 */
export async function buildAdapter(config: Config, env: NodeJS.ProcessEnv = process.env, options: { sharedBudget?: boolean } = {}): Promise<CrmAdapter> {
  try {
    const shared = options.sharedBudget === false ? undefined : config.sharedRateBudget;
    if (shared) {
      // Every process pointing at the same store and prefix spends one account-wide allowance.
      const { sharedRateBudget } = await import('../rate-budget-shared.js');
      const budget = sharedRateBudget(/^rediss?:/.test(shared.url) ? { redis: shared.url } : { postgres: shared.url }, {
        points: shared.points, durationMs: shared.durationMs, keyPrefix: shared.keyPrefix ?? `crm-upsert:budget:${config.crm}`,
      });
      const adapter = await buildVendorAdapter(config, env, budget);
      return { ...adapter, close: async () => { await adapter.close?.(); await budget.close(); } };
    }
    return await buildVendorAdapter(config, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message.replace(/^\[crm-upsert\] /, ''));
    throw err;
  }
}

async function buildVendorAdapter(config: Config, env: NodeJS.ProcessEnv, rateBudget?: RateBudget): Promise<CrmAdapter> {
  if (config.crm === 'hubspot') {
    const hs = config.hubspot!;
    const accessToken = env.HUBSPOT_ACCESS_TOKEN;
    if (!accessToken) throw new UsageError('HUBSPOT_ACCESS_TOKEN is not set: export the private-app access token in the environment (it never goes in the config file)');
    registerSecret(accessToken);
    const { hubspotAdapter } = await import('../../adapters/hubspot/index.js');
    return hubspotAdapter({ accessToken, objects: hs.objects, ...(hs.basePath ? { basePath: hs.basePath } : {}), ...(hs.rateLimit ? { rateLimit: hs.rateLimit } : {}), ...(rateBudget ? { rateBudget } : {}) });
  }
  const sf = config.salesforce!;
  const accessToken = env.SF_ACCESS_TOKEN;
  const instanceUrl = sf.instanceUrl ?? env.SF_INSTANCE_URL;
  if (!accessToken) throw new UsageError('SF_ACCESS_TOKEN is not set: export the Salesforce access token in the environment (it never goes in the config file)');
  if (!instanceUrl) throw new UsageError('salesforce.instanceUrl is not set: put it in the config file or set SF_INSTANCE_URL');
  registerSecret(accessToken);
  const { salesforceAdapter } = await import('../../adapters/salesforce/index.js');
  return salesforceAdapter({
    accessToken,
    instanceUrl,
    objects: sf.objects,
    ...(sf.apiVersion ? { apiVersion: sf.apiVersion } : {}),
    ...(sf.dailyLimitShare !== undefined ? { dailyLimitShare: sf.dailyLimitShare } : {}),
    ...(sf.allowDuplicateSave !== undefined ? { allowDuplicateSave: sf.allowDuplicateSave } : {}),
    ...(rateBudget ? { rateBudget } : {}),
  });
}

/** The ledger URL in effect: --ledger wins over the config. */
export function ledgerUrl(config: Pick<Config, 'ledger'> | undefined, flag: string | undefined): string {
  return flag ?? config?.ledger ?? 'sqlite:.crm-upsert/ledger.db';
}

/** Open the ledger at `url` with the config's `ledgerOptions`; a bad URL is a usage error. */
export function openLedgerOrExit(url: string, options: OpenLedgerOptions = {}): LedgerBackend {
  try {
    return openLedger(url, options);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(`--ledger / config ledger: ${err.message.replace(/^\[crm-upsert\] /, '')}`);
    throw err;
  }
}
