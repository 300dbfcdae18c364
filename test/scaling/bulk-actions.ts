/** The backfill bulk-kill.test.ts runs: 500 accounts, then 10,000 contacts each linked to one. */
import type { SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';

export const ACCOUNTS = 500;
export const CONTACTS = 10_000;

export const bulkKillObjects: SalesforceAdapterOptions['objects'] = {
  company: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'], links: { company: 'AccountId' } },
};

const occurredAt = '2026-12-01T09:00:00.000Z';

export const bulkBackfill = () => [
  ...Array.from({ length: ACCOUNTS }, (_, i) => ({ source: 'backfill', eventId: `co-${i}`, occurredAt, op: 'upsert', object: 'company', externalId: `a-${i}`, fields: { Name: `Account ${i}` } })),
  ...Array.from({ length: CONTACTS }, (_, i) => ({
    source: 'backfill', eventId: `ct-${i}`, occurredAt, op: 'upsert', object: 'contact', externalId: `c-${i}`,
    fields: { LastName: `Last ${i}`, Email: `c${i}@example.com` }, links: [{ object: 'company', externalId: `a-${i % ACCOUNTS}` }],
  })),
];
