import { describe, expect, it } from 'vitest';
import { hubspotAdapter, resolveHubSpotOptions, type HubSpotAdapterOptions } from '../../../adapters/hubspot/index.js';
import { ConfigError } from '../../../src/errors.js';

const objects: HubSpotAdapterOptions['objects'] = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
};

describe('onMissing', () => {
  it("hands a record object's onMissing to the engine's view of it, and leaves it out when not set", () => {
    const adapter = hubspotAdapter({ accessToken: 't', objects: { ...objects, contact: { ...objects.contact, onMissing: 'skip' } as HubSpotAdapterOptions['objects'][string] } });
    expect(adapter.objects.contact).toMatchObject({ kind: 'record', onMissing: 'skip' });
    expect(hubspotAdapter({ accessToken: 't', objects }).objects.contact!.onMissing).toBeUndefined();
  });

  it('refuses onMissing on an activity object, naming it', () => {
    const note = { ...objects.note, onMissing: 'skip' } as unknown as HubSpotAdapterOptions['objects'][string];
    expect(() => resolveHubSpotOptions({ objects: { ...objects, note }, accessToken: 't' }, {})).toThrow(/objects\.note/);
  });
});

describe('resolveHubSpotOptions', () => {
  it('reads the token from HUBSPOT_ACCESS_TOKEN and fills defaults', () => {
    const o = resolveHubSpotOptions({ objects }, { HUBSPOT_ACCESS_TOKEN: 'pat-env' });
    expect(o.accessToken).toBe('pat-env');
    expect(o.basePath).toBe('https://api.hubapi.com');
    expect(typeof o.rateBudget.acquire).toBe('function');
    expect(typeof o.searchRateBudget.acquire).toBe('function');
  });

  it('strips a trailing slash from basePath', () => {
    expect(resolveHubSpotOptions({ objects, accessToken: 't', basePath: 'http://127.0.0.1:4010/' }, {}).basePath).toBe('http://127.0.0.1:4010');
  });

  it('asks for HUBSPOT_ACCESS_TOKEN when there is neither a token nor a client', () => {
    expect(() => resolveHubSpotOptions({ objects }, {})).toThrow(ConfigError);
    expect(() => resolveHubSpotOptions({ objects }, {})).toThrow(/HUBSPOT_ACCESS_TOKEN/);
  });

  it('accepts an injected client without a token', () => {
    const client = { crm: {} } as unknown as HubSpotAdapterOptions['client'];
    expect(resolveHubSpotOptions({ objects, client }, {}).client).toBe(client);
  });

  it.each([
    ['objects.contact.idProperty', { objects: { contact: { kind: 'record', objectType: 'contacts', fields: ['email'] } } }],
    ['objects.note.parents.contact', { objects: { note: { ...objects.note, parents: { contact: -1 } } } }],
    ['basePath', { objects, basePath: 'not a url' }],
    ['rateLimit.points', { objects, rateLimit: { points: 0, durationMs: 1000 } }],
    ['rateBudget', { objects, rateBudget: {} }],
    ['retries', { objects, retries: 3 }],
    ['objects', { objects: {} }],
    ['objects.note.parents.contact', { objects: { note: objects.note } }],
    ['objects.note.fields', { objects: { contact: objects.contact, note: { ...objects.note, fields: ['hs_note_body', 'crm_upsert_key'] } } }],
  ])('names %s when it is invalid', (field, options) => {
    expect(() => resolveHubSpotOptions({ accessToken: 't', ...(options as HubSpotAdapterOptions) }, {})).toThrow(new RegExp(field.replace(/\./g, '\\.')));
  });
});

describe('hubspotAdapter', () => {
  it('exposes the engine view of the objects and its capabilities', () => {
    const adapter = hubspotAdapter({ objects, accessToken: 'pat-x' });
    expect(adapter.name).toBe('hubspot');
    expect(adapter.capabilities).toEqual({ maxBatch: 100, nativeActivityUpsert: false });
    expect(adapter.objects).toEqual({
      // A contact's email is an address with or without a definitions file.
      contact: { kind: 'record', fields: ['email', 'firstname'], definitions: { email: { type: 'email' } } },
      note: { kind: 'activity', fields: ['hs_note_body', 'hs_timestamp'], parents: ['contact'] },
    });
    expect(adapter.apiCalls()).toBe(0);
  });
});
