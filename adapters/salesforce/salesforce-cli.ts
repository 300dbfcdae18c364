/**
 * What the `crm-upsert` CLI needs from Salesforce (the VendorCli contract). Loading this file
 * loads neither jsforce nor the fake: each is imported when first used. The SDK is an optional
 * peer: building an adapter without it fails with a ConfigError naming it (exit 2).
 */
import { ConfigError, registerSecret } from '../../src/errors.js';
import { inventoryOf, type InventoryTable, type VendorCli } from '../kit/vendor-cli.js';
import { SALESFORCE_INSTANCE_ENV, SALESFORCE_TOKEN_ENV, salesforceConfigSchema, type SalesforceConfig } from './salesforce-config.js';
import { activityValues, collectionRecord, collectionUrl, recordValues } from './salesforce-requests.js';
import { checkSalesforceSetup } from './salesforce-setup.js';

const DEFAULT_API_VERSION = '60.0';

/** The object permissions the configured objects need. */
export function salesforcePermissions(sf: SalesforceConfig): string[] {
  const perms: string[] = [];
  for (const spec of Object.values(sf.objects)) {
    perms.push(`Read, Create and Edit on ${spec.sobject} (and Edit on its field ${spec.externalIdField})`);
    if (spec.kind === 'activity') for (const parent of Object.keys(spec.parents)) {
      const p = sf.objects[parent];
      if (p) perms.push(`Read on ${p.sobject}`);
    }
  }
  return [...new Set(perms)];
}

export const salesforceCli: VendorCli<SalesforceConfig> = {
  name: 'salesforce',
  label: 'Salesforce',
  configSchema: salesforceConfigSchema,
  tokenEnv: SALESFORCE_TOKEN_ENV,
  secretEnv: [SALESFORCE_TOKEN_ENV],
  dryRunEnv: { [SALESFORCE_TOKEN_ENV]: 'dry-run-sends-nothing', [SALESFORCE_INSTANCE_ENV]: 'https://dry-run.invalid' },

  async buildAdapter(sf, env, { rateBudget }) {
    // First: without jsforce (an optional peer) this throws the ConfigError naming what to install.
    const { salesforceAdapter } = await import('./salesforce-adapter.js');
    const accessToken = env[SALESFORCE_TOKEN_ENV];
    const instanceUrl = sf.instanceUrl ?? env[SALESFORCE_INSTANCE_ENV];
    if (!accessToken) throw new ConfigError(`${SALESFORCE_TOKEN_ENV} is not set: export the Salesforce access token in the environment (it never goes in the config file)`);
    if (!instanceUrl) throw new ConfigError(`salesforce.instanceUrl is not set: put it in the config file or set ${SALESFORCE_INSTANCE_ENV}`);
    registerSecret(accessToken);
    return salesforceAdapter({
      accessToken,
      instanceUrl,
      objects: sf.objects,
      ...(sf.apiVersion ? { apiVersion: sf.apiVersion } : {}),
      ...(sf.dailyLimitShare !== undefined ? { dailyLimitShare: sf.dailyLimitShare } : {}),
      ...(sf.allowDuplicateSave !== undefined ? { allowDuplicateSave: sf.allowDuplicateSave } : {}),
      ...(rateBudget ? { rateBudget } : {}),
    });
  },

  previewRequest(sf, action, key) {
    const spec = sf.objects[action.object]!;
    const request = `PATCH ${collectionUrl(sf.apiVersion ?? DEFAULT_API_VERSION, spec)}`;
    if (spec.kind === 'record') return { request, body: collectionRecord(spec.sobject, recordValues(spec, { externalId: action.externalId!, fields: action.fields })) };
    const target = action.target!;
    const parent = sf.objects[target.object];
    const parentId = parent?.kind === 'record' ? `<Id of ${parent.sobject} where ${parent.externalIdField}=${target.externalId}>` : '<parent Id>';
    return { request, body: collectionRecord(spec.sobject, activityValues(spec, { key, fields: action.fields, parent: target }, parentId)) };
  },

  checkSetup: (sf, env, { create }) => checkSalesforceSetup(sf, env, create),

  auth: {
    tokenRefused: (error) => error.status === 401 || /^INVALID_(SESSION_ID|AUTH_HEADER)$/.test(error.vendorCode ?? ''),
    forbidden: (sf) => `the user needs "API Enabled" and the object permissions ${salesforcePermissions(sf).join('; ')}`,
  },

  demo: {
    config: 'crm-upsert.salesforce.config.json',
    actions: 'actions.salesforce.jsonl',
    async start(sf) {
      const { fakeSalesforce } = await import('./salesforce-fake.js');
      const fake = fakeSalesforce();
      const tables = new Map<string, InventoryTable>();
      for (const spec of Object.values(sf.objects)) {
        if (!tables.has(spec.sobject)) tables.set(spec.sobject, { type: spec.sobject, rows: () => fake.records(spec.sobject), idOf: (r) => (r as Record<string, unknown>)[spec.externalIdField] });
      }
      const front = await fake.open('loopback');
      return { url: front.url, requests: () => fake.count(), inventory: () => inventoryOf(tables.values()), close: front.close };
    },
    at: (sf, url) => ({ ...sf, instanceUrl: url }),
    env: (url, token) => ({ [SALESFORCE_TOKEN_ENV]: token, [SALESFORCE_INSTANCE_ENV]: url }),
  },
};
