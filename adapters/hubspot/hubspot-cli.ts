/**
 * What the `crm-upsert` CLI needs from HubSpot (the VendorCli contract). Loading this file loads
 * neither @hubspot/api-client nor the fake: each is imported when first used. The SDK is an
 * optional peer: building an adapter without it fails with a ConfigError naming it (exit 2).
 */
import { ConfigError, CrmError, CrmErrorKind, registerSecret } from '../../src/errors.js';
import type { Fields } from '../../src/adapter.js';
import { inventoryOf, type InventoryTable, type VendorCli } from '../kit/vendor-cli.js';
import { HUBSPOT_TOKEN_ENV, hubspotConfigSchema, type HubSpotConfig } from './hubspot-config.js';
import { createInput, createRequestLine, upsertInput, upsertRequestLine } from './hubspot-requests.js';
import type { HubSpotRawClient } from './hubspot-fields.js';
import { checkHubSpotSetup } from './hubspot-setup.js';

/** HubSpot scope family per object type; engagements (notes, tasks, ...) use the contact scopes. */
const SCOPE_OF: Record<string, string> = {
  contacts: 'contacts', companies: 'companies', deals: 'deals', notes: 'contacts', tasks: 'contacts',
  calls: 'contacts', emails: 'contacts', meetings: 'contacts', line_items: 'line_items', quotes: 'quotes',
};

/** The private-app scopes the configured objects need. */
export function hubspotScopes(hs: HubSpotConfig): string[] {
  const scopes: string[] = [];
  for (const spec of Object.values(hs.objects)) {
    const type = spec.objectType;
    if (type === 'tickets') scopes.push('tickets');
    else {
      const family = SCOPE_OF[type] ?? (/^(p_|2-)/.test(type) ? 'custom' : type);
      scopes.push(`crm.objects.${family}.read`, `crm.objects.${family}.write`);
    }
  }
  return [...new Set(scopes)];
}

/** `crm-upsert init`: contacts keyed by ai_external_id, notes and tasks keyed by crm_upsert_key. */
const STARTER_SECTION: HubSpotConfig = {
  objects: {
    contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname', 'lifecyclestage', 'phone', 'company', 'jobtitle'] },
    note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
    task: { kind: 'activity', objectType: 'tasks', keyProperty: 'crm_upsert_key', fields: ['hs_task_subject', 'hs_task_body', 'hs_task_status', 'hs_task_priority', 'hs_timestamp'], parents: { contact: 204 } },
  },
};

const ANA = { source: 'zendesk', eventId: 'zd:ticket.created:48211', op: 'upsert', object: 'contact', externalId: 'zd-1001', fields: { email: 'ana.ruiz@northwind.example', firstname: 'Ana', lastname: 'Ruiz', lifecyclestage: 'lead', company: 'Northwind Traders' } };
const STARTER_ACTIONS = [
  ANA,
  { source: 'zendesk', eventId: 'zd:ticket.created:48212', op: 'upsert', object: 'contact', externalId: 'zd-1002', fields: { email: 'ben.okafor@contoso.example', firstname: 'Ben', lastname: 'Okafor', lifecyclestage: 'customer', company: 'Contoso' } },
  { source: 'gong', eventId: 'gong:call.completed:9f31', op: 'upsert', object: 'contact', externalId: 'gong-7731', fields: { email: 'chloe.martin@fabrikam.example', firstname: 'Chloé', lastname: 'Martin', jobtitle: 'Head of Operations', company: 'Fabrikam' } },
  { source: 'zendesk', eventId: 'zd:ticket.solved:48211', occurredAt: '2026-11-28T09:14:00Z', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1001' }, fields: { hs_note_body: 'AI summary: Ana could not export March invoices to CSV; a stale browser cache. Resolved after a hard refresh.', hs_timestamp: '2026-11-28T09:14:00Z' } },
  { source: 'gong', occurredAt: '2026-11-28T15:30:00Z', op: 'create', object: 'task', target: { object: 'contact', externalId: 'gong-7731' }, fields: { hs_task_subject: 'Send Chloé the onboarding plan', hs_task_body: 'AI follow-up from the call: she asked for a rollout plan for 40 seats.', hs_task_status: 'NOT_STARTED', hs_task_priority: 'HIGH', hs_timestamp: '2026-11-29T09:00:00Z' } },
  // The first webhook, delivered again: a replay, not a second contact.
  ANA,
];

/**
 * `crm-upsert init --template sales`: companies, contacts and deals keyed by ai_external_id and
 * linked (contact -> company 279, deal -> contact 3 and company 341), notes and tasks on any of
 * them (note 202 / 190 / 214, task 204 / 192 / 216). Contacts are also read by email
 * (`crm-upsert get contact <email> --by email`).
 */
const SALES_SECTION: HubSpotConfig = {
  objects: {
    company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name', 'domain', 'industry'] },
    contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname', 'jobtitle', 'lifecyclestage'], lookupBy: ['email'], links: { company: 279 } },
    deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'amount', 'dealstage', 'pipeline', 'closedate'], links: { contact: 3, company: 341 } },
    note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202, company: 190, deal: 214 } },
    task: { kind: 'activity', objectType: 'tasks', keyProperty: 'crm_upsert_key', fields: ['hs_task_subject', 'hs_task_body', 'hs_task_status', 'hs_task_priority', 'hs_timestamp'], parents: { contact: 204, company: 192, deal: 216 } },
  },
};

/** One sales call (Gong) as the graph a model makes of it, then its note delivered again. */
const CALL = { source: 'gong', eventId: 'gong:call.completed:a7c2', occurredAt: '2026-12-01T16:05:00Z' };
const CALL_NOTE = {
  ...CALL, op: 'create', object: 'note', target: { object: 'contact', externalId: 'gong-7731' },
  fields: { hs_note_body: 'AI summary: Fabrikam wants 40 seats from January; budget approved, security review pending.', hs_timestamp: '2026-12-01T16:05:00Z' },
  links: [{ object: 'company', externalId: 'fabrikam.example' }, { object: 'deal', externalId: 'gong-deal-a7c2' }],
};
const SALES_ACTIONS = [
  { ...CALL, op: 'upsert', object: 'company', externalId: 'fabrikam.example', fields: { name: 'Fabrikam', domain: 'fabrikam.example', industry: 'COMPUTER_SOFTWARE' } },
  { ...CALL, op: 'upsert', object: 'contact', externalId: 'gong-7731', fields: { email: 'chloe.martin@fabrikam.example', firstname: 'Chloé', lastname: 'Martin', jobtitle: 'Head of Operations' }, links: [{ object: 'company', externalId: 'fabrikam.example' }] },
  { ...CALL, op: 'upsert', object: 'deal', externalId: 'gong-deal-a7c2', fields: { dealname: 'Fabrikam: 40 seats', amount: 48000, dealstage: 'appointmentscheduled', pipeline: 'default', closedate: '2027-01-15' }, links: [{ object: 'contact', externalId: 'gong-7731' }, { object: 'company', externalId: 'fabrikam.example' }] },
  CALL_NOTE,
  { ...CALL, op: 'create', object: 'task', target: { object: 'deal', externalId: 'gong-deal-a7c2' }, fields: { hs_task_subject: 'Send Fabrikam the security questionnaire', hs_task_status: 'NOT_STARTED', hs_task_priority: 'HIGH', hs_timestamp: '2026-12-03T09:00:00Z' } },
  // The call's webhook, delivered again, the model's summary worded differently: a replay.
  { ...CALL_NOTE, fields: { ...CALL_NOTE.fields, hs_note_body: 'AI summary: 40 seats for Fabrikam in January; security review still open.' } },
];

export const hubspotCli: VendorCli<HubSpotConfig> = {
  name: 'hubspot',
  label: 'HubSpot',
  configSchema: hubspotConfigSchema,
  tokenEnv: HUBSPOT_TOKEN_ENV,
  secretEnv: [HUBSPOT_TOKEN_ENV],
  dryRunEnv: { [HUBSPOT_TOKEN_ENV]: 'dry-run-sends-nothing' },

  async buildAdapter(hs, env, { rateBudget, fieldDefinitions }) {
    // First: without @hubspot/api-client (an optional peer) this throws the ConfigError naming what to install.
    const { hubspotAdapter } = await import('./hubspot-adapter.js');
    const accessToken = env[HUBSPOT_TOKEN_ENV];
    if (!accessToken) throw new ConfigError(`${HUBSPOT_TOKEN_ENV} is not set: export the private-app access token in the environment (it never goes in the config file)`);
    registerSecret(accessToken);
    return hubspotAdapter({ accessToken, objects: hs.objects, ...(hs.basePath ? { basePath: hs.basePath } : {}), ...(hs.rateLimit ? { rateLimit: hs.rateLimit } : {}), ...(rateBudget ? { rateBudget } : {}), ...(fieldDefinitions ? { fieldDefinitions } : {}) });
  },

  previewRequest(hs, action, key) {
    const spec = hs.objects[action.object]!;
    if (spec.kind === 'record') return { request: upsertRequestLine(spec), body: upsertInput(spec, { externalId: action.externalId!, fields: action.fields as Fields }) };
    const target = action.target!;
    const idOf = (ref: { object: string; externalId: string }) => {
      const parent = hs.objects[ref.object];
      return parent?.kind === 'record' ? `<id of ${parent.objectType} where ${parent.idProperty}=${ref.externalId}>` : '<parent id>';
    };
    const associations = [target, ...(action.links ?? [])].map((ref) => ({ id: idOf(ref), typeId: spec.parents[ref.object]! }));
    return { request: createRequestLine(spec), body: createInput(spec, { key, fields: action.fields as Fields }, associations) };
  },

  checkSetup: (hs, env, { create }) => checkHubSpotSetup(hs, env, create),

  async pullFields(hs, env, { now }) {
    const [{ loadVendorSdk, HUBSPOT_SDK }, { pullHubSpotFields }] = await Promise.all([import('../kit/vendor-sdk.js'), import('./hubspot-fields.js')]);
    // First: without @hubspot/api-client (an optional peer) this throws the ConfigError naming what to install.
    const { Client } = loadVendorSdk<{ Client: new (options: { accessToken: string; basePath?: string }) => HubSpotRawClient }>(HUBSPOT_SDK);
    const accessToken = env[HUBSPOT_TOKEN_ENV];
    if (!accessToken) throw new ConfigError(`${HUBSPOT_TOKEN_ENV} is not set: export the private-app access token in the environment (it never goes in the config file)`);
    registerSecret(accessToken);
    const client = new Client({ accessToken, ...(hs.basePath ? { basePath: hs.basePath.replace(/\/+$/, '') } : {}) });
    try {
      return await pullHubSpotFields(hs, { client, now });
    } catch (err) {
      if (err instanceof CrmError && err.kind === CrmErrorKind.auth) {
        throw new ConfigError(`auth failed reading the HubSpot property definitions (${err.message.replace(/^\[crm-upsert\]\s*(\[hubspot\]\s*)?/, '')}); the private app needs the crm.schemas.*.read scopes of the configured objects`);
      }
      throw err;
    }
  },

  auth: {
    forbidden: (hs) => `the private app needs the scopes ${hubspotScopes(hs).join(', ')} for the configured objects`,
  },

  demo: {
    config: 'crm-upsert.config.json',
    actions: 'actions.jsonl',
    async start(hs) {
      const { fakeHubSpot } = await import('./fake/hubspot-fake.js');
      const fake = fakeHubSpot();
      const tables = new Map<string, InventoryTable>();
      for (const spec of Object.values(hs.objects)) {
        const prop = spec.kind === 'record' ? spec.idProperty : spec.keyProperty;
        if (!tables.has(spec.objectType)) tables.set(spec.objectType, { type: spec.objectType, rows: () => fake.records(spec.objectType), idOf: (r) => (r as { properties: Record<string, unknown> }).properties[prop] });
      }
      const front = await fake.open('loopback');
      return { url: front.url, requests: () => fake.count(), inventory: () => inventoryOf(tables.values()), close: front.close };
    },
    at: (hs, url) => ({ ...hs, basePath: url }),
    env: (_url, token) => ({ [HUBSPOT_TOKEN_ENV]: token }),
  },

  starter: {
    section: STARTER_SECTION,
    actions: STARTER_ACTIONS,
    realCrm: `leave "basePath" out of the hubspot section (it defaults to https://api.hubapi.com) and export ${HUBSPOT_TOKEN_ENV}=<private-app token>`,
  },

  salesStarter: {
    section: SALES_SECTION,
    actions: SALES_ACTIONS,
    realCrm: `leave "basePath" out of the hubspot section (it defaults to https://api.hubapi.com), export ${HUBSPOT_TOKEN_ENV}=<private-app token> (scopes: contacts, companies and deals read and write), and create ai_external_id on companies and deals too (crm-upsert check-setup --create)`,
  },

  fakeServer: {
    async start({ port, faults }) {
      const { fakeHubSpot } = await import('./fake/hubspot-fake.js');
      const fake = fakeHubSpot(faults ? { faults } : {});
      const server = await fake.listen(port);
      return { url: server.basePath, requests: () => fake.count(), close: server.close };
    },
    configAt: (url) => ({ basePath: url }),
    env: () => ({ [HUBSPOT_TOKEN_ENV]: 'any-token' }),
  },
};
