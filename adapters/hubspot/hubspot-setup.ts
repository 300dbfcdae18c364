/**
 * `crm-upsert check-setup` for HubSpot: verify through the properties API what the guarantees
 * rely on, and create the id / key properties that are missing. HubSpot cannot make an existing
 * property unique: the fix says what to do instead.
 */
import { messageOf, refuseAuth, setupRequest, type Reply } from '../kit/setup-http.js';
import type { SetupFinding, SetupReport } from '../kit/vendor-cli.js';
import { ConfigError } from '../../src/errors.js';
import { HUBSPOT_TOKEN_ENV, type HubSpotConfig } from './hubspot-config.js';

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal', notes: 'note', tasks: 'task', tickets: 'ticket' };

interface HubSpotProperty {
  name: string;
  hasUniqueValue?: boolean;
  calculated?: boolean;
  modificationMetadata?: { readOnlyValue?: boolean };
}

/**
 * GET /crm/v3/properties/{objectType} once per object type: record ids must be unique
 * (`hasUniqueValue`), every id, key and allowlisted property must exist and be writable;
 * `create` POSTs missing id / key properties. Then every configured association type id must be
 * one HubSpot lists for its pair.
 */
export async function checkHubSpotSetup(hs: HubSpotConfig, env: NodeJS.ProcessEnv, create: boolean): Promise<SetupReport> {
  const token = env[HUBSPOT_TOKEN_ENV];
  if (!token) throw new ConfigError('HUBSPOT_ACCESS_TOKEN is not set: export the private-app access token (scopes: crm.schemas.*.read/write for check-setup)');
  const base = (hs.basePath ?? 'https://api.hubapi.com').replace(/\/+$/, '');
  const listed = new Map<string, Reply>();
  const properties = async (objectType: string): Promise<Reply> => {
    let reply = listed.get(objectType);
    if (!reply) {
      reply = await setupRequest(`${base}/crm/v3/properties/${encodeURIComponent(objectType)}`, token);
      refuseAuth(reply, HUBSPOT_TOKEN_ENV, `the crm.schemas.${objectType}.read scope (and .write for --create)`);
      listed.set(objectType, reply);
    }
    return reply;
  };
  const findings: SetupFinding[] = [];
  for (const [object, spec] of Object.entries(hs.objects)) {
    const reply = await properties(spec.objectType);
    if (reply.status !== 200) {
      findings.push({ object, target: spec.objectType, role: '(object)', status: 'problem', detail: `listing its properties failed with HTTP ${reply.status}: ${messageOf(reply.body)}`, fix: `check objects.${object}.objectType` });
      continue;
    }
    const byName = new Map(((reply.body as { results?: HubSpotProperty[] }).results ?? []).map((p) => [p.name, p]));
    const keyName = spec.kind === 'record' ? spec.idProperty : spec.keyProperty;
    const unique = spec.kind === 'record';
    const key: SetupFinding = { object, target: `${spec.objectType}.${keyName}`, role: unique ? '(unique)' : '(key)', status: 'ok' };
    const found = byName.get(keyName);
    if (!found) {
      key.status = 'missing';
      key.detail = `property ${spec.objectType}.${keyName} does not exist`;
      key.fix = 'run check-setup --create to create it';
      if (create) {
        const made = await createHubSpotKey(base, token, spec.objectType, keyName, unique);
        if (made.status === 201 || made.status === 200) key.status = 'created';
        else {
          refuseAuth(made, HUBSPOT_TOKEN_ENV, `the crm.schemas.${spec.objectType}.write scope`);
          key.detail = `creating it failed with HTTP ${made.status}: ${messageOf(made.body)}`;
          key.fix = 'create it in HubSpot (Settings > Properties)';
        }
      }
    } else if (unique && found.hasUniqueValue !== true) {
      key.status = 'problem';
      key.detail = `${spec.objectType}.${keyName} exists but does not require unique values, so HubSpot refuses to upsert by it`;
      key.fix = `HubSpot cannot make an existing property unique${create ? ' (--create does not change existing properties)' : ''}: point objects.${object}.idProperty at a new name and run check-setup --create to create it with unique values`;
    } else if (!writable(found)) {
      key.status = 'problem';
      key.detail = `${spec.objectType}.${keyName} is read-only`;
      key.fix = `point objects.${object}.${unique ? 'idProperty' : 'keyProperty'} at a writable property (or a new name, then --create)`;
    }
    findings.push(key);
    findings.push(...spec.fields.map((field) => hubspotField(object, spec.objectType, field, byName.get(field))));
  }
  const associations = await associationFindings(hs, base, token);
  findings.push(...associations.findings);
  return { findings, ...(associations.verified.length > 0 ? { appendix: `Association types HubSpot lists for their pair (GET /crm/v4/associations/{from}/{to}/labels): ${associations.verified.join(', ')}` } : {}) };
}

interface AssociationLabel { category?: string; typeId?: number; label?: string | null }

/**
 * GET /crm/v4/associations/{from}/{to}/labels once per pair a config uses (a record's `links`, an
 * activity's `parents`): each configured type id must be listed there as HUBSPOT_DEFINED, or every
 * association written with it is refused. A type that is listed is not a finding of its own (the
 * report's check count stays that of the properties); it is named in `verified`.
 */
async function associationFindings(hs: HubSpotConfig, base: string, token: string): Promise<{ findings: SetupFinding[]; verified: string[] }> {
  const labels = new Map<string, Reply>();
  const findings: SetupFinding[] = [];
  const verified: string[] = [];
  for (const [object, spec] of Object.entries(hs.objects)) {
    const pairs = spec.kind === 'record' ? (spec.links ?? {}) : spec.parents;
    const path = spec.kind === 'record' ? 'links' : 'parents';
    for (const [other, typeId] of Object.entries(pairs)) {
      const to = hs.objects[other];
      if (!to) continue;
      const pair = `${spec.objectType}/${to.objectType}`;
      let reply = labels.get(pair);
      if (!reply) {
        reply = await setupRequest(`${base}/crm/v4/associations/${encodeURIComponent(spec.objectType)}/${encodeURIComponent(to.objectType)}/labels`, token);
        refuseAuth(reply, HUBSPOT_TOKEN_ENV, `the read scopes of ${spec.objectType} and ${to.objectType} (crm.objects.<object>.read) to list their association types`);
        labels.set(pair, reply);
      }
      const target = `${spec.objectType} -> ${to.objectType} type ${typeId}`;
      if (reply.status !== 200) {
        findings.push({
          object, target, role: '(association)', status: 'problem',
          detail: `listing the association types ${spec.objectType} -> ${to.objectType} failed with HTTP ${reply.status}: ${messageOf(reply.body)}`,
          fix: `check objects.${object}.objectType and objects.${other}.objectType`,
        });
        continue;
      }
      const listed = ((reply.body as { results?: AssociationLabel[] }).results ?? []).filter((l) => l.category === 'HUBSPOT_DEFINED');
      if (listed.some((l) => l.typeId === typeId)) {
        verified.push(`${spec.objectType} -> ${to.objectType} ${typeId}`);
        continue;
      }
      const found = listed.map((l) => `${l.typeId}${l.label ? ` (${l.label})` : ''}`).join(', ') || 'none';
      findings.push({
        object, target, role: '(association)', status: 'missing',
        detail: `HubSpot defines no association type ${typeId} from ${spec.objectType} to ${to.objectType} (HUBSPOT_DEFINED types: ${found}), so every association written with it is refused`,
        fix: `set objects.${object}.${path}.${other} to one of: ${listed.map((l) => l.typeId).join(', ') || 'none (the pair has no HUBSPOT_DEFINED type)'}`,
      });
    }
  }
  return { findings, verified };
}

const writable = (p: HubSpotProperty) => p.modificationMetadata?.readOnlyValue !== true && p.calculated !== true;

function hubspotField(object: string, objectType: string, field: string, p: HubSpotProperty | undefined): SetupFinding {
  const finding: SetupFinding = { object, target: `${objectType}.${field}`, role: '(allowlisted)', status: 'ok' };
  if (!p) {
    finding.status = 'missing';
    finding.detail = `property ${objectType}.${field} does not exist, so every write carrying it is refused`;
    finding.fix = `create it in HubSpot (Settings > Properties; --create makes only id and key properties) or remove it from objects.${object}.fields`;
  } else if (!writable(p)) {
    finding.status = 'problem';
    finding.detail = `${objectType}.${field} is ${p.calculated ? 'calculated' : 'read-only'}: HubSpot refuses writes to it`;
    finding.fix = `remove it from objects.${object}.fields`;
  }
  return finding;
}

function createHubSpotKey(base: string, token: string, objectType: string, name: string, unique: boolean): Promise<Reply> {
  return setupRequest(`${base}/crm/v3/properties/${encodeURIComponent(objectType)}`, token, {
    method: 'POST',
    body: {
      name,
      label: unique ? 'AI external id' : 'crm-upsert key',
      type: 'string',
      fieldType: 'text',
      groupName: `${SINGULAR[objectType] ?? objectType}information`,
      hasUniqueValue: unique,
      description: unique ? 'External id written by crm-upsert-sync; upserts match on it.' : 'Idempotency key of the action that created this activity (crm-upsert-sync).',
    },
  });
}
