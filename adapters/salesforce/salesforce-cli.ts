/**
 * What the `crm-upsert` CLI needs from Salesforce (the VendorCli contract). Loading this file
 * loads neither jsforce nor the fake: each is imported when first used. The SDK is an optional
 * peer: building an adapter without it fails with a ConfigError naming it (exit 2).
 */
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { ConfigError, registerSecret } from '../../src/errors.js';
import type { Fields } from '../../src/adapter.js';
import { inventoryOf, type BulkJobProgress, type InventoryTable, type VendorCli } from '../kit/vendor-cli.js';
import { SALESFORCE_INSTANCE_ENV, SALESFORCE_TOKEN_ENV, salesforceConfigSchema, type SalesforceConfig } from './salesforce-config.js';
import { activityLookups, activityValues, collectionRecord, collectionUrl, linkTargets, recordValues } from './salesforce-requests.js';
import type { RateBudget } from '../../src/rate-budget.js';
import type { SalesforceAdapter } from './salesforce-adapter.js';
import { checkSalesforceSetup } from './salesforce-setup.js';

const DEFAULT_API_VERSION = '60.0';

/** The object permissions the configured objects need. */
export function salesforcePermissions(sf: SalesforceConfig): string[] {
  const perms: string[] = [];
  for (const spec of Object.values(sf.objects)) {
    perms.push(`Read, Create and Edit on ${spec.sobject} (and Edit on its field ${spec.externalIdField})`);
    // Parents and linked records are looked up (by query or by reference) as this user.
    const lookups = spec.kind === 'activity' ? spec.parents : (spec.links ?? {});
    for (const [to, field] of Object.entries(lookups)) {
      const p = sf.objects[to];
      if (!p) continue;
      perms.push(`Read on ${p.sobject}`);
      if (spec.kind === 'record') perms.push(`Edit on ${spec.sobject}.${field}`);
    }
  }
  return [...new Set(perms)];
}

/** `crm-upsert init`: contacts keyed by AI_External_Id__c, notes and tasks as Tasks keyed by AI_Idempotency_Key__c. */
const STARTER_SECTION: SalesforceConfig = {
  apiVersion: DEFAULT_API_VERSION,
  objects: {
    contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName', 'Phone'] },
    note: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'ActivityDate', 'Status'], parents: { contact: 'WhoId' } },
    task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'ActivityDate', 'Status', 'Priority'], parents: { contact: 'WhoId' } },
  },
};

const ANA = { source: 'zendesk', eventId: 'zd:ticket.created:48211', op: 'upsert', object: 'contact', externalId: 'zd-1001', fields: { Email: 'ana.ruiz@northwind.example', FirstName: 'Ana', LastName: 'Ruiz' } };
const STARTER_ACTIONS = [
  ANA,
  { source: 'zendesk', eventId: 'zd:ticket.created:48212', op: 'upsert', object: 'contact', externalId: 'zd-1002', fields: { Email: 'ben.okafor@contoso.example', FirstName: 'Ben', LastName: 'Okafor' } },
  { source: 'gong', eventId: 'gong:call.completed:9f31', op: 'upsert', object: 'contact', externalId: 'gong-7731', fields: { Email: 'chloe.martin@fabrikam.example', FirstName: 'Chloé', LastName: 'Martin' } },
  { source: 'zendesk', eventId: 'zd:ticket.solved:48211', occurredAt: '2026-11-28T09:14:00Z', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1001' }, fields: { Subject: 'AI note', Description: 'AI summary: Ana could not export March invoices to CSV; a stale browser cache. Resolved after a hard refresh.', ActivityDate: '2026-11-28', Status: 'Completed' } },
  { source: 'gong', occurredAt: '2026-11-28T15:30:00Z', op: 'create', object: 'task', target: { object: 'contact', externalId: 'gong-7731' }, fields: { Subject: 'Send Chloé the onboarding plan', Description: 'AI follow-up from the call: she asked for a rollout plan for 40 seats.', ActivityDate: '2026-11-29', Status: 'Not Started', Priority: 'High' } },
  // The first webhook, delivered again: a replay, not a second contact.
  ANA,
];

/**
 * `crm-upsert init --template sales`: Account, Contact and Opportunity keyed by AI_External_Id__c
 * (Contact and Opportunity linked to their Account by AccountId), notes and tasks as Tasks whose
 * Who is a contact and What an account or opportunity.
 */
const SALES_SECTION: SalesforceConfig = {
  apiVersion: DEFAULT_API_VERSION,
  objects: {
    company: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
    contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName', 'Phone'], links: { company: 'AccountId' } },
    deal: { kind: 'record', sobject: 'Opportunity', externalIdField: 'AI_External_Id__c', fields: ['Name', 'StageName', 'CloseDate', 'Amount'], links: { company: 'AccountId' } },
    note: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'ActivityDate', 'Status'], parents: { contact: 'WhoId', company: 'WhatId', deal: 'WhatId' } },
    task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'ActivityDate', 'Status', 'Priority'], parents: { contact: 'WhoId', company: 'WhatId', deal: 'WhatId' } },
  },
};

/** One sales call (Gong) as the graph a model makes of it, then its note delivered again. */
const CALL = { source: 'gong', eventId: 'gong:call.completed:a7c2', occurredAt: '2026-12-01T16:05:00Z' };
const CALL_NOTE = {
  ...CALL, op: 'create', object: 'note', target: { object: 'contact', externalId: 'gong-7731' },
  fields: { Subject: 'Call: Fabrikam, 40 seats', Description: 'AI summary: Fabrikam wants 40 seats from January; budget approved, security review pending.', ActivityDate: '2026-12-01', Status: 'Completed' },
  links: [{ object: 'deal', externalId: 'gong-deal-a7c2' }],
};
const SALES_ACTIONS = [
  { ...CALL, op: 'upsert', object: 'company', externalId: 'fabrikam.example', fields: { Name: 'Fabrikam' } },
  { ...CALL, op: 'upsert', object: 'contact', externalId: 'gong-7731', fields: { Email: 'chloe.martin@fabrikam.example', FirstName: 'Chloé', LastName: 'Martin' }, links: [{ object: 'company', externalId: 'fabrikam.example' }] },
  { ...CALL, op: 'upsert', object: 'deal', externalId: 'gong-deal-a7c2', fields: { Name: 'Fabrikam: 40 seats', StageName: 'Prospecting', CloseDate: '2027-01-15', Amount: 48000 }, links: [{ object: 'company', externalId: 'fabrikam.example' }] },
  // A Task has one Who and one What: the call on the contact and the deal (whose Account is the company).
  CALL_NOTE,
  { ...CALL, op: 'create', object: 'task', target: { object: 'deal', externalId: 'gong-deal-a7c2' }, fields: { Subject: 'Send Fabrikam the security questionnaire', ActivityDate: '2026-12-03', Status: 'Not Started', Priority: 'High' } },
  // The call's webhook, delivered again, the model's summary worded differently: a replay.
  { ...CALL_NOTE, fields: { ...CALL_NOTE.fields, Description: 'AI summary: 40 seats for Fabrikam in January; security review still open.' } },
];

/** The adapter a section describes, credentials from `env` (the token never comes from the file). */
async function adapterFrom(sf: SalesforceConfig, env: NodeJS.ProcessEnv, rateBudget?: RateBudget, fieldDefinitions?: FieldDefinitionsFile, onProgress?: (progress: BulkJobProgress) => void): Promise<SalesforceAdapter> {
  // First: without jsforce (an optional peer) this throws the ConfigError naming what to install.
  const { salesforceAdapter } = await import('./salesforce-adapter.js');
  const accessToken = env[SALESFORCE_TOKEN_ENV];
  const instanceUrl = sf.instanceUrl ?? env[SALESFORCE_INSTANCE_ENV];
  if (!accessToken) throw new ConfigError(`${SALESFORCE_TOKEN_ENV} is not set: export the Salesforce access token in the environment (it never goes in the config file)`);
  if (!instanceUrl) throw new ConfigError(`salesforce.instanceUrl is not set: put it in the config file or set ${SALESFORCE_INSTANCE_ENV}`);
  registerSecret(accessToken);
  const bulk = { ...sf.bulk, ...(onProgress ? { onProgress } : {}) };
  return salesforceAdapter({
    accessToken,
    instanceUrl,
    objects: sf.objects,
    ...(fieldDefinitions ? { fieldDefinitions } : {}),
    ...(sf.apiVersion ? { apiVersion: sf.apiVersion } : {}),
    ...(sf.dailyLimitShare !== undefined ? { dailyLimitShare: sf.dailyLimitShare } : {}),
    ...(sf.allowDuplicateSave !== undefined ? { allowDuplicateSave: sf.allowDuplicateSave } : {}),
    ...(rateBudget ? { rateBudget } : {}),
    ...(Object.keys(bulk).length > 0 ? { bulk } : {}),
  });
}

export const salesforceCli: VendorCli<SalesforceConfig> = {
  name: 'salesforce',
  label: 'Salesforce',
  configSchema: salesforceConfigSchema,
  tokenEnv: SALESFORCE_TOKEN_ENV,
  secretEnv: [SALESFORCE_TOKEN_ENV],
  dryRunEnv: { [SALESFORCE_TOKEN_ENV]: 'dry-run-sends-nothing', [SALESFORCE_INSTANCE_ENV]: 'https://dry-run.invalid' },

  buildAdapter: (sf, env, { rateBudget, fieldDefinitions, onBulkProgress }) => adapterFrom(sf, env, rateBudget, fieldDefinitions, onBulkProgress),
  bulkJob: 'a Bulk API 2.0 job (create, upload, close, polls, results)',

  async pullFields(sf, env, { now }) {
    const adapter = await adapterFrom(sf, env);
    const { pullSalesforceFields } = await import('./salesforce-fields.js');
    return pullSalesforceFields(sf, (sobject) => adapter.describeSObject(sobject), { now, apiVersion: sf.apiVersion ?? DEFAULT_API_VERSION });
  },

  previewRequest(sf, action, key) {
    const spec = sf.objects[action.object]!;
    const request = `PATCH ${collectionUrl(sf.apiVersion ?? DEFAULT_API_VERSION, spec)}`;
    if (spec.kind === 'record') {
      return { request, body: collectionRecord(spec.sobject, recordValues(spec, { externalId: action.externalId!, fields: action.fields as Fields, links: action.links }, linkTargets(sf.objects))) };
    }
    const lookups: Record<string, string> = {};
    for (const [field, ref] of activityLookups(spec, { parent: action.target!, links: action.links })) {
      const parent = sf.objects[ref.object];
      lookups[field] = parent?.kind === 'record' ? `<Id of ${parent.sobject} where ${parent.externalIdField}=${ref.externalId}>` : '<parent Id>';
    }
    return { request, body: collectionRecord(spec.sobject, activityValues(spec, { key, fields: action.fields as Fields }, lookups)) };
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
      const { fakeSalesforce } = await import('./fake/salesforce-fake.js');
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

  starter: {
    section: STARTER_SECTION,
    actions: STARTER_ACTIONS,
    realCrm: `export ${SALESFORCE_INSTANCE_ENV}=https://<your org>.my.salesforce.com and ${SALESFORCE_TOKEN_ENV}=<access token> (or put "instanceUrl" in the salesforce section)`,
  },

  salesStarter: {
    section: SALES_SECTION,
    actions: SALES_ACTIONS,
    realCrm: `export ${SALESFORCE_INSTANCE_ENV}=https://<your org>.my.salesforce.com and ${SALESFORCE_TOKEN_ENV}=<access token> (or put "instanceUrl" in the salesforce section)`,
  },

  fakeServer: {
    async start({ port, faults }) {
      const { fakeSalesforce } = await import('./fake/salesforce-fake.js');
      const fake = fakeSalesforce(faults ? { faults } : {});
      const server = await fake.listen(port);
      return { url: server.instanceUrl, requests: () => fake.count(), close: server.close };
    },
    configAt: (url) => ({ instanceUrl: url }),
    env: (url) => ({ [SALESFORCE_INSTANCE_ENV]: url, [SALESFORCE_TOKEN_ENV]: 'any-token' }),
  },
};
