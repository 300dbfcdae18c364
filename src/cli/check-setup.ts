/**
 * `crm-upsert check-setup [--create]`: verify through the CRM API that every configured object's
 * external-id / key field exists (and is unique for record objects), and create what is missing.
 *
 * HubSpot: GET /crm/v3/properties/{objectType}/{name}; --create POSTs the property (hasUniqueValue
 * for record id properties). Salesforce: GET /sobjects/{sObject}/describe; fields are created in
 * Setup or with the Metadata API, so --create prints the exact field definitions instead.
 */
import { redact } from '../errors.js';
import { loadConfig, type Config } from './config.js';
import { ExitCode, UsageError } from './exit.js';

export interface CheckSetupFlags {
  config: string;
  create?: boolean;
}

interface Check {
  object: string;
  crmObject: string;
  field: string;
  /** Must be unique (record external ids; Salesforce activity keys). */
  unique: boolean;
  status: 'ok' | 'missing' | 'not_unique' | 'not_external_id' | 'created' | 'error';
  detail?: string;
}

async function request(url: string, token: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: unknown }> {
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

const messageOf = (body: unknown) => redact(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 300);
const authHint = (status: number) => (status === 401 || status === 403 ? ' (check the token and its scopes)' : '');

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal', notes: 'note', tasks: 'task', tickets: 'ticket' };

async function checkHubSpot(config: Config, create: boolean): Promise<Check[]> {
  const hs = config.hubspot!;
  const token = process.env.HUBSPOT_ACCESS_TOKEN;
  if (!token) throw new UsageError('HUBSPOT_ACCESS_TOKEN is not set: export the private-app access token (scopes: crm.schemas.*.read/write for check-setup)');
  const base = (hs.basePath ?? 'https://api.hubapi.com').replace(/\/+$/, '');
  const checks: Check[] = [];
  for (const [object, spec] of Object.entries(hs.objects)) {
    const field = spec.kind === 'record' ? spec.idProperty : spec.keyProperty;
    const unique = spec.kind === 'record';
    const check: Check = { object, crmObject: spec.objectType, field, unique, status: 'ok' };
    const res = await request(`${base}/crm/v3/properties/${encodeURIComponent(spec.objectType)}/${encodeURIComponent(field)}`, token);
    if (res.status === 200) {
      if (unique && (res.body as { hasUniqueValue?: boolean }).hasUniqueValue !== true) {
        check.status = 'not_unique';
        check.detail = `${spec.objectType}.${field} exists but does not require unique values; an upsert needs a unique-value property (HubSpot cannot change this on an existing property: create a new one and point idProperty at it)`;
      }
    } else if (res.status === 404) {
      check.status = 'missing';
      if (create) {
        const definition = {
          name: field,
          label: unique ? 'AI external id' : 'crm-upsert key',
          type: 'string',
          fieldType: 'text',
          groupName: `${SINGULAR[spec.objectType] ?? spec.objectType}information`,
          hasUniqueValue: unique,
          description: unique ? 'External id written by crm-upsert-sync; upserts match on it.' : 'Idempotency key of the action that created this activity (crm-upsert-sync).',
        };
        const made = await request(`${base}/crm/v3/properties/${encodeURIComponent(spec.objectType)}`, token, { method: 'POST', body: definition });
        if (made.status === 201 || made.status === 200) check.status = 'created';
        else {
          check.status = 'error';
          check.detail = `creating it failed with HTTP ${made.status}${authHint(made.status)}: ${messageOf(made.body)}`;
        }
      } else {
        check.detail = `property ${spec.objectType}.${field} does not exist; run with --create to create it`;
      }
    } else {
      check.status = 'error';
      check.detail = `HTTP ${res.status}${authHint(res.status)}: ${messageOf(res.body)}`;
    }
    checks.push(check);
  }
  return checks;
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

async function checkSalesforce(config: Config, create: boolean): Promise<{ checks: Check[]; definitions: string[] }> {
  const sf = config.salesforce!;
  const token = process.env.SF_ACCESS_TOKEN;
  const instanceUrl = sf.instanceUrl ?? process.env.SF_INSTANCE_URL;
  if (!token) throw new UsageError('SF_ACCESS_TOKEN is not set: export the Salesforce access token');
  if (!instanceUrl) throw new UsageError('salesforce.instanceUrl is not set: put it in the config file or set SF_INSTANCE_URL');
  const base = `${instanceUrl.replace(/\/+$/, '')}/services/data/v${sf.apiVersion ?? '60.0'}`;
  const checks: Check[] = [];
  const definitions: string[] = [];
  const described = new Map<string, { status: number; body: unknown }>();
  for (const [object, spec] of Object.entries(sf.objects)) {
    const field = spec.externalIdField;
    const check: Check = { object, crmObject: spec.sobject, field, unique: true, status: 'ok' };
    let res = described.get(spec.sobject);
    if (!res) {
      res = await request(`${base}/sobjects/${encodeURIComponent(spec.sobject)}/describe`, token);
      described.set(spec.sobject, res);
    }
    if (res.status !== 200) {
      check.status = 'error';
      check.detail = `describe ${spec.sobject} failed with HTTP ${res.status}${authHint(res.status)}: ${messageOf(res.body)}`;
    } else {
      const fields = (res.body as { fields?: { name: string; externalId?: boolean; unique?: boolean }[] }).fields ?? [];
      const f = fields.find((x) => x.name === field);
      if (!f) check.status = 'missing';
      else if (!f.externalId) check.status = 'not_external_id';
      else if (!f.unique) check.status = 'not_unique';
      if (check.status !== 'ok') {
        check.detail = {
          missing: `field ${spec.sobject}.${field} does not exist`,
          not_external_id: `field ${spec.sobject}.${field} exists but is not marked External ID`,
          not_unique: `field ${spec.sobject}.${field} is an External ID but not Unique`,
        }[check.status as 'missing' | 'not_external_id' | 'not_unique'];
        if (create) definitions.push(salesforceFieldDefinition(spec.sobject, field));
      }
    }
    checks.push(check);
  }
  return { checks, definitions };
}

export async function checkSetupCommand(flags: CheckSetupFlags): Promise<number> {
  const config = await loadConfig(flags.config);
  let checks: Check[];
  let definitions: string[] = [];
  if (config.crm === 'hubspot') checks = await checkHubSpot(config, Boolean(flags.create));
  else ({ checks, definitions } = await checkSalesforce(config, Boolean(flags.create)));
  for (const c of checks) {
    const mark = c.status === 'ok' ? 'ok     ' : c.status === 'created' ? 'created' : 'MISSING';
    process.stdout.write(`${mark}  ${c.object} -> ${c.crmObject}.${c.field}${c.unique ? ' (unique)' : ''}${c.detail ? `: ${c.detail}` : ''}\n`);
  }
  if (definitions.length > 0) {
    process.stdout.write('\nSalesforce fields are created in Setup (Object Manager > Fields & Relationships) or deployed with the Metadata API; this tool does not create them. Definitions:\n\n');
    process.stdout.write(`${definitions.join('\n\n')}\n`);
  }
  const bad = checks.filter((c) => c.status !== 'ok' && c.status !== 'created');
  if (bad.length > 0) {
    process.stderr.write(`crm-upsert: ${bad.length} of ${checks.length} fields are missing or misconfigured\n`);
    return ExitCode.problems;
  }
  process.stdout.write(`all ${checks.length} fields are in place\n`);
  return ExitCode.ok;
}
