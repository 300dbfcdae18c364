/**
 * `crm-upsert check-setup` for Salesforce: verify through the describe API what the guarantees
 * rely on. Salesforce fields cannot be created through these calls: `--create` prints the
 * Metadata API definition of each missing one.
 */
import { driftFailed, driftFindings } from '../kit/setup-drift.js';
import { messageOf, refuseAuth, setupRequest, type Reply } from '../kit/setup-http.js';
import type { SetupFinding, SetupReport } from '../kit/vendor-cli.js';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { ConfigError } from '../../src/errors.js';
import { SALESFORCE_INSTANCE_ENV, SALESFORCE_TOKEN_ENV, type SalesforceConfig } from './salesforce-config.js';
import type { DescribeResult } from './salesforce-fields.js';

interface SalesforceField {
  name: string;
  type?: string;
  externalId?: boolean;
  unique?: boolean;
  caseSensitive?: boolean;
  createable?: boolean;
  updateable?: boolean;
  referenceTo?: string[];
  picklistValues?: { value: string; active?: boolean }[];
  restrictedPicklist?: boolean;
}

/**
 * GET /sobjects/{sObject}/describe once per sObject: every external-id field must be External ID,
 * Unique and case-sensitive, every allowlisted and parent lookup field must exist and be writable,
 * every `lookupBy` field exist (a warning when it is not Unique) and every `readFields` field exist.
 * Fields are made in Setup or with the Metadata API, so `create` returns their definitions.
 * `fieldDrift` pulls the definitions from the same describes.
 */
export async function checkSalesforceSetup(sf: SalesforceConfig, env: NodeJS.ProcessEnv, create: boolean): Promise<SetupReport> {
  const token = env[SALESFORCE_TOKEN_ENV];
  const instanceUrl = sf.instanceUrl ?? env[SALESFORCE_INSTANCE_ENV];
  if (!token) throw new ConfigError('SF_ACCESS_TOKEN is not set: export the Salesforce access token');
  if (!instanceUrl) throw new ConfigError('salesforce.instanceUrl is not set: put it in the config file or set SF_INSTANCE_URL');
  const base = `${instanceUrl.replace(/\/+$/, '')}/services/data/v${sf.apiVersion ?? '60.0'}`;
  const findings: SetupFinding[] = [];
  const definitions: string[] = [];
  const described = new Map<string, Reply>();
  for (const [object, spec] of Object.entries(sf.objects)) {
    let reply = described.get(spec.sobject);
    if (!reply) {
      reply = await setupRequest(`${base}/sobjects/${encodeURIComponent(spec.sobject)}/describe`, token);
      refuseAuth(reply, SALESFORCE_TOKEN_ENV, `"API Enabled" and read access to ${spec.sobject}`);
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
    // An activity's parent fields are allowlisted fields that must also be lookups to each parent's sObject.
    const parentsOn = (field: string) => (spec.kind === 'activity' ? lookupUses(sf, object, spec.sobject, spec.parents, 'parents').filter((u) => u.field === field) : []);
    findings.push(...[...new Set(written)].map((field) => salesforceField(object, spec.sobject, field, byName.get(field), parentsOn(field))));
    if (spec.kind === 'record') {
      findings.push(...lookupUses(sf, object, spec.sobject, spec.links ?? {}, 'links').map((u) => salesforceLookup(u, byName.get(u.field))));
      findings.push(...(spec.lookupBy ?? []).map((field) => salesforceLookupBy(object, spec.sobject, field, byName.get(field))));
      findings.push(...(spec.readFields ?? []).map((field) => salesforceReadField(object, spec.sobject, field, byName.get(field))));
    }
  }
  const fieldDrift = (file: FieldDefinitionsFile, { fix }: { fix: string }) => salesforceDrift(sf, file, fix, described);
  if (definitions.length === 0) return { findings, fieldDrift };
  return {
    findings,
    appendix: `Salesforce fields are created in Setup (Object Manager > Fields & Relationships) or deployed with the Metadata API; this tool does not create them. Definitions:\n\n${definitions.join('\n\n')}`,
    fieldDrift,
  };
}

/**
 * `schema pull`'s own translation (pullSalesforceFields) run on the describes the checks read, 0
 * requests more; an sObject whose describe failed is left out (its finding says why). An inactive
 * picklist value (`active: false`, which `schema pull` leaves out) is reported apart from a
 * removed one: a restricted picklist refuses it, an unrestricted one stores it.
 */
async function salesforceDrift(sf: SalesforceConfig, file: FieldDefinitionsFile, fix: string, described: ReadonlyMap<string, Reply>): Promise<SetupFinding[]> {
  const { pullSalesforceFields } = await import('./salesforce-fields.js');
  const readable = Object.fromEntries(Object.entries(sf.objects).filter(([, spec]) => described.get(spec.sobject)?.status === 200));
  const describe = async (sobject: string) => {
    const body = described.get(sobject)!.body;
    if (typeof body !== 'object' || body === null) throw new Error(`describe ${sobject} answered something that is not JSON: ${messageOf(body)}`);
    return body as DescribeResult;
  };
  let pulled: FieldDefinitionsFile;
  try {
    pulled = await pullSalesforceFields({ ...sf, objects: readable }, describe, { now: new Date(), apiVersion: sf.apiVersion ?? '60.0' });
  } catch (err) {
    return [driftFailed(err)];
  }
  const inactive: Record<string, Record<string, { values: string[]; refused: boolean }>> = {};
  for (const [object, spec] of Object.entries(readable)) {
    for (const f of ((described.get(spec.sobject)!.body as { fields?: SalesforceField[] }).fields ?? [])) {
      const off = spec.fields.includes(f.name) ? (f.picklistValues ?? []).filter((p) => p.active === false).map((p) => p.value) : [];
      if (off.length > 0) (inactive[object] ??= {})[f.name] = { values: off, refused: f.restrictedPicklist === true };
    }
  }
  const allowlist = Object.fromEntries(Object.entries(readable).map(([object, spec]) => [object, spec.fields]));
  return driftFindings(file, pulled, { allowlist, inactive, fix, target: (object, field) => `${sf.objects[object]!.sobject}.${field}` });
}

/**
 * A `lookupBy` field: a read queries it (`WHERE field IN (...)`), so it need not be unique to work,
 * but only a Unique field names one record per value. Contact Email is not Unique in a standard
 * org: a value held by several records is answered as not found, with `matches`, so a warning.
 */
function salesforceLookupBy(object: string, sobject: string, field: string, f: SalesforceField | undefined): SetupFinding {
  const finding: SetupFinding = { object, target: `${sobject}.${field}`, role: '(lookupBy: unique)', status: 'ok' };
  if (!f) {
    finding.status = 'missing';
    finding.detail = `field ${sobject}.${field} does not exist (or this user cannot see it), so no read can match on it`;
    finding.fix = `remove it from objects.${object}.lookupBy, or give the integration user read access to it`;
  } else if (f.unique !== true) {
    finding.status = 'warning';
    finding.detail = `${sobject}.${field} is not Unique: a read by it may match several records, and then answers that value as not found with \`matches\` (how many)`;
    finding.fix = `read by a Unique field (tick Unique on a custom one in Setup), or expect \`matches\` for shared values`;
  }
  return finding;
}

/** A `readFields` field only has to be visible to the user: a read answers it, nothing writes it. */
function salesforceReadField(object: string, sobject: string, field: string, f: SalesforceField | undefined): SetupFinding {
  const finding: SetupFinding = { object, target: `${sobject}.${field}`, role: '(readFields)', status: 'ok' };
  if (!f) {
    finding.status = 'missing';
    finding.detail = `field ${sobject}.${field} does not exist (or this user cannot see it), so a read cannot answer it`;
    finding.fix = `remove it from objects.${object}.readFields, or give the integration user read access to it (field-level security)`;
  }
  return finding;
}

function salesforceKey(object: string, sobject: string, field: string, f: SalesforceField | undefined, create: boolean): SetupFinding {
  const finding: SetupFinding = { object, target: `${sobject}.${field}`, role: '(External ID, Unique, case-sensitive)', status: 'ok' };
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

function salesforceField(object: string, sobject: string, field: string, f: SalesforceField | undefined, lookups: readonly LookupUse[] = []): SetupFinding {
  const finding: SetupFinding = { object, target: `${sobject}.${field}`, role: '(allowlisted)', status: 'ok' };
  const kind = f ? lookupProblems(lookups, f) : [];
  if (kind.length > 0) {
    finding.status = 'problem';
    finding.detail = `${sobject}.${field} ${kind.join(', ')}`;
    finding.fix = `set ${lookups.map((u) => `objects.${object}.parents.${u.to}`).join(' and ')} to the lookup field from ${sobject} to ${[...new Set(lookups.map((u) => u.toSobject))].join(' / ')}, or remove them`;
    return finding;
  }
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

interface LookupUse {
  object: string;
  sobject: string;
  field: string;
  /** The linked (or parent) logical object and its sObject. */
  to: string;
  toSobject: string;
  map: 'links' | 'parents';
}

/** The lookups a record's `links` (or an activity's `parents`) map sets, one per configured record object. */
function lookupUses(sf: SalesforceConfig, object: string, sobject: string, map: Readonly<Record<string, string>>, kind: LookupUse['map']): LookupUse[] {
  return Object.entries(map).flatMap(([to, field]) => {
    const target = sf.objects[to];
    return target?.kind === 'record' ? [{ object, sobject, field, to, toSobject: target.sobject, map: kind }] : [];
  });
}

/** Why an existing field cannot hold these references: not a lookup, or a lookup to other sObjects. */
function lookupProblems(uses: readonly LookupUse[], f: SalesforceField): string[] {
  if (uses.length === 0) return [];
  if (f.type !== 'reference') return [`is not a lookup (type ${f.type ?? 'unknown'}, not reference)`];
  const missing = [...new Set(uses.map((u) => u.toSobject))].filter((t) => !(f.referenceTo ?? []).includes(t));
  return missing.length > 0 ? [`does not point at ${missing.join(', ')} (it points at ${(f.referenceTo ?? []).join(', ') || 'nothing'})`] : [];
}

/**
 * A record's link field: it must exist, be a lookup that may hold the linked record's sObject, and
 * be createable and updateable (the link is set on create and set again on update).
 */
function salesforceLookup(u: LookupUse, f: SalesforceField | undefined): SetupFinding {
  const finding: SetupFinding = { object: u.object, target: `${u.sobject}.${u.field}`, role: `(lookup to ${u.to}: ${u.toSobject})`, status: 'ok' };
  const remove = `or remove ${u.to} from objects.${u.object}.links`;
  if (!f) {
    finding.status = 'missing';
    finding.detail = `field ${u.sobject}.${u.field} does not exist (or this user cannot see it), so every ${u.object} linked to ${u.to} fails with INVALID_FIELD`;
    finding.fix = `set objects.${u.object}.links.${u.to} to the lookup field from ${u.sobject} to ${u.toSobject}, give the integration user access to it, ${remove}`;
    return finding;
  }
  const wrong = lookupProblems([u], f);
  if (wrong.length > 0) {
    finding.status = 'problem';
    finding.detail = `${u.sobject}.${u.field} ${wrong.join(', ')}`;
    finding.fix = `set objects.${u.object}.links.${u.to} to the lookup field from ${u.sobject} to ${u.toSobject}, ${remove}`;
  } else if (f.createable === false || f.updateable === false) {
    finding.status = 'problem';
    finding.detail = `${u.sobject}.${u.field} is read-only for this user (cannot ${[f.createable === false && 'create', f.updateable === false && 'update'].filter(Boolean).join(' or ')} it)`;
    finding.fix = `give the integration user Edit access to ${u.sobject}.${u.field} (field-level security), ${remove}`;
  }
  return finding;
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
