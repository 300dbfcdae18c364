/**
 * What to fix when the CRM refuses the token: which environment variable holds it and, for a
 * 403, the scopes (HubSpot) or object permissions (Salesforce) the configured objects need.
 */
import type { CrmError } from '../errors.js';
import type { Config } from './config.js';

/** HubSpot scope family per object type; engagements (notes, tasks, ...) use the contact scopes. */
const HUBSPOT_SCOPE_OF: Record<string, string> = {
  contacts: 'contacts', companies: 'companies', deals: 'deals', notes: 'contacts', tasks: 'contacts',
  calls: 'contacts', emails: 'contacts', meetings: 'contacts', line_items: 'line_items', quotes: 'quotes',
};

const unique = <T>(xs: T[]) => [...new Set(xs)];

function hubspotScopes(config: Config): string[] {
  const scopes: string[] = [];
  for (const spec of Object.values(config.hubspot!.objects)) {
    const type = spec.objectType;
    if (type === 'tickets') scopes.push('tickets');
    else {
      const family = HUBSPOT_SCOPE_OF[type] ?? (/^(p_|2-)/.test(type) ? 'custom' : type);
      scopes.push(`crm.objects.${family}.read`, `crm.objects.${family}.write`);
    }
  }
  return unique(scopes);
}

function salesforcePermissions(config: Config): string[] {
  const sf = config.salesforce!;
  const perms: string[] = [];
  for (const spec of Object.values(sf.objects)) {
    perms.push(`Read, Create and Edit on ${spec.sobject} (and Edit on its field ${spec.externalIdField})`);
    if (spec.kind === 'activity') for (const parent of Object.keys(spec.parents)) {
      const p = sf.objects[parent];
      if (p) perms.push(`Read on ${p.sobject}`);
    }
  }
  return unique(perms);
}

const VENDORS: Record<Config['crm'], { label: string; tokenEnv: string; forbidden: (config: Config) => string }> = {
  hubspot: {
    label: 'HubSpot',
    tokenEnv: 'HUBSPOT_ACCESS_TOKEN',
    forbidden: (config) => `the private app needs the scopes ${hubspotScopes(config).join(', ')} for the configured objects`,
  },
  salesforce: {
    label: 'Salesforce',
    tokenEnv: 'SF_ACCESS_TOKEN',
    forbidden: (config) => `the user needs "API Enabled" and the object permissions ${salesforcePermissions(config).join('; ')}`,
  },
};

/** One line: what was refused and how to fix it. */
export function authFix(config: Config, error: CrmError): string {
  const v = VENDORS[config.crm];
  // The adapters append a generic hint ("Check that…", "Hint: …"); ours below is specific to this config.
  const said = error.message.replace(/^\[crm-upsert\] \[[^\]]+\] /, '').split(/\.\s+(?:Check|Hint)\b/)[0]!.slice(0, 400);
  const tokenRefused = error.status === 401 || /^INVALID_(SESSION_ID|AUTH_HEADER)$/.test(error.vendorCode ?? '');
  if (!tokenRefused) {
    return `${v.label} refused access${error.status ? ` (HTTP ${error.status})` : ''}: the token in ${v.tokenEnv} lacks permissions; ${v.forbidden(config)}. ${v.label} said: ${said}`;
  }
  return `the token in ${v.tokenEnv} was refused by ${v.label}${error.status ? ` (HTTP ${error.status})` : ''}: set a current access token. ${v.label} said: ${said}`;
}
