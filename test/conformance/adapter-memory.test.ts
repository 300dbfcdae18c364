import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adapterConformance } from '../../adapters/testing/index.js';
import { memoryCrm } from '../helpers/memory-crm.js';

const faultOf = { lost_response: 'lost_response', reset: 'reset', server_error: 'server_error', rate_limit: 'rate_limited' } as const;

adapterConformance('memory (test helper)', async () => {
  const crm = memoryCrm({ maxBatch: 100 });
  return {
    adapter: crm.adapter,
    recordObject: 'contact',
    activityObject: 'note',
    recordFields: (n, variant) => ({ email: `p${n}@example.com`, firstname: `P${n}${variant ?? ''}` }),
    activityFields: (_n, text) => ({ body: text }),
    recordExternalIds: () => crm.records('contact').map((r) => r.externalId),
    activityKeys: () => crm.activities('note').map((a) => a.key),
    requests: () => crm.adapter.apiCalls(),
    failNextWrite: (kind, target) => crm.failNext(faultOf[kind], { op: target === 'record' ? 'upsert' : 'create' }),
    close: async () => undefined,
  };
}, { describe, it, expect, beforeEach, afterEach });
