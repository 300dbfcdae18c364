/**
 * The adapter conformance suite against fakePipedrive (search index lagging 1 s, its default).
 * Pipedrive has no batch write, so the adapter's batch is one record and every record is its own
 * write: `requests()` counts the write requests (creates and updates), which is what the suite's
 * "cut at the maximum batch" measures. Lookups are counted in test/e2e/pipedrive-*.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pipedriveAdapter } from '../../adapters/pipedrive/index.js';
import { adapterConformance, fakePipedrive } from '../../adapters/testing/index.js';

adapterConformance('pipedrive', async () => {
  const fake = fakePipedrive();
  const front = await fake.open('loopback');
  const adapter = pipedriveAdapter({
    apiToken: 'pd-conformance-token-1234',
    basePath: front.url,
    recoveryDelaysMs: [5, 20],
    rateLimit: { points: 80, durationMs: 2_000 },
    objects: {
      contact: { kind: 'record', entity: 'person', idField: 'ai_external_id', fields: ['name', 'email'] },
      note: { kind: 'activity', entity: 'note', fields: ['content'], parents: { contact: 'person_id' } },
    },
  });
  const writes = () => fake.core.log.filter((e) => e.method === 'POST' || e.method === 'PATCH').length;
  return {
    adapter,
    recordObject: 'contact',
    activityObject: 'note',
    recordFields: (n, variant) => ({ name: `P${n}${variant ?? ''}`, email: `p${n}@example.com` }),
    activityFields: (_n, text) => ({ content: text }),
    recordExternalIds: () => fake.records('person').map((r) => String(fake.customValue(r, 'ai_external_id'))),
    activityKeys: () => fake.notes().map((n) => /\[crm-upsert key: ([^\]]+)\]/.exec(n.content)?.[1] ?? ''),
    requests: writes,
    failNextWrite: (kind, target) => fake.failNext(kind, { endpoint: target === 'record' ? 'POST /api/v2/persons' : 'POST /api/v1/notes' }),
    close: () => front.close(),
  };
}, { describe, it, expect, beforeEach, afterEach });
