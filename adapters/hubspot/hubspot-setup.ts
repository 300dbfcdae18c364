/**
 * `crm-upsert check-setup` for HubSpot: verify through the properties API what the guarantees
 * rely on, and create the id / key properties that are missing. HubSpot cannot make an existing
 * property unique: the fix says what to do instead.
 */
import { driftFailed, driftFindings } from '../kit/setup-drift.js';
import { messageOf, refuseAuth, setupRequest, type Reply } from '../kit/setup-http.js';
import type { SetupFinding, SetupReport } from '../kit/vendor-cli.js';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { ConfigError } from '../../src/errors.js';
import { HUBSPOT_TOKEN_ENV, type HubSpotConfig } from './hubspot-config.js';
import type { HubSpotRawClient } from './hubspot-fields.js';

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal', notes: 'note', tasks: 'task', tickets: 'ticket' };

interface HubSpotProperty {
  name: string;
  type?: string;
  hasUniqueValue?: boolean;
  calculated?: boolean;
  externalOptions?: boolean;
  options?: { value: string; hidden?: boolean }[];
  modificationMetadata?: { readOnlyValue?: boolean };
}

/**
 * GET /crm/v3/properties/{objectType} once per object type: record ids must be unique
 * (`hasUniqueValue`), every id, key and allowlisted property must exist and be writable, every
 * `lookupBy` property unique and every `readFields` property present; `create` POSTs missing id /
 * key properties. Then every configured association type id must be one HubSpot lists for its
 * pair. `fieldDrift` pulls the definitions from the same property lists.
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
    if (spec.kind === 'record') {
      findings.push(...(spec.lookupBy ?? []).map((field) => hubspotLookupBy(object, spec.objectType, field, byName.get(field))));
      findings.push(...(spec.readFields ?? []).map((field) => hubspotReadField(object, spec.objectType, field, byName.get(field))));
    }
  }
  const associations = await associationFindings(hs, base, token);
  findings.push(...associations.findings);
  return {
    findings,
    ...(associations.verified.length > 0 ? { appendix: `Association types HubSpot lists for their pair (GET /crm/v4/associations/{from}/{to}/labels): ${associations.verified.join(', ')}` } : {}),
    fieldDrift: (file, { fix }) => hubspotDrift(hs, file, fix, listed, (path) => setupRequest(`${base}${path}`, token)),
  };
}

/**
 * `schema pull`'s own translation (pullHubSpotFields) run on the property lists the checks read:
 * an object type whose list failed is left out (its finding says why), and only the pipelines a
 * pipeline or stage property needs are read. A hidden option is kept, marked `hidden: true`, so
 * an option hidden or shown since the file was pulled is a warning of the comparison itself:
 * HubSpot hides it from its forms and takes its value in a write.
 */
async function hubspotDrift(hs: HubSpotConfig, file: FieldDefinitionsFile, fix: string, listed: ReadonlyMap<string, Reply>, get: (path: string) => Promise<Reply>): Promise<SetupFinding[]> {
  const { pullHubSpotFields } = await import('./hubspot-fields.js');
  const readable = Object.fromEntries(Object.entries(hs.objects).filter(([, spec]) => listed.get(spec.objectType)?.status === 200));
  const client: HubSpotRawClient = {
    async apiRequest({ path }) {
      const properties = /^\/crm\/v3\/properties\/([^/]+)$/.exec(path);
      const reply = (properties ? listed.get(decodeURIComponent(properties[1]!)) : undefined) ?? (await get(path));
      refuseAuth(reply, HUBSPOT_TOKEN_ENV, 'the read scope of the object whose pipelines are read (crm.objects.deals.read for deals)');
      const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      return { status: reply.status, headers: { forEach: () => undefined }, text: async () => text };
    },
  };
  let pulled: FieldDefinitionsFile;
  try {
    pulled = await pullHubSpotFields({ ...hs, objects: readable }, { client, now: new Date() });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    return [driftFailed(err)];
  }
  const allowlist = Object.fromEntries(Object.entries(readable).map(([object, spec]) => [object, spec.fields]));
  return driftFindings(file, pulled, { allowlist, fix, target: (object, field) => `${hs.objects[object]!.objectType}.${field}` });
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

/**
 * A `lookupBy` property: HubSpot's batch read takes an `idProperty` of unique values ("Read a
 * batch of contacts by internal ID, or unique property values", the SDKs' generated docs; a
 * batch update by a non-unique one answers "Unable to perform update/upsert by non-unique …
 * property", HubSpot/hubspot-api-nodejs#548), and `hasUniqueValue` cannot be switched on for an
 * existing property (HubSpot changelog "Unique properties for contacts"). Contacts'
 * `email` is the exception: it lists `hasUniqueValue: false`, yet HubSpot dedupes contacts by it
 * and documents `idProperty: email` as the contacts' alternate id for reads (the contacts API guide
 * "can be used for contacts exclusively with email", quoted in HubSpot/hubspot-api-python#100;
 * batch read with `id_property='email'` in HubSpot/hubspot-api-python#50).
 */
function hubspotLookupBy(object: string, objectType: string, field: string, p: HubSpotProperty | undefined): SetupFinding {
  const finding: SetupFinding = { object, target: `${objectType}.${field}`, role: '(lookupBy: unique)', status: 'ok' };
  if (!p) {
    finding.status = 'missing';
    finding.detail = `property ${objectType}.${field} does not exist, so no read can match on it`;
    finding.fix = `remove it from objects.${object}.lookupBy (or create it in HubSpot with "Require unique values" ticked)`;
  } else if (objectType === 'contacts' && field === 'email') {
    finding.detail = 'HubSpot keeps one contact per email address and reads contacts by it (idProperty email), though the property does not list unique values';
  } else if (p.hasUniqueValue !== true) {
    finding.status = 'problem';
    finding.detail = `${objectType}.${field} does not require unique values, so HubSpot refuses to read by it`;
    finding.fix = `HubSpot cannot make an existing property unique: create a new property with "Require unique values" ticked, copy the values into it and name it in objects.${object}.lookupBy, or remove ${field} from it`;
  }
  return finding;
}

/** A `readFields` property only has to exist: a read answers it, nothing writes it. */
function hubspotReadField(object: string, objectType: string, field: string, p: HubSpotProperty | undefined): SetupFinding {
  const finding: SetupFinding = { object, target: `${objectType}.${field}`, role: '(readFields)', status: 'ok' };
  if (!p) {
    finding.status = 'missing';
    finding.detail = `property ${objectType}.${field} does not exist, so a read cannot answer it`;
    finding.fix = `remove it from objects.${object}.readFields (or create it in HubSpot)`;
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
