/**
 * The first write real teams make, as one keyed event on each CRM: from a sales-call transcript a
 * model call (through `ctx.once`) produces a company, a contact at it, a deal with both, the call
 * logged on the contact, the company and the deal, and a follow-up task on the deal. One `handle`
 * writes the whole graph through the real clients against the fakes over loopback; the same event
 * delivered again sends nothing and calls no model; two workers delivering it at once write it once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import { salesforceCli } from '../../adapters/salesforce/salesforce-cli.js';
import type { CrmAdapter } from '../../src/adapter.js';
import { createSync, openLedger, type LedgerBackend } from '../../src/index.js';
import type { HandlerAction } from '../../src/engine/guarded.js';
import { harness as hubspotHarness } from './hubspot-helpers.js';
import { harness as salesforceHarness } from './salesforce-helpers.js';

const EVENT = { source: 'gong', eventId: 'call-42', occurredAt: '2026-12-04T15:00:00Z' };

/** What the model makes of the transcript (a fake model: counted, and a different text on every call). */
interface Summary {
  company: string;
  domain: string;
  email: string;
  deal: string;
  notes: string;
}
function model() {
  let calls = 0;
  return {
    calls: () => calls,
    summarize: async (): Promise<Summary> => {
      calls += 1;
      await new Promise((r) => setTimeout(r, 20));
      return { company: 'Acme', domain: 'acme.test', email: 'ada@acme.test', deal: 'Acme renewal', notes: `Budget approved; quote next week (draft ${calls})` };
    },
  };
}

const ref = (object: string, externalId: string) => ({ object, externalId });

interface Crm {
  name: string;
  start(): Promise<{ adapter: CrmAdapter; count(): number; stop(): Promise<void>; check(): void }>;
  actions(s: Summary): HandlerAction[];
  requests: number;
}

// The configs `crm-upsert init --template sales` writes.
const hubspotObjects = hubspotCli.salesStarter.section.objects;
const salesforceObjects = salesforceCli.salesStarter.section.objects;

const crms: Crm[] = [
  {
    name: 'HubSpot',
    async start() {
      const h = await hubspotHarness('loopback', {}, { objects: hubspotObjects });
      return {
        adapter: h.adapter, count: () => h.fake.count(), stop: h.stop,
        check() {
          const one = (type: string) => {
            expect(h.fake.records(type), type).toHaveLength(1);
            return h.fake.records(type)[0]!.id;
          };
          const [co, ct, dl, nt, tk] = ['companies', 'contacts', 'deals', 'notes', 'tasks'].map(one) as string[];
          const assoc = (type: string, id: string) => h.fake.associations(type, id).map((a) => `${a.toObjectType}:${a.toId}`).sort();
          expect(assoc('contacts', ct!)).toEqual([`companies:${co}`, `deals:${dl}`, `notes:${nt}`].sort());
          expect(assoc('deals', dl!)).toEqual([`companies:${co}`, `contacts:${ct}`, `notes:${nt}`, `tasks:${tk}`].sort());
          expect(assoc('notes', nt!)).toEqual([`companies:${co}`, `contacts:${ct}`, `deals:${dl}`].sort());
          expect(assoc('tasks', tk!)).toEqual([`deals:${dl}`]);
          expect(h.fake.records('notes')[0]!.properties.hs_note_body).toBe('Budget approved; quote next week (draft 1)');
        },
      };
    },
    actions: (s) => [
      { op: 'upsert', object: 'company', externalId: s.domain, fields: { name: s.company, domain: s.domain } },
      { op: 'upsert', object: 'contact', externalId: s.email, fields: { email: s.email }, links: [ref('company', s.domain)] },
      { op: 'upsert', object: 'deal', externalId: 'deal-call-42', fields: { dealname: s.deal }, links: [ref('contact', s.email), ref('company', s.domain)] },
      { op: 'create', object: 'note', target: ref('contact', s.email), fields: { hs_note_body: s.notes, hs_timestamp: EVENT.occurredAt }, links: [ref('company', s.domain), ref('deal', 'deal-call-42')] },
      { op: 'create', object: 'task', target: ref('deal', 'deal-call-42'), fields: { hs_task_subject: 'Send the quote', hs_timestamp: '2026-12-11T09:00:00Z' } },
    ],
    // company, contact, deal upserts; contact->company, deal->contact, deal->company; note and task creates.
    requests: 8,
  },
  {
    name: 'Salesforce',
    async start() {
      const h = await salesforceHarness('loopback', {}, { objects: salesforceObjects });
      return {
        adapter: h.adapter, count: () => h.fake.count(), stop: h.stop,
        check() {
          const [account] = h.fake.records('Account');
          const [contact] = h.fake.records('Contact');
          const [opp] = h.fake.records('Opportunity');
          expect([h.fake.records('Account'), h.fake.records('Contact'), h.fake.records('Opportunity')].map((r) => r.length)).toEqual([1, 1, 1]);
          expect(contact!.AccountId).toBe(account!.Id);
          expect(opp!.AccountId).toBe(account!.Id);
          const tasks = h.fake.records('Task');
          expect(tasks).toHaveLength(2);
          const log = tasks.find((t) => t.Subject === 'Call: Acme renewal')!;
          expect(log).toMatchObject({ WhoId: contact!.Id, WhatId: opp!.Id, Description: 'Budget approved; quote next week (draft 1)' });
          expect(tasks.find((t) => t.Subject === 'Send the quote')).toMatchObject({ WhatId: opp!.Id });
        },
      };
    },
    actions: (s) => [
      { op: 'upsert', object: 'company', externalId: s.domain, fields: { Name: s.company } },
      { op: 'upsert', object: 'contact', externalId: s.email, fields: { Email: s.email, LastName: 'Lovelace' }, links: [ref('company', s.domain)] },
      { op: 'upsert', object: 'deal', externalId: 'deal-call-42', fields: { Name: s.deal, StageName: 'Prospecting', CloseDate: '2027-01-31' }, links: [ref('company', s.domain)] },
      // A Task has one Who and one What: the call is logged on the contact and the deal (whose account is the company).
      { op: 'create', object: 'task', intent: 'call-log', target: ref('contact', s.email), fields: { Subject: `Call: ${s.deal}`, Description: s.notes, Status: 'Completed' }, links: [ref('deal', 'deal-call-42')] },
      { op: 'create', object: 'task', intent: 'follow-up', target: ref('deal', 'deal-call-42'), fields: { Subject: 'Send the quote', ActivityDate: '2026-12-11', Status: 'Not Started' } },
    ],
    // Account, Contact, Opportunity upserts (links inside them); both Tasks in one upsert.
    requests: 4,
  },
];

describe.each(crms)('a sales call as one keyed event on $name (fake over loopback)', (crm) => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  const run = (sync: ReturnType<typeof createSync>, m: ReturnType<typeof model>) =>
    sync.handle(EVENT, async (ctx) => crm.actions(await ctx.once('summarize', () => m.summarize())));

  it(`writes every record and link once in ${crm.requests} requests; delivered again: 0 requests, 0 model calls`, async () => {
    const fake = await crm.start();
    stop = fake.stop;
    const m = model();
    const sync = createSync({ adapter: fake.adapter, ledger: openLedger('memory:'), verifyCreates: 'after-failure' });
    const first = await run(sync, m);
    expect(first.status).toBe('completed');
    expect(first.outcomes.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created', 'created']);
    fake.check();
    expect(fake.count()).toBe(crm.requests);
    expect(m.calls()).toBe(1);

    const again = await run(sync, m);
    expect(again.status).toBe('replayed');
    expect(fake.count()).toBe(crm.requests);
    expect(m.calls()).toBe(1);
    fake.check();
    await sync.close();
  });

  it('writes it once when two workers get the same delivery at once', async () => {
    const fake = await crm.start();
    stop = fake.stop;
    const m = model();
    const ledger: LedgerBackend = openLedger('memory:');
    const workers = [0, 1].map(() => createSync({ adapter: fake.adapter, ledger, verifyCreates: 'after-failure' }));
    const results = await Promise.all(workers.map((w) => run(w, m)));
    expect(results.map((r) => r.status).sort()).toEqual(['completed', 'in_flight']);
    // The one that found the event held delivers again later: a replay.
    const later = await run(workers[1]!, m);
    expect(later.status).toBe('replayed');
    fake.check();
    expect(fake.count()).toBe(crm.requests);
    expect(m.calls()).toBe(1);
    await Promise.all(workers.map((w) => w.close()));
  });
});
