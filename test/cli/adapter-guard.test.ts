import { describe, expect, it } from 'vitest';
import type { BulkLane, CrmAdapter, RecordWrite, WriteResult } from '../../src/adapter.js';
import { guardAdapter } from '../../src/cli/adapter-guard.js';
import { authFix } from '../../src/cli/auth-hint.js';
import { parseConfig } from '../../src/cli/config.js';
import { isInfrastructureFault } from '../../src/cli/exit.js';
import { ConfigError, CrmError, LedgerError } from '../../src/errors.js';

/** An adapter whose every call runs `answer`, counting the calls that reached it. */
function stubAdapter(answer: (writes: RecordWrite[]) => WriteResult[]): CrmAdapter & { calls: number } {
  const stub = {
    name: 'stub',
    capabilities: { maxBatch: 100, nativeActivityUpsert: false },
    objects: {},
    calls: 0,
    upsertRecords: async (_object: string, writes: RecordWrite[]) => {
      stub.calls += 1;
      return answer(writes);
    },
    createActivities: async () => [],
    findActivities: async () => new Map<string, string>(),
    classifyError: (err: unknown) => (err instanceof CrmError ? err : new CrmError(String(err), { vendor: 'stub', kind: 'transient' })),
    apiCalls: () => stub.calls,
  };
  return stub;
}

const write = (i: number): RecordWrite => ({ key: `k${i}`, object: 'contact', externalId: `x${i}`, fields: {} });

describe('guardAdapter', () => {
  it('sends nothing more once a call was refused for auth, and says so once', async () => {
    const refused = new CrmError('HTTP 401', { vendor: 'stub', kind: 'auth', status: 401 });
    const inner = stubAdapter(() => {
      throw refused;
    });
    const trips: string[] = [];
    const guard = guardAdapter(inner, { onTrip: (reason) => trips.push(reason) });

    for (let i = 0; i < 5; i++) await expect(guard.adapter.upsertRecords('contact', [write(i)])).rejects.toBe(refused);

    expect(inner.calls).toBe(1);
    expect(trips).toEqual(['auth']);
    expect(guard.tripped()).toMatchObject({ reason: 'auth', error: refused });
  });

  it('trips on a per-record auth refusal inside a successful response', async () => {
    const inner = stubAdapter((writes) => writes.map(() => ({ ok: false, error: new CrmError('INSUFFICIENT_ACCESS', { vendor: 'stub', kind: 'auth' }) })));
    const guard = guardAdapter(inner);

    await guard.adapter.upsertRecords('contact', [write(1)]);
    await expect(guard.adapter.upsertRecords('contact', [write(2)])).rejects.toMatchObject({ kind: 'auth' });

    expect(inner.calls).toBe(1);
  });

  it('trips as unreachable after a whole retry budget of unanswered calls in a row, and not before', async () => {
    let answering = false;
    const inner = stubAdapter((writes) => {
      if (answering) return writes.map(() => ({ ok: true, recordId: '1', created: true }));
      throw new CrmError('connect ECONNREFUSED', { vendor: 'stub', kind: 'transient' });
    });
    const guard = guardAdapter(inner, { unreachableAfter: 3 });

    for (let i = 0; i < 2; i++) await expect(guard.adapter.upsertRecords('contact', [write(i)])).rejects.toThrow();
    answering = true;
    await guard.adapter.upsertRecords('contact', [write(9)]);
    answering = false;
    for (let i = 0; i < 3; i++) await expect(guard.adapter.upsertRecords('contact', [write(i)])).rejects.toThrow();
    expect(guard.tripped()?.reason).toBe('unreachable');
    const calls = inner.calls;

    const refused = await guard.adapter.upsertRecords('contact', [write(7)]).then(() => undefined, (err: unknown) => err as CrmError);
    expect(inner.calls).toBe(calls);
    // Not retryable: the engine must not spend a backoff schedule on a batch that will not be sent.
    expect(refused).toBeInstanceOf(CrmError);
    expect(refused!.message).toContain('not sent, the CRM is unreachable');
    expect([refused!.retryable, refused!.ambiguous]).toEqual([false, false]);
  });

  it('does not count an HTTP answer (5xx) as unreachable', async () => {
    const inner = stubAdapter(() => {
      throw new CrmError('HTTP 503', { vendor: 'stub', kind: 'transient', status: 503 });
    });
    const guard = guardAdapter(inner, { unreachableAfter: 2 });

    for (let i = 0; i < 4; i++) await expect(guard.adapter.upsertRecords('contact', [write(i)])).rejects.toThrow();

    expect(guard.tripped()).toBeUndefined();
  });

  it('guards the bulk lane too: a job refused for auth trips the breaker and no later job is sent', async () => {
    const refused = new CrmError('HTTP 401 INVALID_SESSION_ID', { vendor: 'stub', kind: 'auth', status: 401 });
    let jobs = 0;
    const lane: BulkLane = {
      minRecords: 2_000,
      accepts: () => true,
      upsert: async () => {
        jobs += 1;
        throw refused;
      },
      follow: async () => {
        jobs += 1;
        return new Map();
      },
      acceptsActivities: (object) => object === 'task',
      upsertActivities: async () => {
        jobs += 1;
        return new Map();
      },
    };
    const trips: string[] = [];
    const guard = guardAdapter({ ...stubAdapter(() => []), bulkLane: lane }, { onTrip: (reason) => trips.push(reason) });
    const hooks = { onJob: async () => undefined, onUploaded: async () => undefined };

    await expect(guard.adapter.bulkLane!.upsert('contact', [write(1)], hooks)).rejects.toBe(refused);
    await expect(guard.adapter.bulkLane!.upsert('contact', [write(2)], hooks)).rejects.toBe(refused);
    await expect(guard.adapter.bulkLane!.follow('contact', { id: '750x', uploaded: true })).rejects.toBe(refused);
    // Tasks in a job of their own pass through the same breaker.
    expect(guard.adapter.bulkLane!.acceptsActivities!('task')).toBe(true);
    expect(guard.adapter.bulkLane!.acceptsActivities!('note')).toBe(false);
    await expect(guard.adapter.bulkLane!.upsertActivities!('task', [], hooks)).rejects.toBe(refused);
    expect(jobs).toBe(1);
    expect(trips).toEqual(['auth']);
    expect(guard.adapter.bulkLane!.minRecords).toBe(2_000);
  });

  it('does not count what a bulk job\'s ledger hooks throw as the CRM unreachable', async () => {
    const ledgerDown = new LedgerError('sqlite ledger note failed');
    const lane: BulkLane = {
      minRecords: 1,
      accepts: () => true,
      upsert: async (_object, writes, hooks) => {
        await hooks.onJob({ id: '750x', uploaded: false }, writes.map((w) => w.externalId));
        return new Map();
      },
      follow: async () => new Map(),
    };
    const guard = guardAdapter({ ...stubAdapter(() => []), bulkLane: lane }, { unreachableAfter: 1 });
    const hooks = { onJob: async () => Promise.reject(ledgerDown), onUploaded: async () => undefined };

    await expect(guard.adapter.bulkLane!.upsert('contact', [write(1)], hooks)).rejects.toBe(ledgerDown);
    expect(guard.tripped()).toBeUndefined();
    await expect(guard.adapter.bulkLane!.follow('contact', { id: '750x', uploaded: true })).resolves.toEqual(new Map());
  });
});

describe('authFix', () => {
  const hubspot = parseConfig({
    crm: 'hubspot',
    hubspot: {
      objects: {
        contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'] },
        company: { kind: 'record', objectType: 'companies', idProperty: 'ai_company_id', fields: ['name'] },
        note: { kind: 'activity', objectType: 'notes', keyProperty: 'k', fields: ['hs_note_body'], parents: { contact: 202 } },
      },
    },
  });
  const salesforce = parseConfig({
    crm: 'salesforce',
    salesforce: {
      objects: {
        contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email'] },
        task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Key__c', fields: ['Subject'], parents: { contact: 'WhoId' } },
      },
    },
  });

  it('names the token variable for a 401', () => {
    expect(authFix(hubspot, new CrmError('HTTP 401', { vendor: 'hubspot', kind: 'auth', status: 401 }))).toMatch(/^the token in HUBSPOT_ACCESS_TOKEN was refused by HubSpot \(HTTP 401\)/);
    expect(authFix(salesforce, new CrmError('INVALID_SESSION_ID', { vendor: 'salesforce', kind: 'auth', status: 401 }))).toMatch(/^the token in SF_ACCESS_TOKEN was refused by Salesforce/);
  });

  it('lists the HubSpot scopes of the configured object types for a 403, and no others', () => {
    const message = authFix(hubspot, new CrmError('HTTP 403 MISSING_SCOPES', { vendor: 'hubspot', kind: 'auth', status: 403 }));

    expect(message).toContain('HUBSPOT_ACCESS_TOKEN lacks permissions');
    expect(message).toContain('crm.objects.contacts.read, crm.objects.contacts.write, crm.objects.companies.read, crm.objects.companies.write');
    expect(message).not.toContain('deals');
  });

  it('lists the Salesforce object permissions of the configured sObjects for a 403', () => {
    const message = authFix(salesforce, new CrmError('INSUFFICIENT_ACCESS', { vendor: 'salesforce', kind: 'auth', status: 403, vendorCode: 'INSUFFICIENT_ACCESS' }));

    expect(message).toContain('SF_ACCESS_TOKEN lacks permissions');
    expect(message).toContain('Read, Create and Edit on Contact');
    expect(message).toContain('Read, Create and Edit on Task');
    expect(message).toContain('API Enabled');
  });
});

describe('isInfrastructureFault', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

  it.each([
    ['a LedgerError', new LedgerError('redis ledger claim failed'), true],
    ['a driver connection error down the cause chain', new Error('query failed', { cause: refused }), true],
    ['ioredis giving up on a request', Object.assign(new Error('Reached the max retries per request limit (which is 2).'), { name: 'MaxRetriesPerRequestError' }), true],
    ['a ConfigError', new ConfigError('bad URL'), false],
    ['a plain bug', new TypeError('x is undefined'), false],
  ])('classifies %s', (_name, err, expected) => {
    expect(isInfrastructureFault(err)).toBe(expected);
  });
});
