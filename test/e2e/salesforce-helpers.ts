/** Shared wiring for the Salesforce e2e tests: the real jsforce 3.10.16 against fakeSalesforce, over both fronts. */
import { salesforceAdapter, type SalesforceAdapter, type SalesforceAdapterOptions } from '../../adapters/salesforce/index.js';
import type { Outcome } from '../../src/index.js';
import { fakeSalesforce, type FakeSalesforce, type FakeSalesforceOptions } from '../../adapters/testing/index.js';

export const TOKEN = '00D5g00000E2Etst!AQ4AQE2E.token.7c1d9e';

export const objects: SalesforceAdapterOptions['objects'] = {
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName'] },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description', 'ActivityDate', 'Status'], parents: { contact: 'WhoId' } },
};

export type Front = 'nock' | 'loopback';
export const fronts: Front[] = ['nock', 'loopback'];

export interface Harness {
  fake: FakeSalesforce;
  adapter: SalesforceAdapter;
  instanceUrl: string;
  stop(): Promise<void>;
}

let origins = 0;

/** A fake org on `front` and a salesforceAdapter (real jsforce Connection) pointed at it. */
export async function harness(front: Front, fakeOptions: FakeSalesforceOptions = {}, adapterOptions: Partial<SalesforceAdapterOptions> = {}): Promise<Harness> {
  const fake = fakeSalesforce({ accessToken: TOKEN, ...fakeOptions });
  const { url: instanceUrl, stop } = await fake.open(front, `https://e2e${++origins}.my.salesforce.com`);
  const adapter = salesforceAdapter({ instanceUrl, accessToken: TOKEN, objects, ...adapterOptions });
  return { fake, adapter, instanceUrl, stop };
}

export const statuses = (outcomes: Outcome[]) => {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
};
