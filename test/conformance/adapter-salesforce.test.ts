import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { salesforceAdapter } from '../../adapters/salesforce/index.js';
import { adapterConformance, fakeSalesforce } from '../../adapters/testing/index.js';

adapterConformance('salesforce', async () => {
  const fake = fakeSalesforce();
  const server = await fake.listen();
  const adapter = salesforceAdapter({
    instanceUrl: server.instanceUrl,
    accessToken: '00Dconformance!token',
    objects: {
      contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'] },
      task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject', 'Description'], parents: { contact: 'WhoId' } },
    },
  });
  const isWrite = (sobject: string) => (req: { method: string; path: string }) => req.method === 'PATCH' && req.path.includes(`/composite/sobjects/${sobject}/`);
  return {
    adapter,
    recordObject: 'contact',
    activityObject: 'task',
    recordFields: (n, variant) => ({ Email: `p${n}@example.com`, LastName: `P${n}${variant ?? ''}` }),
    activityFields: (_n, text) => ({ Subject: 'Call summary', Description: text }),
    recordExternalIds: () => fake.records('Contact').map((r) => String(r.AI_External_Id__c)),
    activityKeys: () => fake.records('Task').map((r) => String(r.AI_Idempotency_Key__c)),
    requests: () => fake.count(),
    failNextWrite: (kind, target) => fake.failNext(kind, { match: isWrite(target === 'record' ? 'Contact' : 'Task') }),
    close: () => server.close(),
  };
}, { describe, it, expect, beforeEach, afterEach });
