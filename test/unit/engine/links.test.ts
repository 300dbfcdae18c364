/**
 * Links in the engine, against the in-memory CRM: what reaches the adapter (records written
 * after the records they link to, links merged across events of one record), what the
 * "unchanged" mark covers, what is refused before any call (an object the config does not allow,
 * too many links, a record linked to itself, two links on one one-value field) and a config
 * whose links form a cycle.
 */
import { describe, expect, it } from 'vitest';
import type { ObjectSpec } from '../../../src/adapter.js';
import { createSync, openLedger } from '../../../src/index.js';
import { deriveKey } from '../../../src/key.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const objects: Record<string, ObjectSpec> = {
  company: { kind: 'record', fields: ['name'] },
  contact: { kind: 'record', fields: ['email'], links: ['company'] },
  deal: { kind: 'record', fields: ['dealname'], links: ['contact', 'company'] },
  note: { kind: 'activity', fields: ['body'], parents: ['contact', 'company', 'deal'] },
};
const at = '2026-12-01T10:00:00Z';
const company = (id = 'acme', eventId = `evt-${id}`) => ({ source: 'call', eventId, occurredAt: at, op: 'upsert', object: 'company', externalId: id, fields: { name: id } });
const contact = (links: { object: string; externalId: string }[], eventId = 'evt-contact', fields: Record<string, string> = { email: 'ada@acme.test' }) => ({
  source: 'call', eventId, occurredAt: at, op: 'upsert', object: 'contact', externalId: 'ada', fields, links,
});
const deal = { source: 'call', eventId: 'evt-deal', occurredAt: at, op: 'upsert', object: 'deal', externalId: 'd-1', fields: { dealname: 'Acme renewal' }, links: [{ object: 'contact', externalId: 'ada' }, { object: 'company', externalId: 'acme' }] };
const note = { source: 'call', eventId: 'evt-note', occurredAt: at, op: 'create', object: 'note', target: { object: 'contact', externalId: 'ada' }, fields: { body: 'call summary' }, links: [{ object: 'company', externalId: 'acme' }, { object: 'deal', externalId: 'd-1' }, { object: 'contact', externalId: 'ada' }] };
const toAcme = [{ object: 'company', externalId: 'acme' }];

function setup(specs: Record<string, ObjectSpec> = objects) {
  const crm = memoryCrm({ objects: specs });
  const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:'), retry: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 2 } });
  return { crm, sync };
}

describe('links', () => {
  it('writes records after the records they link to, whatever the input order, and carries every link to the adapter', async () => {
    const { crm, sync } = setup();
    const outcomes = await sync.applyMany([note, deal, contact(toAcme), company()]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created']);
    expect(crm.upsertOrder).toEqual(['company', 'contact', 'deal']);
    const id = (object: string, externalId: string) => `${object}:${crm.records(object).find((r) => r.externalId === externalId)!.id}`;
    expect([...crm.records('contact')[0]!.links]).toEqual([id('company', 'acme')]);
    expect([...crm.records('deal')[0]!.links].sort()).toEqual([id('company', 'acme'), id('contact', 'ada')].sort());
    // The note's link to its own target is dropped: it is on the contact anyway.
    expect(crm.activities('note')[0]!.links).toEqual([id('company', 'acme'), id('deal', 'd-1')]);
    expect(crm.calls).toMatchObject({ upsert: 3, create: 1 });

    const before = crm.adapter.apiCalls();
    expect((await sync.applyMany([note, deal, contact(toAcme), company()])).map((o) => o.status)).toEqual(['replayed', 'replayed', 'replayed', 'replayed']);
    expect(crm.adapter.apiCalls()).toBe(before);
  });

  it('writes a record again when a later event adds a link, and not when it brings the same links in another order', async () => {
    const { crm, sync } = setup();
    await sync.applyMany([company(), company('globex'), contact(toAcme)]);
    const calls = crm.adapter.apiCalls();
    const both = [{ object: 'company', externalId: 'globex' }, ...toAcme];
    const [added] = await sync.applyMany([contact(both, 'evt-contact-2')]);
    expect(added).toMatchObject({ status: 'updated' });
    expect(crm.adapter.apiCalls()).toBe(calls + 1);
    expect(crm.records('contact')[0]!.links.size).toBe(2);
    const [same] = await sync.applyMany([contact([...both].reverse(), 'evt-contact-3')]);
    expect(same).toMatchObject({ status: 'unchanged' });
    expect(crm.adapter.apiCalls()).toBe(calls + 1);
  });

  it('merges the links of several events for one record in one call (linking only adds)', async () => {
    const { crm, sync } = setup();
    await sync.applyMany([company(), company('globex')]);
    const outcomes = await sync.applyMany([contact(toAcme, 'evt-a'), contact([{ object: 'company', externalId: 'globex' }], 'evt-b')]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'updated']);
    expect(crm.calls.upsert).toBe(2);
    expect(crm.records('contact')[0]!.links.size).toBe(2);
  });

  it('fails a record whose linked record does not exist, naming it, and links it on the retry once it exists', async () => {
    const { crm, sync } = setup();
    const [missing] = await sync.applyMany([contact(toAcme)]);
    expect(missing).toMatchObject({ status: 'failed', error: { vendorCode: 'LINK_NOT_FOUND', message: expect.stringContaining('acme') } });
    expect(crm.records('contact')).toHaveLength(1);
    await sync.applyMany([company()]);
    const [again] = await sync.applyMany([contact(toAcme)]);
    expect(again.status).toMatch(/created|updated/);
    expect(crm.records('contact')[0]!.links.size).toBe(1);
    expect(crm.records('contact')).toHaveLength(1);
  });

  it('refuses before any call a link the config does not allow, a record linked to itself, and more than maxLinks distinct links', async () => {
    const { crm, sync } = setup();
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ object: 'company', externalId: `co-${i}` }));
    const outcomes = await sync.applyMany([
      contact([{ object: 'deal', externalId: 'd-1' }], 'e1'),
      contact([{ object: 'ticket', externalId: 't-1' }], 'e2'),
      { ...deal, eventId: 'e3', links: [{ object: 'deal', externalId: 'd-1' }] },
      contact(many(11), 'e4'),
      { ...note, eventId: 'e5', links: [{ object: 'note', externalId: 'n-1' }] },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'rejected']);
    expect(outcomes[0]!.error!.message).toMatch(/links\.0\.object.*"contact" cannot link to "deal"; allowed: company/);
    expect(outcomes[1]!.error!.message).toMatch(/links\.0\.object.*cannot link to "ticket"/);
    expect(outcomes[2]!.error!.message).toMatch(/"deal" cannot link to "deal"/);
    expect(outcomes[3]!.error!.message).toMatch(/links.*11 distinct links; at most 10 per action/);
    expect(outcomes[4]!.error!.message).toMatch(/"note" cannot link to "note"/);
    expect(crm.adapter.apiCalls()).toBe(0);

    // Duplicates are merged before counting: 12 links naming 10 records are fine.
    const merged = setup();
    await merged.sync.applyMany(many(10).map((l) => company(l.externalId)));
    const [ok] = await merged.sync.applyMany([contact([...many(10), ...many(2)], 'e6')]);
    expect(ok).toMatchObject({ status: 'created' });
    expect(merged.crm.records('contact')[0]!.links.size).toBe(10);

    const limited = memoryCrm({ objects });
    const strict = createSync({ adapter: limited.adapter, ledger: openLedger('memory:'), maxLinks: 1 });
    const [over] = await strict.applyMany([contact([...toAcme, { object: 'company', externalId: 'globex' }], 'e7')]);
    expect(over).toMatchObject({ status: 'rejected', error: { message: expect.stringMatching(/2 distinct links; at most 1/) } });
  });

  it('refuses two links that land on one one-value field (a Task has one Who and one What)', async () => {
    const salesforceLike: Record<string, ObjectSpec> = {
      account: { kind: 'record', fields: ['Name'] },
      contact: { kind: 'record', fields: ['Email'], links: ['account'], slots: { account: 'AccountId' } },
      lead: { kind: 'record', fields: ['Email'] },
      deal: { kind: 'record', fields: ['Name'] },
      task: { kind: 'activity', fields: ['Subject'], parents: ['contact', 'lead', 'account', 'deal'], slots: { contact: 'WhoId', lead: 'WhoId', account: 'WhatId', deal: 'WhatId' } },
    };
    const { crm, sync } = setup(salesforceLike);
    const task = (links: { object: string; externalId: string }[], eventId: string) => ({
      source: 'call', eventId, occurredAt: at, op: 'create', object: 'task', target: { object: 'contact', externalId: 'ada' }, fields: { Subject: 'Follow up' }, links,
    });
    const outcomes = await sync.applyMany([
      task([{ object: 'account', externalId: 'acme' }, { object: 'deal', externalId: 'd-1' }], 't1'),
      task([{ object: 'lead', externalId: 'l-1' }], 't2'),
      { source: 'call', eventId: 'c1', occurredAt: at, op: 'upsert', object: 'contact', externalId: 'ada', fields: { Email: 'a@b.co' }, links: [{ object: 'account', externalId: 'acme' }, { object: 'account', externalId: 'globex' }] },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(outcomes[0]!.error!.message).toMatch(/links\.1.*account "acme" and deal "d-1" both set WhatId/);
    expect(outcomes[1]!.error!.message).toMatch(/contact "ada" and lead "l-1" both set WhoId/);
    expect(outcomes[2]!.error!.message).toMatch(/both set AccountId/);
    expect(crm.adapter.apiCalls()).toBe(0);
  });

  it('refuses at construction a config whose links form a cycle, naming it', () => {
    const cyclic: Record<string, ObjectSpec> = {
      contact: { kind: 'record', fields: ['email'], links: ['company'] },
      company: { kind: 'record', fields: ['name'], links: ['deal'] },
      deal: { kind: 'record', fields: ['dealname'], links: ['contact'] },
    };
    expect(() => createSync({ adapter: memoryCrm({ objects: cyclic }).adapter, ledger: openLedger('memory:') })).toThrow(/links form a cycle \(contact -> company -> deal -> contact\)/);
  });

  it('keys a keyless upsert by its links as by its fields, in any order', () => {
    const base = { source: 'agent', occurredAt: at, op: 'upsert' as const, object: 'contact', externalId: 'ada', fields: { email: 'a@b.co' } };
    const a = { object: 'company', externalId: 'acme' };
    const b = { object: 'company', externalId: 'globex' };
    expect(deriveKey({ ...base, links: [a] })).not.toBe(deriveKey(base));
    expect(deriveKey({ ...base, links: [a, b] })).toBe(deriveKey({ ...base, links: [b, a] }));
    expect(deriveKey({ ...base, links: [] })).toBe(deriveKey(base));
  });

  it('holds back a walked create whose link is not known yet, and writes it with the link once the linked record is written', async () => {
    const { crm, sync } = setup();
    const plainContact = { ...contact([], 'evt-ada'), links: undefined };
    const noteOnAcme = { ...note, links: [{ object: 'company', externalId: 'acme' }] };
    const filler = (i: number) => company(`filler-${i}`);
    // The note comes before its linked company, in another call of the walk.
    const inputs = [plainContact, noteOnAcme, ...Array.from({ length: 4 }, (_, i) => filler(i)), company()];
    const outcomes: string[] = [];
    for await (const settled of sync.applyEach(inputs, { batchSize: 2 })) for (const { index, outcome } of settled) outcomes[index] = outcome.status;
    expect(outcomes).toEqual(inputs.map(() => 'created'));
    const acme = crm.records('company').find((r) => r.externalId === 'acme')!;
    expect(crm.activities('note')).toHaveLength(1);
    expect(crm.activities('note')[0]!.links).toEqual([`company:${acme.id}`]);
    // Sent once, after the company: never failed on the missing link.
    expect(crm.calls.create).toBe(1);
  });
});

