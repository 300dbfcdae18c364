/**
 * What the `crm-upsert` CLI needs from Pipedrive (the VendorCli contract). Loading this file loads
 * neither the adapter nor the fake: each is imported when first used. No SDK is needed: the
 * adapter talks HTTP through its own small client on fetch.
 */
import type { Fields } from '../../src/adapter.js';
import { ConfigError, CrmError, CrmErrorKind, registerSecret } from '../../src/errors.js';
import { inventoryOf, type InventoryTable, type VendorCli } from '../kit/vendor-cli.js';
import type { PipedriveAdapter } from './pipedrive-adapter.js';
import { PIPEDRIVE_TOKEN_ENV, pipedriveConfigSchema, type PipedriveConfig } from './pipedrive-config.js';
import { activityBody, activityRequestLine, createBody, createRequestLine, recordBody } from './pipedrive-requests.js';

const missingToken = () => new ConfigError(`${PIPEDRIVE_TOKEN_ENV} is not set: export the API token (Settings > Personal preferences > API) in the environment (it never goes in the config file)`);

async function adapterFor(section: PipedriveConfig, env: NodeJS.ProcessEnv, extra: Record<string, unknown> = {}): Promise<PipedriveAdapter> {
  const { pipedriveAdapter } = await import('./pipedrive-adapter.js');
  const apiToken = env[PIPEDRIVE_TOKEN_ENV];
  if (!apiToken) throw missingToken();
  registerSecret(apiToken);
  if (!section.basePath && !section.companyDomain) throw new ConfigError('the pipedrive section needs "companyDomain" (acme for https://acme.pipedrive.com) or "basePath"');
  return pipedriveAdapter({
    apiToken, objects: section.objects,
    ...(section.basePath ? { basePath: section.basePath } : {}),
    ...(section.companyDomain ? { companyDomain: section.companyDomain } : {}),
    ...(section.rateLimit ? { rateLimit: section.rateLimit } : {}),
    ...(section.recentLookup !== undefined ? { recentLookup: section.recentLookup } : {}),
    ...extra,
  });
}

/** `crm-upsert init`: persons keyed by the ai_external_id custom field, notes and tasks on them. */
const STARTER_SECTION: PipedriveConfig = {
  companyDomain: 'yourcompany',
  objects: {
    contact: { kind: 'record', entity: 'person', idField: 'ai_external_id', fields: ['name', 'email', 'phone'] },
    note: { kind: 'activity', entity: 'note', fields: ['content'], parents: { contact: 'person_id' } },
    task: { kind: 'activity', entity: 'activity', activityType: 'task', fields: ['subject', 'note', 'due_date'], parents: { contact: 'person_id' } },
  },
};

const ANA = { source: 'zendesk', eventId: 'zd:ticket.created:48211', op: 'upsert', object: 'contact', externalId: 'zd-1001', fields: { name: 'Ana Ruiz', email: 'ana.ruiz@northwind.example' } };
const STARTER_ACTIONS = [
  ANA,
  { source: 'zendesk', eventId: 'zd:ticket.created:48212', op: 'upsert', object: 'contact', externalId: 'zd-1002', fields: { name: 'Ben Okafor', email: 'ben.okafor@contoso.example' } },
  { source: 'gong', eventId: 'gong:call.completed:9f31', op: 'upsert', object: 'contact', externalId: 'gong-7731', fields: { name: 'Chloé Martin', email: 'chloe.martin@fabrikam.example' } },
  { source: 'zendesk', eventId: 'zd:ticket.solved:48211', occurredAt: '2026-11-28T09:14:00Z', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1001' }, fields: { content: 'AI summary: Ana could not export March invoices to CSV; a stale browser cache. Resolved after a hard refresh.' } },
  { source: 'gong', occurredAt: '2026-11-28T15:30:00Z', op: 'create', object: 'task', target: { object: 'contact', externalId: 'gong-7731' }, fields: { subject: 'Send Chloé the onboarding plan', note: 'AI follow-up from the call: she asked for a rollout plan for 40 seats.', due_date: '2026-11-29' } },
  // The first webhook, delivered again: a replay, not a second person.
  ANA,
];

/** `crm-upsert init --template sales`: organizations, persons at them, deals with both, notes on any, tasks on deals. */
const SALES_SECTION: PipedriveConfig = {
  companyDomain: 'yourcompany',
  objects: {
    company: { kind: 'record', entity: 'organization', idField: 'ai_external_id', fields: ['name'] },
    contact: { kind: 'record', entity: 'person', idField: 'ai_external_id', fields: ['name', 'email', 'phone'], links: { company: 'org_id' }, lookupBy: ['email'] },
    deal: { kind: 'record', entity: 'deal', idField: 'ai_external_id', fields: ['title', 'value', 'currency', 'expected_close_date'], links: { contact: 'person_id', company: 'org_id' } },
    note: { kind: 'activity', entity: 'note', fields: ['content'], parents: { contact: 'person_id', company: 'org_id', deal: 'deal_id' } },
    task: { kind: 'activity', entity: 'activity', activityType: 'task', fields: ['subject', 'note', 'due_date'], parents: { deal: 'deal_id', contact: 'person_id', company: 'org_id' } },
  },
};

const CALL = { source: 'gong', eventId: 'gong:call.completed:a7c2', occurredAt: '2026-12-01T16:05:00Z' };
const CALL_NOTE = {
  ...CALL, op: 'create', object: 'note', target: { object: 'contact', externalId: 'gong-7731' },
  fields: { content: 'AI summary: Fabrikam wants 40 seats from January; budget approved, security review pending.' },
  links: [{ object: 'company', externalId: 'fabrikam.example' }, { object: 'deal', externalId: 'gong-deal-a7c2' }],
};
const SALES_ACTIONS = [
  { ...CALL, op: 'upsert', object: 'company', externalId: 'fabrikam.example', fields: { name: 'Fabrikam' } },
  { ...CALL, op: 'upsert', object: 'contact', externalId: 'gong-7731', fields: { name: 'Chloé Martin', email: 'chloe.martin@fabrikam.example' }, links: [{ object: 'company', externalId: 'fabrikam.example' }] },
  { ...CALL, op: 'upsert', object: 'deal', externalId: 'gong-deal-a7c2', fields: { title: 'Fabrikam: 40 seats', value: 48000, currency: 'EUR', expected_close_date: '2027-01-15' }, links: [{ object: 'contact', externalId: 'gong-7731' }, { object: 'company', externalId: 'fabrikam.example' }] },
  CALL_NOTE,
  { ...CALL, op: 'create', object: 'task', target: { object: 'deal', externalId: 'gong-deal-a7c2' }, fields: { subject: 'Send Fabrikam the security questionnaire', due_date: '2026-12-03' }, links: [{ object: 'contact', externalId: 'gong-7731' }] },
  // The call's webhook, delivered again, the model's summary worded differently: a replay.
  { ...CALL_NOTE, fields: { content: 'AI summary: 40 seats for Fabrikam in January; security review still open.' } },
];

/** The fake's limits opened up for the demo and fake-server: a local run is not a plan's burst window. */
const FAKE_OPTIONS = { searchLagMs: 1_000, burstLimit: false, searchLimit: false } as const;

export const pipedriveCli: VendorCli<PipedriveConfig> = {
  name: 'pipedrive',
  label: 'Pipedrive',
  configSchema: pipedriveConfigSchema,
  tokenEnv: PIPEDRIVE_TOKEN_ENV,
  secretEnv: [PIPEDRIVE_TOKEN_ENV],
  dryRunEnv: { [PIPEDRIVE_TOKEN_ENV]: 'dry-run-sends-nothing' },

  async buildAdapter(section, env, { rateBudget, fieldDefinitions }) {
    return adapterFor(section, env, { ...(rateBudget ? { rateBudget } : {}), ...(fieldDefinitions ? { fieldDefinitions } : {}) });
  },

  previewRequest(section, action, key) {
    const spec = section.objects[action.object]!;
    const idOf = (ref: { object: string; externalId: string }) => {
      const parent = section.objects[ref.object];
      return parent?.kind === 'record' ? `<id of the ${parent.entity} whose ${parent.idField} is ${ref.externalId}>` : '<id>';
    };
    const asIs = (name: string) => ({ standard: name });
    if (spec.kind === 'record') {
      const relations = Object.fromEntries((action.links ?? []).filter((l) => spec.links?.[l.object]).map((l) => [spec.links![l.object]!, idOf(l)]));
      const update = recordBody(action.fields as Fields, asIs, {}, {});
      return { request: `${createRequestLine(spec)} (or PATCH by the id found)`, body: { ...createBody(update, `<key of ${spec.idField}>`, action.externalId!), ...relations } };
    }
    const refs = [action.target!, ...(action.links ?? [])].filter((r) => spec.parents[r.object]);
    const relations = Object.fromEntries(refs.map((r) => [spec.parents[r.object]!, '0']));
    const body = activityBody(spec, { key, fields: action.fields as Fields }, relations);
    for (const r of refs) body[spec.parents[r.object]!] = idOf(r);
    if (Array.isArray(body.participants)) body.participants = [{ person_id: body.person_id, primary: true }];
    return { request: activityRequestLine(spec), body };
  },

  async checkSetup(section, env, { create }) {
    const { checkPipedriveSetup } = await import('./pipedrive-setup.js');
    return checkPipedriveSetup(section, await adapterFor(section, env), create);
  },

  async pullFields(section, env, { now }) {
    const { pullPipedriveFields } = await import('./pipedrive-fields.js');
    const adapter = await adapterFor(section, env);
    try {
      return await pullPipedriveFields(section, (entity) => adapter.readFields(entity), now);
    } catch (err) {
      if (err instanceof CrmError && err.kind === CrmErrorKind.auth) {
        throw new ConfigError(`auth failed reading the Pipedrive field definitions (${err.message.replace(/^\[crm-upsert\]\s*(\[pipedrive\]\s*)?/, '')}); check ${PIPEDRIVE_TOKEN_ENV}`);
      }
      throw err;
    }
  },

  auth: {
    forbidden: () => `the API token's user needs to see and edit the configured persons, organizations, deals, notes and activities (an admin user for check-setup --create)`,
  },

  demo: {
    config: 'crm-upsert.pipedrive.config.json',
    actions: 'actions.pipedrive.jsonl',
    async start(section) {
      const { fakePipedrive } = await import('./fake/pipedrive-fake.js');
      const fake = fakePipedrive(FAKE_OPTIONS);
      const tables = new Map<string, InventoryTable>();
      for (const spec of Object.values(section.objects)) {
        if (spec.kind === 'record') {
          tables.set(spec.entity, { type: spec.entity, rows: () => fake.records(spec.entity), idOf: (r) => fake.customValue(r as Parameters<typeof fake.customValue>[0], spec.idField) });
        } else if (spec.entity === 'note') {
          tables.set('note', { type: 'note', rows: () => fake.notes(), idOf: (n) => /\[crm-upsert key: ([^\]]+)\]/.exec((n as { content: string }).content)?.[1] });
        } else {
          tables.set('activity', { type: 'activity', rows: () => fake.activities(), idOf: (a) => /\[crm-upsert key: ([^\]]+)\]/.exec((a as { note: string | null }).note ?? '')?.[1] });
        }
      }
      const front = await fake.open('loopback');
      return { url: front.url, requests: () => fake.count(), inventory: () => inventoryOf(tables.values()), close: front.close };
    },
    at: (section, url) => {
      const { companyDomain: _domain, ...rest } = section;
      return { ...rest, basePath: url, rateLimit: { points: 1_000, durationMs: 2_000 } };
    },
    env: (_url, token) => ({ [PIPEDRIVE_TOKEN_ENV]: token }),
  },

  starter: {
    section: STARTER_SECTION,
    actions: STARTER_ACTIONS,
    realCrm: `set "companyDomain" in the pipedrive section to your company's subdomain, export ${PIPEDRIVE_TOKEN_ENV}=<API token>, and create the ai_external_id field (crm-upsert check-setup --create)`,
  },

  salesStarter: {
    section: SALES_SECTION,
    actions: SALES_ACTIONS,
    realCrm: `set "companyDomain" in the pipedrive section to your company's subdomain, export ${PIPEDRIVE_TOKEN_ENV}=<API token>, and create ai_external_id on persons, organizations and deals (crm-upsert check-setup --create)`,
  },

  fakeServer: {
    async start({ port, faults }) {
      const { fakePipedrive } = await import('./fake/pipedrive-fake.js');
      const fake = fakePipedrive({ ...FAKE_OPTIONS, ...(faults ? { faults } : {}) });
      const server = await (await import('../testing/fake-http.js')).listenLoopback(fake.core, port);
      return { url: server.url, requests: () => fake.count(), close: server.close };
    },
    configAt: (url) => ({ basePath: url }),
    env: () => ({ [PIPEDRIVE_TOKEN_ENV]: 'any-token' }),
  },
};
