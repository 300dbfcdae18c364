/**
 * Find-or-create on Pipedrive, which has no upsert: the ledger's known id first (no search), then
 * an exact lookup confirmed by a read, then a create; a failed search is unknown, never "not
 * found"; a create whose answer was lost is found again, never sent twice.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { externalIds, fast, harness, statuses, TOKEN, type Harness } from './pipedrive-helpers.js';

const person = (n: number, name = `Person ${n}`, eventId = `evt-p${n}-${name}`) => ({ source: 'pd-test', eventId, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name, email: `p${n}@example.test` } });
const org = (n: number) => ({ source: 'pd-test', eventId: `evt-o${n}`, op: 'upsert', object: 'company', externalId: `O-${n}`, fields: { name: `Org ${n}` } });
const deal = (n: number) => ({ source: 'pd-test', eventId: `evt-d${n}`, op: 'upsert', object: 'deal', externalId: `D-${n}`, fields: { title: `Deal ${n}`, value: 1000 * n }, links: [{ object: 'contact', externalId: `P-${n}` }, { object: 'company', externalId: `O-${n}` }] });

/**
 * A first process sends person P-1's create, loses the answer, and cannot look anything up
 * afterwards (every read fails until it has given up): the action is left failed, possibly written.
 */
async function lostCreate(h: Harness) {
  const ledger = openLedger('memory:');
  let down = false;
  h.fake.failNext('lost_response', { endpoint: 'POST /api/v2/persons', match: () => (down = true) });
  h.fake.failNext('server_error', { times: 1_000_000, match: (req) => down && req.method === 'GET' });
  const first = createSync({ adapter: h.adapter, ledger, retry: { ...fast, retries: 0 } });
  expect((await first.apply(person(1))).status).toBe('failed');
  expect(h.fake.records('person')).toHaveLength(1);
  down = false;
  return ledger;
}

describe('pipedriveAdapter find-or-create (fakePipedrive over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  it('writes organizations, persons and deals once; the same actions again send 0 requests', async () => {
    h = await harness({ searchLagMs: 2_000 });
    const actions = [1, 2, 3].flatMap((n) => [org(n), { ...person(n), links: [{ object: 'company', externalId: `O-${n}` }] }, deal(n)]);
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    expect(statuses(await sync.applyMany(actions))).toEqual({ created: 9 });
    // A new record: one exact search and one create; links come from the records written a moment
    // before (no lookup); the id field, configured by name, is resolved to its key once per entity.
    expect(h.fake.counts()).toEqual({
      'GET /api/v2/organizationFields': 1, 'GET /api/v2/personFields': 1, 'GET /api/v2/dealFields': 1,
      'GET /api/v2/itemSearch/field': 9, 'POST /api/v2/organizations': 3, 'POST /api/v2/persons': 3, 'POST /api/v2/deals': 3,
    });
    const before = h.fake.count();
    expect(statuses(await sync.applyMany(actions))).toEqual({ replayed: 9 });
    expect(h.fake.count()).toBe(before);
    await sync.close();
    expect(externalIds(h.fake, 'person').sort()).toEqual(['P-1', 'P-2', 'P-3']);
    expect(externalIds(h.fake, 'organization')).toHaveLength(3);
    const d1 = h.fake.records('deal').find((d) => h!.fake.customValue(d, 'ai_external_id') === 'D-1')!;
    const p1 = h.fake.records('person').find((p) => h!.fake.customValue(p, 'ai_external_id') === 'P-1')!;
    const o1 = h.fake.records('organization').find((o) => h!.fake.customValue(o, 'ai_external_id') === 'O-1')!;
    expect(d1.data).toMatchObject({ title: 'Deal 1', value: 1000, person_id: p1.id, org_id: o1.id });
    expect(p1.data).toMatchObject({ org_id: o1.id, emails: [{ value: 'p1@example.test', primary: true, label: 'work' }] });
  });

  it('updates a person this ledger wrote with 1 request and no search, from a new process on the same ledger', async () => {
    h = await harness();
    const ledger = openLedger('memory:');
    const first = createSync({ adapter: h.adapter, ledger, retry: fast });
    const created = await first.apply(person(1));
    h.fake.core.resetLog();
    const second = createSync({ adapter: h.another(), ledger, retry: fast });
    const updated = await second.apply(person(1, 'Renamed'));
    expect(updated).toMatchObject({ status: 'updated', recordId: created.recordId });
    expect(h.fake.counts()).toEqual({ 'PATCH /api/v2/persons/{id}': 1 });
    expect(h.fake.records('person').map((p) => p.data.name)).toEqual(['Renamed']);
  });

  it('finds a person the ledger does not know by an exact search confirmed by a read, and updates it', async () => {
    h = await harness({ searchLagMs: 0 });
    const key = h.fake.field('person', 'ai_external_id')!.field_code;
    const id = h.fake.seed('person', { name: 'Made in Pipedrive' }, { [key]: 'P-1' });
    const outcome = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply(person(1));
    expect(outcome).toMatchObject({ status: 'updated', recordId: String(id) });
    expect(h.fake.counts()).toEqual({ 'GET /api/v2/personFields': 1, 'GET /api/v2/itemSearch/field': 1, 'GET /api/v2/persons/{id}': 1, 'PATCH /api/v2/persons/{id}': 1 });
  });

  it('treats an external id differing only in case as another person', async () => {
    h = await harness({ searchLagMs: 0 });
    const key = h.fake.field('person', 'ai_external_id')!.field_code;
    h.fake.seed('person', { name: 'Upper' }, { [key]: 'ABC-1' });
    const outcome = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply({ ...person(1), externalId: 'abc-1' });
    expect(outcome.status).toBe('created');
    expect(externalIds(h.fake, 'person').sort()).toEqual(['ABC-1', 'abc-1']);
  });

  it('fails when two persons hold one external id, naming both ids, and writes nothing', async () => {
    h = await harness({ searchLagMs: 0 });
    const key = h.fake.field('person', 'ai_external_id')!.field_code;
    const a = h.fake.seed('person', { name: 'Twin A' }, { [key]: 'P-1' });
    const b = h.fake.seed('person', { name: 'Twin B' }, { [key]: 'P-1' });
    const outcome = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply(person(1));
    expect(outcome.status).toBe('failed');
    expect(outcome.error!.message).toContain(String(a));
    expect(outcome.error!.message).toContain(String(b));
    expect(outcome.error!.vendorCode).toBe('DUPLICATE_EXTERNAL_ID');
    expect(h.fake.count('PATCH')).toBe(0);
    expect(h.fake.count('POST')).toBe(0);
  });

  it.each([
    ['429', 'rate_limit'],
    ['503', 'server_error'],
    ['an HTML 403 from the edge', 'edge_block'],
  ] as const)('creates nothing when the search fails with %s; a later run creates the person once', async (_label, fault) => {
    h = await harness({ searchLagMs: 0, faults: { retryAfterSeconds: 0 } });
    let failing = true;
    h.fake.failNext(fault, { endpoint: 'itemSearch', times: 1_000, match: () => failing });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: { ...fast, retries: 2, maxRateLimitWaits: 2, maxRetryAfterMs: 10 } });
    const failed = await sync.apply(person(1));
    expect(failed.status).toBe('failed');
    expect(failed.error!.retryable).toBe(true);
    expect(h.fake.count('POST')).toBe(0);
    expect(h.fake.records('person')).toHaveLength(0);
    // The search answers again: the stored action is retried and creates the person once.
    failing = false;
    const again = await createSync({ adapter: h.adapter, ledger, retry: fast }).apply(person(1));
    expect(again.status).toBe('created');
    expect(externalIds(h.fake, 'person')).toEqual(['P-1']);
  });

  it.each(['lost_response', 'reset', 'server_error'] as const)('a create ending in %s is looked up before anything is sent again: one person (index lagging 2 s)', async (fault) => {
    h = await harness({ searchLagMs: 2_000 });
    h.fake.failNext(fault, { endpoint: 'POST /api/v2/persons' });
    const outcome = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply(person(1));
    expect(outcome.status).toBe('created');
    expect(externalIds(h.fake, 'person')).toEqual(['P-1']);
    expect(outcome.recordId).toBe(String(h.fake.records('person')[0]!.id));
  });

  it('never re-sends a create while it stays unconfirmed: the action fails retryable, and no second person appears', async () => {
    h = await harness({ searchLagMs: 60_000 });
    h.fake.failNext('lost_response', { endpoint: 'POST /api/v2/persons' });
    // The update-time list misses it too (a clock far off, say): only the lagging search is left.
    h.fake.failNext('server_error', { endpoint: 'GET /api/v2/persons', times: 1_000, match: (req) => req.path === '/api/v2/persons' && req.method === 'GET' });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: { ...fast, retries: 2 } });
    const outcome = await sync.apply(person(1));
    expect(outcome.status).toBe('failed');
    expect(outcome.error!.retryable).toBe(true);
    expect(h.fake.count('POST /api/v2/persons')).toBe(1);
    expect(h.fake.records('person')).toHaveLength(1);
  });

  it('with recentLookup, a create whose answer was lost is found by another process before the index has it', async () => {
    h = await harness({ searchLagMs: 60_000 });
    const ledger = await lostCreate(h);
    // Another process retries the stored action: the search has not seen the person yet, the recent-update list has.
    const second = createSync({ adapter: h.another({ recentLookup: true }), ledger, retry: fast });
    const [retried] = await second.retryStored(await ledger.list({ status: 'failed' }));
    expect(retried!.status).toBe('updated');
    expect(externalIds(h.fake, 'person')).toEqual(['P-1']);
  });

  it('without recentLookup, another process retrying a create whose answer was lost finds it too: the ledger says it may exist', async () => {
    h = await harness({ searchLagMs: 60_000 });
    const ledger = await lostCreate(h);
    h.fake.core.resetLog();
    const second = createSync({ adapter: h.another(), ledger, retry: fast });
    const [retried] = await second.retryStored(await ledger.list({ status: 'failed' }));
    expect(retried!.status).toBe('updated');
    expect(h.fake.count('POST /api/v2/persons')).toBe(0);
    expect(externalIds(h.fake, 'person')).toEqual(['P-1']);
    // A record this ledger never tried to write is searched for as usual, with no list read.
    h.fake.core.resetLog();
    await second.apply(person(2));
    expect(h.fake.count('GET /api/v2/persons')).toBe(0);
  });

  it('two Syncs on one ledger creating the same new person at once: one person', async () => {
    h = await harness({ searchLagMs: 2_000 });
    const ledger = openLedger('memory:');
    const a = createSync({ adapter: h.adapter, ledger, retry: fast });
    const b = createSync({ adapter: h.another(), ledger, retry: fast });
    const [x, y] = await Promise.all([a.apply(person(1)), b.apply(person(1))]);
    expect([x.status, y.status].sort()).toContain('created');
    expect(externalIds(h.fake, 'person')).toEqual(['P-1']);
  });

  it('finds a person deleted in Pipedrive again by its external id and re-creates it visibly', async () => {
    h = await harness({ searchLagMs: 0 });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: fast });
    const first = await sync.apply(person(1));
    h.fake.delete('person', Number(first.recordId));
    const again = await sync.apply(person(1, 'Back again'));
    expect(again.status).toBe('created');
    expect(again.recreated).toEqual({ previousId: first.recordId });
    expect(externalIds(h.fake, 'person')).toEqual(['P-1']);
  });

  it('writes to the surviving person after a merge', async () => {
    h = await harness({ searchLagMs: 0 });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: fast });
    const first = await sync.apply(person(1));
    const survivor = h.fake.seed('person', { name: 'Survivor' });
    h.fake.merge('person', Number(first.recordId), survivor);
    const again = await sync.apply(person(1, 'After merge'));
    expect(again.recordId).toBe(String(survivor));
    expect(h.fake.records('person').map((p) => p.data.name)).toEqual(['After merge']);
  });

  it('never puts the token in a URL or in an error, down the cause chain', async () => {
    h = await harness({ apiToken: 'another-token', searchLagMs: 0 });
    const outcome = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply(person(1));
    expect(outcome.status).toBe('failed');
    expect(h.fake.state.tokenInUrl).toBe(0);
    let thrown: unknown;
    try {
      await h.adapter.readFields('person');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeDefined();
    expect(inspect(thrown, { depth: 10 })).not.toContain(TOKEN);
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
    expect(inspect(outcome, { depth: 10 })).not.toContain(TOKEN);
  });
});
