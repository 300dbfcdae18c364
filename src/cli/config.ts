/**
 * crm-upsert.config.json: load, validate (errors name the field), and build the adapter and
 * ledger it describes. The vendor sections and their environment variables come from the vendor
 * registry; secrets come only from the environment, never from the file or argv.
 */
import { loadFieldDefinitions } from '../field-definitions.js';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { composeConfigSchema, type CoreConfig } from '../../schemas/config.js';
import { formatZodIssues } from '../../schemas/parse.js';
import type { BulkJobProgress } from '../../adapters/kit/vendor-cli.js';
import type { CrmAdapter } from '../adapter.js';
import type { SyncOptions } from '../engine/index.js';
import type { RateBudget } from '../rate-budget.js';
import { ConfigError, registerSecret } from '../errors.js';
import { openLedger, type OpenLedgerOptions } from '../ledger/index.js';
import type { LedgerBackend } from '../ledger/types.js';
import { plainMessage, UsageError } from './exit.js';
import { VENDORS, vendorOf, type VendorName } from './vendors.js';

/** A parsed config: the core settings, `crm`, and the vendor sections present (the one `crm` names is). */
export type Config = CoreConfig & { crm: VendorName } & { [V in VendorName]?: unknown };

/** The config every registered CRM may appear in. */
export const configSchema = composeConfigSchema(Object.fromEntries(Object.entries(VENDORS).map(([name, v]) => [name, v.configSchema])));

/** The section of the CRM the config names. */
export const sectionOf = (config: Config): unknown => config[config.crm];

export const DEFAULT_CONFIG_PATH = 'crm-upsert.config.json';

/** Environment variables holding secrets; registered for redaction at startup. */
export const SECRET_ENV: readonly string[] = Object.values(VENDORS).flatMap((v) => v.secretEnv);

export function registerEnvSecrets(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of SECRET_ENV) registerSecret(env[name]);
}

/** Validate a parsed config object; throws UsageError listing `path: reason` for every issue. */
export function parseConfig(raw: unknown, source = 'config'): Config {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error, { input: raw }).map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    throw new UsageError(`invalid ${source}:\n${issues.join('\n')}`);
  }
  return parsed.data as unknown as Config;
}

/** Read and validate the config file at `path`. */
export async function loadConfig(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new UsageError(`config file ${path} not found: run \`crm-upsert init\` to write a starter one here, or pass --config PATH`);
    }
    throw new UsageError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const config = parseConfig(raw, `config file ${path}`);
  configDirs.set(config, dirname(path));
  return config;
}

/** The directory of the file each loaded config came from: its default ledger lives there. */
const configDirs = new WeakMap<object, string>();

/** The ledger file a config without `ledger` uses. */
export const DEFAULT_LEDGER_FILE = '.crm-upsert/ledger.db';

export interface BuildAdapterOptions {
  /** False: no shared rate budget (a dry run sends nothing and must write nothing, not even its table). */
  sharedBudget?: boolean;
  /** Called as each job of the adapter's bulk lane moves (the CLI's progress line). */
  onBulkProgress?: (progress: BulkJobProgress) => void;
}

/**
 * The adapter the config describes, with tokens from `env`. The vendor SDK is imported here,
 * on demand, so commands that never talk to the CRM (schema, ledger) do not load it.
 */
export async function buildAdapter(config: Config, env: NodeJS.ProcessEnv = process.env, options: BuildAdapterOptions = {}): Promise<CrmAdapter> {
  try {
    const shared = options.sharedBudget === false ? undefined : config.sharedRateBudget;
    if (shared) {
      // Every process pointing at the same store and prefix spends one account-wide allowance.
      const { sharedRateBudget } = await import('../rate-budget-shared.js');
      const budget = sharedRateBudget(/^rediss?:/.test(shared.url) ? { redis: shared.url } : { postgres: shared.url }, {
        points: shared.points, durationMs: shared.durationMs, keyPrefix: shared.keyPrefix ?? `crm-upsert:budget:${config.crm}`,
      });
      const adapter = await buildVendorAdapter(config, env, options.onBulkProgress, budget);
      return { ...adapter, close: async () => { await adapter.close?.(); await budget.close(); } };
    }
    return await buildVendorAdapter(config, env, options.onBulkProgress);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(plainMessage(err));
    throw err;
  }
}

function buildVendorAdapter(config: Config, env: NodeJS.ProcessEnv, onBulkProgress?: (progress: BulkJobProgress) => void, rateBudget?: RateBudget): Promise<CrmAdapter> {
  const fieldDefinitions = config.fieldDefinitions === undefined ? undefined : loadFieldDefinitions(config.fieldDefinitions, config.crm);
  return vendorOf(config.crm).buildAdapter(sectionOf(config), env, { ...(rateBudget ? { rateBudget } : {}), ...(fieldDefinitions ? { fieldDefinitions } : {}), ...(onBulkProgress ? { onBulkProgress } : {}) });
}

/**
 * The ledger URL in effect: --ledger wins over the config. Without either, a SQLite file next to
 * the config file (`.crm-upsert/ledger.db` in its directory). A relative `sqlite:` path in the
 * config file is relative to that file too, wherever the command runs from: a run from another
 * directory must find the ledger the earlier runs wrote. A `--ledger` path is the caller's own,
 * relative to the working directory.
 */
export function ledgerUrl(config: Pick<Config, 'ledger'> | undefined, flag: string | undefined): string {
  if (flag !== undefined) return flag;
  const dir = (config && configDirs.get(config)) ?? '.';
  const url = config?.ledger ?? `sqlite:${DEFAULT_LEDGER_FILE}`;
  const path = /^sqlite:/i.test(url) ? url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : undefined;
  if (path === undefined || path === '' || path === ':memory:' || isAbsolute(path)) return url;
  return `sqlite:${join(dir, path)}`;
}

/** The CLI's claim lease: short, so lines in progress in a killed run are retried a minute later. */
export const DEFAULT_CLI_LEASE_MS = 60_000;

/** The engine settings a config carries: everything `createSync` takes besides the adapter and the ledger. */
export function engineSettings(config: Config): Required<Pick<SyncOptions, 'dedupeWindowMs' | 'leaseMs' | 'requireOccurredAt' | 'verifyCreates' | 'order'>> & Pick<SyncOptions, 'retry' | 'normalize'> {
  return {
    dedupeWindowMs: config.dedupeWindowMs,
    leaseMs: config.leaseMs ?? DEFAULT_CLI_LEASE_MS,
    requireOccurredAt: config.requireOccurredAt,
    verifyCreates: config.verifyCreates,
    order: config.order,
    ...(config.retry ? { retry: config.retry } : {}),
    ...(config.normalize !== undefined ? { normalize: config.normalize } : {}),
  };
}

/** The config's ledger (`--ledger` wins), opened with its `ledgerOptions`. */
export function openConfigLedger(config: Config, flag: string | undefined): LedgerBackend {
  return openLedgerOrExit(ledgerUrl(config, flag), config.ledgerOptions ?? {});
}

/** Open the ledger at `url` with the config's `ledgerOptions`; a bad URL is a usage error. */
export function openLedgerOrExit(url: string, options: OpenLedgerOptions = {}): LedgerBackend {
  try {
    return openLedger(url, options);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(`--ledger / config ledger: ${plainMessage(err)}`);
    throw err;
  }
}
