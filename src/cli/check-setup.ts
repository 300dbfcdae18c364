/**
 * `crm-upsert check-setup [--create]`: verify through the CRM API what the guarantees rely on,
 * and create what can be created.
 *
 * - Every id / key field exists. Record ids must be unique (HubSpot `hasUniqueValue`); on
 *   Salesforce every external-id field must be External ID, Unique and case-sensitive (else
 *   `ACME-1` and `acme-1` match one record).
 * - Every allowlisted field (and every Salesforce parent lookup field) exists and is writable.
 * - A refused token is an auth failure (exit 2), named by its environment variable.
 *
 * HubSpot: GET /crm/v3/properties/{objectType} once per object type; --create POSTs missing id /
 * key properties. Salesforce: GET /sobjects/{sObject}/describe once per sObject; fields are made
 * in Setup or with the Metadata API, so --create prints the exact definitions. Neither CRM lets an
 * existing field change its uniqueness through these calls: the fix says what to do instead.
 */
import { redact } from '../errors.js';
import { loadConfig, type Config } from './config.js';
import { ExitCode, UsageError } from './exit.js';

export interface CheckSetupFlags {
  config: string;
  create?: boolean;
}

interface Finding {
  object: string;
  /** `contacts.ai_external_id`, `Contact.Email`. */
  target: string;
  /** What the field must be, shown after the target: `(unique)`, `(allowlisted)`. */
  role: string;
  status: 'ok' | 'created' | 'missing' | 'problem';
  detail?: string;
  fix?: string;
}

interface Reply {
  status: number;
  body: unknown;
}

async function request(url: string, token: string, init: { method?: string; body?: unknown } = {}): Promise<Reply> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
  } catch (err) {
    throw new UsageError(`cannot reach ${new URL(url).origin}: ${redact((err as Error).message)}`);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // keep the text
  }
  return { status: res.status, body };
}

const messageOf = (body: unknown) => redact(typeof body === 'string' ? body : JSON.stringify(body)).replace(/\s+/g, ' ').slice(0, 300);

/** 401/403 end the check: nothing else can be verified with this token. */
function refuseAuth(reply: Reply, variable: string, scopes: string): void {
  if (reply.status === 401) {
    throw new UsageError(`auth failed: the token in ${variable} was refused (HTTP 401: ${messageOf(reply.body)}); set a current token and run check-setup again`);
  }
  if (reply.status === 403) {
    throw new UsageError(`auth failed: the token in ${variable} may not read the object definitions (HTTP 403: ${messageOf(reply.body)}); it needs ${scopes}`);
  }
}

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal', notes: 'note', tasks: 'task', tickets: 'ticket' };

interface HubSpotProperty {
  name: string;
  hasUniqueValue?: boolean;
  calculated?: boolean;
  modificationMetadata?: { readOnlyValue?: boolean };
}

async function checkHubSpot(config: Config, create: boolean): Promise<Finding[]> {
  const hs = config.hubspot!;
  const token = process.env.HUBSPOT_ACCESS_TOKEN;
  if (!token) throw new UsageError('HUBSPOT_ACCESS_TOKEN is not set: export the private-app access token (scopes: crm.schemas.*.read/write for check-setup)');
  const base = (hs.basePath ?? 'https://api.hubapi.com').replace(/\/+$/, '');
  const listed = new Map<string, Reply>();
  const properties = async (objectType: string): Promise<Reply> => {
    let reply = listed.get(objectType);
    if (!reply) {
      reply = await request(`${base}/crm/v3/properties/${encodeURIComponent(objectType)}`, token);
      refuseAuth(reply, 'HUBSPOT_ACCESS_TOKEN', `the crm.schemas.${objectType}.read scope (and .write for --create)`);
      listed.set(objectType, reply);
    }
    return reply;
  };
  const findings: Finding[] = [];
  for (const [object, spec] of Object.entries(hs.objects)) {
    const reply = await properties(spec.objectType);
    if (reply.status !== 200) {
      findings.push({ object, target: spec.objectType, role: '(object)', status: 'problem', detail: `listing its properties failed with HTTP ${reply.status}: ${messageOf(reply.body)}`, fix: `check objects.${object}.objectType` });
      continue;
    }
    const byName = new Map(((reply.body as { results?: HubSpotProperty[] }).results ?? []).map((p) => [p.name, p]));
    const keyName = spec.kind === 'record' ? spec.idProperty : spec.keyProperty;
    const unique = spec.kind === 'record';
    const key: Finding = { object, target: `${spec.objectType}.${keyName}`, role: unique ? '(unique)' : '(key)', status: 'ok' };
    const found = byName.get(keyName);
    if (!found) {
      key.status = 'missing';
      key.detail = `property ${spec.objectType}.${keyName} does not exist`;
      key.fix = 'run check-setup --create to create it';
      if (create) {
        const made = await createHubSpotKey(base, token, spec.objectType, keyName, unique);
        if (made.status === 201 || made.status === 200) key.status = 'created';
        else {
          refuseAuth(made, 'HUBSPOT_ACCESS_TOKEN', `the crm.schemas.${spec.objectType}.write scope`);
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
  return findings;
}

const writable = (p: HubSpotProperty) => p.modificationMetadata?.readOnlyValue !== true && p.calculated !== true;

function hubspotField(object: string, objectType: string, field: string, p: HubSpotProperty | undefined): Finding {
  const finding: Finding = { object, target: `${objectType}.${field}`, role: '(allowlisted)', status: 'ok' };
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
  return request(`${base}/crm/v3/properties/${encodeURIComponent(objectType)}`, token, {
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

/** The field as Metadata API CustomField XML: what to deploy (or enter in Setup) for it. */
function salesforceFieldDefinition(sobject: string, field: string): string {
  return [
    `<!-- objects/${sobject}/fields/${field}.field-meta.xml -->`,
    '<CustomField xmlns="http://soap.sforce.com/2006/04/metadata">',
    `    <fullName>${field}</fullName>`,
    `    <label>${field.replace(/__c$/, '').replace(/_/g, ' ')}</label>`,
    '    <type>Text</type>',
    '    <length>255</length>',
    '    <externalId>true</externalId>',
    '    <unique>true</unique>',
    '    <caseSensitive>true</caseSensitive>',
    '    <required>false</required>',
    '</CustomField>',
  ].join('\n');
}

interface SalesforceField {
  name: string;
  type?: string;
  externalId?: boolean;
  unique?: boolean;
  caseSensitive?: boolean;
  createable?: boolean;
  updateable?: boolean;
}

async function checkSalesforce(config: Config, create: boolean): Promise<{ findings: Finding[]; definitions: string[] }> {
  const sf = config.salesforce!;
  const token = process.env.SF_ACCESS_TOKEN;
  const instanceUrl = sf.instanceUrl ?? process.env.SF_INSTANCE_URL;
  if (!token) throw new UsageError('SF_ACCESS_TOKEN is not set: export the Salesforce access token');
  if (!instanceUrl) throw new UsageError('salesforce.instanceUrl is not set: put it in the config file or set SF_INSTANCE_URL');
  const base = `${instanceUrl.replace(/\/+$/, '')}/services/data/v${sf.apiVersion ?? '60.0'}`;
  const findings: Finding[] = [];
  const definitions: string[] = [];
  const described = new Map<string, Reply>();
  for (const [object, spec] of Object.entries(sf.objects)) {
    let reply = described.get(spec.sobject);
    if (!reply) {
      reply = await request(`${base}/sobjects/${encodeURIComponent(spec.sobject)}/describe`, token);
      refuseAuth(reply, 'SF_ACCESS_TOKEN', `"API Enabled" and read access to ${spec.sobject}`);
      described.set(spec.sobject, reply);
    }
    if (reply.status !== 200) {
      findings.push({ object, target: spec.sobject, role: '(sObject)', status: 'problem', detail: `describe ${spec.sobject} failed with HTTP ${reply.status}: ${messageOf(reply.body)}`, fix: `check objects.${object}.sobject and the user's access to it` });
      continue;
    }
    const byName = new Map(((reply.body as { fields?: SalesforceField[] }).fields ?? []).map((f) => [f.name, f]));
    const key = salesforceKey(object, spec.sobject, spec.externalIdField, byName.get(spec.externalIdField), create);
    if (key.status === 'missing' && create) definitions.push(salesforceFieldDefinition(spec.sobject, spec.externalIdField));
    findings.push(key);
    const written = [...spec.fields, ...(spec.kind === 'activity' ? Object.values(spec.parents) : [])];
    findings.push(...[...new Set(written)].map((field) => salesforceField(object, spec.sobject, field, byName.get(field))));
  }
  return { findings, definitions };
}

function salesforceKey(object: string, sobject: string, field: string, f: SalesforceField | undefined, create: boolean): Finding {
  const finding: Finding = { object, target: `${sobject}.${field}`, role: '(External ID, Unique, case-sensitive)', status: 'ok' };
  const edit = `${create ? '--create cannot change an existing field: ' : ''}in Setup > Object Manager > ${sobject} > Fields & Relationships > ${field} > Edit,`;
  if (!f) {
    finding.status = 'missing';
    finding.detail = `field ${sobject}.${field} does not exist`;
    finding.fix = create ? 'create it from the definition below (Setup, or deploy it with the Metadata API)' : 'run check-setup --create for its definition, then create it in Setup or deploy it';
    return finding;
  }
  const wrong: string[] = [];
  if (!f.externalId) wrong.push('is not marked External ID');
  if (!f.unique) wrong.push('is not Unique (two records can hold one value, and an upsert by it fails with MULTIPLE_CHOICES)');
  // Only text can be case-insensitive; with it Salesforce matches `ACME-1` and `acme-1` to one record.
  const caseMatters = f.type === undefined || f.type === 'string';
  if (caseMatters && f.caseSensitive !== true) wrong.push('is case-insensitive (then `ACME-1` and `acme-1` update one record)');
  if (f.createable === false || f.updateable === false) wrong.push('is not writable by this user');
  if (wrong.length > 0) {
    finding.status = 'problem';
    finding.detail = `${sobject}.${field} ${wrong.join(', ')}`;
    const ticks = [!f.externalId && 'tick External ID', !f.unique && 'tick Unique', caseMatters && f.caseSensitive !== true && `choose 'Treat "ABC" and "abc" as different values (case sensitive)'`].filter(Boolean);
    finding.fix = `${edit} ${ticks.length > 0 ? ticks.join(', ') : 'give the integration user Edit access (field-level security)'}`.replace(/ {2,}/g, ' ');
  }
  return finding;
}

function salesforceField(object: string, sobject: string, field: string, f: SalesforceField | undefined): Finding {
  const finding: Finding = { object, target: `${sobject}.${field}`, role: '(allowlisted)', status: 'ok' };
  if (!f) {
    finding.status = 'missing';
    finding.detail = `field ${sobject}.${field} does not exist (or this user cannot see it), so every write carrying it fails with INVALID_FIELD`;
    finding.fix = `create it in Setup and give the integration user access, or remove it from objects.${object}.fields`;
  } else if (f.createable === false || f.updateable === false) {
    const cannot = [f.createable === false && 'create', f.updateable === false && 'update'].filter(Boolean).join(' or ');
    finding.status = 'problem';
    finding.detail = `${sobject}.${field} is read-only for this user (cannot ${cannot} it)`;
    finding.fix = `give the integration user Edit access to it (field-level security), or remove it from objects.${object}.fields`;
  }
  return finding;
}

const MARK: Record<Finding['status'], string> = { ok: 'ok     ', created: 'created', missing: 'MISSING', problem: 'PROBLEM' };

export async function checkSetupCommand(flags: CheckSetupFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  let findings: Finding[];
  let definitions: string[] = [];
  if (config.crm === 'hubspot') findings = await checkHubSpot(config, Boolean(flags.create));
  else ({ findings, definitions } = await checkSalesforce(config, Boolean(flags.create)));
  for (const f of findings) {
    const detail = f.detail && f.status !== 'created' ? `: ${f.detail}` : '';
    const fix = f.fix && f.status !== 'ok' && f.status !== 'created' ? `. Fix: ${f.fix}` : '';
    process.stdout.write(`${MARK[f.status]}  ${f.object} -> ${f.target} ${f.role}${detail}${fix}\n`);
  }
  if (definitions.length > 0) {
    process.stdout.write('\nSalesforce fields are created in Setup (Object Manager > Fields & Relationships) or deployed with the Metadata API; this tool does not create them. Definitions:\n\n');
    process.stdout.write(`${definitions.join('\n\n')}\n`);
  }
  const bad = findings.filter((f) => f.status === 'missing' || f.status === 'problem');
  if (bad.length > 0) {
    process.stderr.write(`crm-upsert: ${bad.length} of ${findings.length} checks failed: ${bad.map((f) => f.target).join(', ')}\n`);
    return ExitCode.problems;
  }
  process.stdout.write(`all ${findings.length} checks passed\n`);
  return ExitCode.ok;
}
