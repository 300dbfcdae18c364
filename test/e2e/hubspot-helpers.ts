/** Shared wiring for the HubSpot e2e tests: the real @hubspot/api-client against fakeHubSpot, over both fronts. */
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import type { CrmAdapter } from '../../src/adapter.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { fakeHubSpot, type FakeHubSpot, type FakeHubSpotOptions } from '../../adapters/testing/index.js';

export const TOKEN = 'pat-na1-e2e-token-5f3c9a1b';

export const objects: HubSpotAdapterOptions['objects'] = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname', 'lifecyclestage', 'favorite_color'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
  task: { kind: 'activity', objectType: 'tasks', keyProperty: 'crm_upsert_key', fields: ['hs_task_subject', 'hs_timestamp'], parents: { contact: 204 } },
};

export interface Harness {
  fake: FakeHubSpot;
  adapter: CrmAdapter;
  basePath: string;
  stop(): Promise<void>;
}

export type Front = 'nock' | 'loopback';
export const fronts: Front[] = ['nock', 'loopback'];

/** A fake HubSpot on `front` and a hubspotAdapter (real SDK client) pointed at it. */
export async function harness(front: Front, fakeOptions: FakeHubSpotOptions = {}, adapterOptions: Partial<HubSpotAdapterOptions> = {}): Promise<Harness> {
  const fake = fakeHubSpot({ token: TOKEN, ...fakeOptions });
  const { url: basePath, stop } = await fake.open(front);
  const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects, rateBudget: unlimitedRateBudget, ...adapterOptions });
  return { fake, adapter, basePath, stop };
}
