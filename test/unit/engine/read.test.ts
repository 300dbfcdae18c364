import { describe, expect, it } from 'vitest';
import type { ObjectSpec } from '../../../src/adapter.js';
import { createSync } from '../../../src/engine/index.js';
import { ConfigError, CrmError, ValidationError } from '../../../src/errors.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { LedgerBackend } from '../../../src/ledger/types.js';
import { memoryCrm, type MemoryCrmOptions } from '../../helpers/memory-crm.js';

const objects: Record<string, ObjectSpec> = {
  contact: { kind: 'record', fields: ['email', 'firstname'], readFields: ['createdate'], lookupBy: ['email'] },
  company: { kind: 'record', fields: ['name'] },
  deal: { kind: 'record', fields: ['dealname'], readFields: ['owner'], links: ['company'] },
  note: { kind: 'activity', fields: ['body'], parents: ['contact'] },
};

/** A ledger that counts every call made to it. */
function countingLedger(): { ledger: LedgerBackend; calls: string[] } {
  const calls: string[] = [];
  const inner = memoryLedger();
  const ledger = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ledger, calls };
}

function setup(crmOptions: MemoryCrmOptions = {}) {
  const crm = memoryCrm({ objects, ...crmOptions });
  const { ledger, calls } = countingLedger();
  const sleeps: number[] = [];
  const sync = createSync({
    adapter: crm.adapter, ledger, sleep: async (ms) => void sleeps.push(ms), retry: { minTimeoutMs: 1, maxTimeoutMs: 2 },
  });
  return { crm, sync, ledgerCalls: calls, sleeps };
}

const upsert = (object: string, externalId: string, fields: Record<string, string>, links?: { object: string; externalId: string }[]) => ({
  source: 'test', eventId: `${object}-${externalId}`, occurredAt: '2026-12-01T10:00:00Z', op: 'upsert', object, externalId, fields, ...(links ? { links } : {}),
});

describe('sync.read', () => {
  it('answers each id in the order asked, found or not, in one request per group', async () => {
    const { crm, sync } = setup({ maxRead: 2 });
    await sync.applyMany([upsert('contact', 'c1', { email: 'a@x.io', firstname: 'Ann' }), upsert('contact', 'c3', { email: 'c@x.io', firstname: 'Cy' })]);
    const before = crm.calls.read;
    const answers = await sync.read('contact', ['c3', 'c2', 'c1', 'c3']);
    expect(answers).toEqual([
      { id: 'c3', found: true, recordId: expect.any(String), externalId: 'c3', fields: { email: 'c@x.io', firstname: 'Cy', createdate: null } },
      { id: 'c2', found: false },
      { id: 'c1', found: true, recordId: expect.any(String), externalId: 'c1', fields: { email: 'a@x.io', firstname: 'Ann', createdate: null } },
      { id: 'c3', found: true, recordId: expect.any(String), externalId: 'c3', fields: { email: 'c@x.io', firstname: 'Cy', createdate: null } },
    ]);
    // Three distinct ids, two per request.
    expect(crm.calls.read - before).toBe(2);
  });

  it('never answers a field off the allowlist and readFields, whatever the CRM holds', async () => {
    const { sync } = setup();
    await sync.apply(upsert('deal', 'd1', { dealname: 'Big' }));
    // The CRM holds more than the config names (set behind the engine's back, as another integration would).
    const crm = sync.adapter as unknown as { readRecords: (...a: unknown[]) => Promise<unknown> };
    const original = crm.readRecords.bind(crm);
    crm.readRecords = async (...a: unknown[]) => {
      const results = (await original(...a)) as { found: boolean; fields?: Record<string, unknown> }[];
      return results.map((r) => (r.found ? { ...r, fields: { ...r.fields, owner: 'u-7', secret_score: 99, hs_object_id: '1' } } : r));
    };
    const [answer] = await sync.read('deal', ['d1']);
    expect(answer).toMatchObject({ found: true, fields: { dealname: 'Big', owner: 'u-7' } });
    expect(Object.keys((answer as { fields: object }).fields).sort()).toEqual(['dealname', 'owner']);
    const [narrow] = await sync.read('deal', ['d1'], { fields: ['owner'] });
    expect((narrow as { fields: object }).fields).toEqual({ owner: 'u-7' });
  });

  it('answers links only when asked, to the objects the config links to', async () => {
    const { sync } = setup();
    await sync.applyMany([upsert('company', 'acme', { name: 'Acme' }), upsert('deal', 'd1', { dealname: 'Big' }, [{ object: 'company', externalId: 'acme' }])]);
    const [plain] = await sync.read('deal', ['d1']);
    expect(plain).not.toHaveProperty('links');
    const [linked] = await sync.read('deal', ['d1'], { links: true });
    expect(linked).toMatchObject({ found: true, links: [{ object: 'company', recordId: expect.any(String), externalId: 'acme' }] });
  });

  it('reads by a lookupBy field, and answers several matches as not found with their count', async () => {
    const { sync } = setup();
    await sync.applyMany([upsert('contact', 'c1', { email: 'a@x.io' }), upsert('contact', 'c2', { email: 'dup@x.io' }), upsert('contact', 'c3', { email: 'dup@x.io' })]);
    const answers = await sync.read('contact', ['a@x.io', 'dup@x.io', 'none@x.io'], { by: 'email' });
    expect(answers).toEqual([
      expect.objectContaining({ id: 'a@x.io', found: true, externalId: 'c1' }),
      { id: 'dup@x.io', found: false, matches: 2 },
      { id: 'none@x.io', found: false },
    ]);
  });

  it.each([
    ['an unknown object', 'lead', ['x'], {}, 'object'],
    ['an activity object', 'note', ['x'], {}, 'object'],
    ['a field that is not readable', 'contact', ['x'], { fields: ['lastname'] }, 'fields.0'],
    ['a field not named by lookupBy', 'deal', ['x'], { by: 'dealname' }, 'by'],
    ['an empty id', 'contact', ['ok', ' '], {}, 'ids.1'],
  ])('refuses %s with a ValidationError naming it, before any request', async (_name, object, ids, options, path) => {
    const { crm, sync } = setup();
    const err = await sync.read(object, ids, options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues[0]!.path).toBe(path);
    expect(crm.calls.read).toBe(0);
  });

  it('waits out a rate limit, retries a 5xx and a reset, and answers', async () => {
    const { crm, sync, sleeps } = setup({ retryAfterMs: 1_500 });
    await sync.apply(upsert('contact', 'c1', { email: 'a@x.io' }));
    crm.failNext('rate_limited', { op: 'read' });
    crm.failNext('server_error', { op: 'read' });
    crm.failNext('reset', { op: 'read' });
    const [answer] = await sync.read('contact', ['c1']);
    expect(answer).toMatchObject({ found: true, externalId: 'c1' });
    expect(crm.calls.read).toBe(4);
    expect(sleeps).toContain(1_500);
  });

  it('throws a permanent CRM error at once and stops sending after a quota error', async () => {
    const { crm, sync } = setup();
    crm.failNext('quota', { op: 'read' });
    const err = await sync.read('contact', ['c1']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmError);
    expect((err as CrmError).kind).toBe('quota');
    const calls = crm.calls.read;
    await expect(sync.read('contact', ['c1'])).rejects.toBeInstanceOf(CrmError);
    expect(crm.calls.read).toBe(calls);
  });

  it('touches no ledger', async () => {
    const { sync, ledgerCalls } = setup();
    await sync.apply(upsert('contact', 'c1', { email: 'a@x.io' }));
    const before = ledgerCalls.length;
    await sync.read('contact', ['c1', 'c2'], { links: true });
    await sync.read('contact', ['a@x.io'], { by: 'email' });
    expect(ledgerCalls.slice(before)).toEqual([]);
  });

  it('is refused with a ConfigError on an adapter that cannot read', async () => {
    const { sync } = setup();
    const adapter = sync.adapter as { planReads?: unknown; readRecords?: unknown };
    delete adapter.planReads;
    delete adapter.readRecords;
    await expect(sync.read('contact', ['c1'])).rejects.toBeInstanceOf(ConfigError);
  });

  it('is ctx.read inside handle: read again on every run, never stored', async () => {
    const { crm, sync } = setup();
    await sync.apply(upsert('deal', 'd1', { dealname: 'Big' }));
    const seen: unknown[] = [];
    const result = await sync.handle({ source: 'hook', eventId: 'e1' }, async (ctx) => {
      const [deal] = await ctx.read('deal', ['d1']);
      seen.push(deal);
      return [];
    });
    expect(result.status).toBe('completed');
    expect(seen).toEqual([expect.objectContaining({ id: 'd1', found: true, fields: { dealname: 'Big', owner: null } })]);
    expect(crm.calls.read).toBe(1);
  });
});
