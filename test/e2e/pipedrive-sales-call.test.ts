/**
 * The sales call on Pipedrive as one keyed event: an organization, a person at it, a deal with
 * both, the call's note on all three, a follow-up task on the deal with the person as its primary
 * participant. Notes and activities carry their key as a text marker and are found by it through
 * their parent after a lost answer, never duplicated.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HandlerAction } from '../../src/engine/guarded.js';
import { createSync, openLedger } from '../../src/index.js';
import { fast, harness, type Harness } from './pipedrive-helpers.js';

const EVENT = { source: 'gong', eventId: 'call-42', occurredAt: '2026-12-04T15:00:00Z' };
const ref = (object: string, externalId: string) => ({ object, externalId });

function model() {
  let calls = 0;
  return {
    calls: () => calls,
    summarize: async () => {
      calls += 1;
      return { company: 'Acme', email: 'ada@acme.test', deal: 'Acme renewal', notes: `Budget approved; quote next week (draft ${calls})` };
    },
  };
}
type Summary = Awaited<ReturnType<ReturnType<typeof model>['summarize']>>;
const actions = (s: Summary): HandlerAction[] => [
  { op: 'upsert', object: 'company', externalId: 'acme.test', fields: { name: s.company } },
  { op: 'upsert', object: 'contact', externalId: s.email, fields: { name: 'Ada Lovelace', email: s.email }, links: [ref('company', 'acme.test')] },
  { op: 'upsert', object: 'deal', externalId: 'deal-call-42', fields: { title: s.deal, value: 12000 }, links: [ref('contact', s.email), ref('company', 'acme.test')] },
  { op: 'create', object: 'note', target: ref('contact', s.email), fields: { content: `<p>${s.notes}</p>` }, links: [ref('company', 'acme.test'), ref('deal', 'deal-call-42')] },
  { op: 'create', object: 'task', target: ref('deal', 'deal-call-42'), fields: { subject: 'Send the quote', due_date: '2026-12-11' }, links: [ref('contact', s.email)] },
];

describe('a sales call as one keyed event on Pipedrive (fakePipedrive over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  it('writes every record and link once in 11 requests; delivered again: 0 requests, 0 model calls', async () => {
    h = await harness({ searchLagMs: 2_000 });
    const m = model();
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    const run = () => sync.handle(EVENT, async (ctx) => actions(await ctx.once('summarize', () => m.summarize())));
    const first = await run();
    expect(first.status).toBe('completed');
    expect(first.outcomes.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created', 'created']);
    // Per record: its fields read once (the id field is configured by name), one exact search, one
    // create carrying its links; the note and the task: one create each, links inline.
    expect(h.fake.counts()).toEqual({
      'GET /api/v2/organizationFields': 1, 'GET /api/v2/personFields': 1, 'GET /api/v2/dealFields': 1,
      'GET /api/v2/itemSearch/field': 3,
      'POST /api/v2/organizations': 1, 'POST /api/v2/persons': 1, 'POST /api/v2/deals': 1,
      'POST /api/v1/notes': 1, 'POST /api/v2/activities': 1,
    });
    expect(h.fake.count()).toBe(11);
    const [o] = h.fake.records('organization');
    const [p] = h.fake.records('person');
    const [d] = h.fake.records('deal');
    expect(p!.data.org_id).toBe(o!.id);
    expect(d!.data).toMatchObject({ person_id: p!.id, org_id: o!.id, value: 12000 });
    const [note] = h.fake.notes();
    expect(note).toMatchObject({ person_id: p!.id, org_id: o!.id, deal_id: d!.id });
    expect(note!.content).toContain('Budget approved; quote next week (draft 1)');
    expect(note!.content).toContain(`[crm-upsert key: ${first.outcomes[3]!.key}]`);
    const [task] = h.fake.activities();
    expect(task).toMatchObject({ deal_id: d!.id, person_id: p!.id, type: 'task', subject: 'Send the quote', participants: [{ person_id: p!.id, primary: true }] });

    const again = await run();
    expect(again.status).toBe('replayed');
    expect(h.fake.count()).toBe(11);
    expect(m.calls()).toBe(1);
    await sync.close();
  });

  it.each([
    ['note', 'POST /api/v1/notes'],
    ['task', 'POST /api/v2/activities'],
  ] as const)('finds a %s whose create answer was lost by its key marker through its parent, and does not create it again', async (object, endpoint) => {
    h = await harness({ searchLagMs: 2_000 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    const [co, ct, dl, nt, tk] = actions({ company: 'Acme', email: 'ada@acme.test', deal: 'Acme renewal', notes: 'Call notes' }).map((a) => ({ ...a, source: 'gong', eventId: `call-42-${a.object}` }));
    await sync.applyMany([co!, ct!, dl!]);
    h.fake.failNext('lost_response', { endpoint });
    const outcome = await sync.apply(object === 'note' ? nt! : tk!);
    expect(outcome.status).toBe('created');
    const made = object === 'note' ? h.fake.notes() : h.fake.activities();
    expect(made).toHaveLength(1);
    expect(outcome.recordId).toBe(String(made[0]!.id));
    expect(h.fake.count(endpoint)).toBe(1);
  });

  it('finds a task on a person (its primary participant) after a lost answer, and does not create it again', async () => {
    h = await harness({ searchLagMs: 2_000 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    await sync.apply({ source: 's', eventId: 'p', op: 'upsert', object: 'contact', externalId: 'ada', fields: { name: 'Ada' } });
    h.fake.failNext('lost_response', { endpoint: 'POST /api/v2/activities' });
    const outcome = await sync.apply({ source: 's', eventId: 't', op: 'create', object: 'task', target: ref('contact', 'ada'), fields: { subject: 'Call Ada back' } });
    expect(outcome.status).toBe('created');
    expect(h.fake.activities()).toHaveLength(1);
    expect(h.fake.activities()[0]!.participants).toEqual([{ person_id: h.fake.records('person')[0]!.id, primary: true }]);
    expect(h.fake.count('POST /api/v2/activities')).toBe(1);
  });

  it('links to records another process wrote a moment ago, before the search index has them', async () => {
    h = await harness({ searchLagMs: 60_000 });
    const ledger = openLedger('memory:');
    await createSync({ adapter: h.adapter, ledger, retry: fast }).apply({ source: 's', eventId: 'o', op: 'upsert', object: 'company', externalId: 'acme', fields: { name: 'Acme' } });
    const other = createSync({ adapter: h.another(), ledger, retry: fast });
    const person = await other.apply({ source: 's', eventId: 'p', op: 'upsert', object: 'contact', externalId: 'ada', fields: { name: 'Ada' }, links: [ref('company', 'acme')] });
    expect(person.status).toBe('created');
    const note = await createSync({ adapter: h.another(), ledger, retry: fast }).apply({ source: 's', eventId: 'n', op: 'create', object: 'note', target: ref('contact', 'ada'), fields: { content: 'Met Ada' }, links: [ref('company', 'acme')] });
    expect(note.status).toBe('created');
    const [o] = h.fake.records('organization');
    const [p] = h.fake.records('person');
    expect(p!.data.org_id).toBe(o!.id);
    expect(h.fake.notes()[0]).toMatchObject({ person_id: p!.id, org_id: o!.id });
  });

  it('keeps the key marker through Pipedrive\'s HTML sanitizing of note content', async () => {
    h = await harness({ searchLagMs: 0 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast, verifyCreates: 'after-failure' });
    await sync.apply({ source: 's', eventId: 'p', op: 'upsert', object: 'contact', externalId: 'ada', fields: { name: 'Ada' } });
    h.fake.failNext('lost_response', { endpoint: 'POST /api/v1/notes' });
    const outcome = await sync.apply({ source: 's', eventId: 'n', op: 'create', object: 'note', target: ref('contact', 'ada'), fields: { content: '<div onclick="x()"><script>alert(1)</script><b>Hello</b></div>' } });
    expect(outcome.status).toBe('created');
    expect(h.fake.notes()).toHaveLength(1);
    expect(h.fake.notes()[0]!.content).not.toContain('script');
  });

  it('fails a note whose parent does not exist, naming it, and sends nothing', async () => {
    h = await harness({ searchLagMs: 0 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcome = await sync.apply({ source: 's', eventId: 'n', op: 'create', object: 'note', target: ref('contact', 'nobody'), fields: { content: 'x' } });
    expect(outcome.status).toBe('failed');
    expect(outcome.error!.message).toContain('nobody');
    expect(outcome.error!.vendorCode).toBe('PARENT_NOT_FOUND');
    expect(h.fake.count('POST')).toBe(0);
  });

  it.each([
    ['a deal linked to two persons (one person_id)', { op: 'upsert', object: 'deal', externalId: 'd-2', fields: { title: 'Deal' }, links: [ref('contact', 'a'), ref('contact', 'b')] }],
    ['a note on one deal linked to another (one deal_id)', { op: 'create', object: 'note', target: ref('deal', 'd-1'), fields: { content: 'x' }, links: [ref('deal', 'd-2')] }],
  ])('rejects %s before any request: the relation field holds one record', async (_name, action) => {
    h = await harness({ searchLagMs: 0 });
    const outcome = await createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast }).apply({ source: 's', eventId: 'x', ...action });
    expect(outcome.status).toBe('rejected');
    expect(h.fake.count()).toBe(0);
  });

  it('fails a deal whose linked person does not exist with LINK_NOT_FOUND and writes nothing', async () => {
    h = await harness({ searchLagMs: 0 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcome = await sync.apply({ source: 's', eventId: 'd', op: 'upsert', object: 'deal', externalId: 'd-1', fields: { title: 'Deal' }, links: [ref('contact', 'ghost')] });
    expect(outcome.status).toBe('failed');
    expect(outcome.error!.vendorCode).toBe('LINK_NOT_FOUND');
    expect(outcome.error!.message).toContain('ghost');
    expect(h.fake.records('deal')).toHaveLength(0);
  });
});
