/**
 * A memory CRM configured for reads (readFields, lookupBy, links, field definitions) and seeded
 * straight through its adapter with fields the config neither writes nor reads: what an MCP
 * read must never answer. Shared by the in-process tests and the stdio server they spawn.
 */
import type { ObjectSpec } from '../../src/adapter.js';
import { createSync, openLedger, type Sync } from '../../src/index.js';
import { memoryCrm, type MemoryCrm } from '../helpers/memory-crm.js';

export const INDUSTRIES = Array.from({ length: 30 }, (_, i) => `industry_${String(i + 1).padStart(2, '0')}`);

export const READ_OBJECTS: Record<string, ObjectSpec> = {
  contact: {
    kind: 'record',
    fields: ['email', 'firstname', 'lastname', 'lifecyclestage'],
    readFields: ['hs_lead_status'],
    lookupBy: ['email'],
    definitions: {
      email: { type: 'email' },
      lifecyclestage: { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }, 'subscriber'] },
      firstname: { type: 'string', maxLength: 40 },
    },
  },
  company: {
    kind: 'record',
    fields: ['name', 'domain', 'industry'],
    lookupBy: ['domain'],
    definitions: { industry: { type: 'enumeration', options: INDUSTRIES } },
  },
  deal: { kind: 'record', fields: ['dealname', 'amount'], readFields: ['hubspot_owner_id'], links: ['company'] },
  note: { kind: 'activity', fields: ['body', 'timestamp'], parents: ['contact'] },
};

export interface Seeded {
  crm: MemoryCrm;
  sync: Sync;
  ids: { contact: string; twinA: string; deal: string; company: string };
}

const written = async (crm: MemoryCrm, object: string, externalId: string, fields: Record<string, string | number>, links?: { object: string; externalId: string }[]) => {
  const [result] = await crm.adapter.upsertRecords(object, [{ key: `seed-${externalId}`, object, externalId, fields, ...(links ? { links } : {}) }]);
  if (!result?.ok) throw new Error(`seeding ${object} ${externalId} failed`);
  return result.recordId;
};

/** The CRM as people left it: a contact, two contacts sharing one email, a company and a deal linked to it. */
export async function seededCrm(): Promise<Seeded> {
  const crm = memoryCrm({ objects: READ_OBJECTS });
  const contact = await written(crm, 'contact', 'c-1', { email: 'ana@example.com', firstname: 'Ana', lifecyclestage: 'lead', hs_lead_status: 'OPEN', internal_score: 97 });
  const twinA = await written(crm, 'contact', 'c-twin-a', { email: 'shared@example.com', firstname: 'Bo' });
  await written(crm, 'contact', 'c-twin-b', { email: 'shared@example.com', firstname: 'Cy' });
  const company = await written(crm, 'company', 'co-1', { name: 'Acme', domain: 'acme.example', industry: 'industry_03', board_notes: 'confidential' });
  const deal = await written(crm, 'deal', 'd-1', { dealname: 'Acme renewal', amount: 12000, hubspot_owner_id: '777', secret_margin: 0.4 }, [{ object: 'company', externalId: 'co-1' }]);
  crm.calls.upsert = 0;
  const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:'), retry: { retries: 0 } });
  return { crm, sync, ids: { contact, twinA, deal, company } };
}
