import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { adapterConformance, fakeHubSpot } from '../../adapters/testing/index.js';

adapterConformance('hubspot', async () => {
  const fake = fakeHubSpot();
  const server = await fake.listen();
  const adapter = hubspotAdapter({
    accessToken: 'pat-conformance-token',
    basePath: server.basePath,
    objects: {
      contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'] },
      note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
    },
  });
  return {
    adapter,
    recordObject: 'contact',
    activityObject: 'note',
    recordFields: (n, variant) => ({ email: `p${n}@example.com`, firstname: `P${n}${variant ?? ''}` }),
    activityFields: (_n, text) => ({ hs_note_body: text, hs_timestamp: '2026-11-29T10:00:00Z' }),
    recordExternalIds: () => fake.records('contacts').map((r) => r.properties.ai_external_id!),
    activityKeys: () => fake.records('notes').map((r) => r.properties.crm_upsert_key!),
    requests: () => fake.count(),
    failNextWrite: (kind, target) => fake.failNext(kind, { endpoint: target === 'record' ? 'batch/upsert' : 'notes/batch/create' }),
    close: () => server.close(),
  };
}, { describe, it, expect, beforeEach, afterEach });
