/**
 * One key, one action. Actions of one event (one `handle`, one `applyMany`) that share a key but
 * not their fields or links are all rejected, naming the key and `intent`, and none is written;
 * identical ones (normalization-equal values, links in another order) stay one action. A later
 * delivery with other model text is still a replay, and a call that carries several deliveries
 * (`sharedKeys: 'replay'`, a walk's stream, a worker's coalesced call) replays them.
 */
import { describe, expect, it } from 'vitest';
import type { ObjectSpec } from '../../../src/adapter.js';
import { createSync, type HandleContext } from '../../../src/engine/index.js';
import { guardedSteps } from '../../../src/engine/guarded.js';
import { ledgerClock } from '../../../src/ledger/clock.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import type { Outcome } from '../../../src/outcome.js';
import { memoryCrm, type MemoryCrmOptions } from '../../helpers/memory-crm.js';

const AT = '2026-12-01T10:00:00Z';
const EVENT = { source: 'zendesk', eventId: 'evt-77', occurredAt: AT };
const CONTACT = { op: 'upsert' as const, object: 'contact', externalId: 'zd-7', fields: { email: 'ana@example.com' } };
const note = (body: string, extra: Record<string, unknown> = {}) => ({ op: 'create' as const, object: 'note', target: { object: 'contact', externalId: 'zd-7' }, fields: { body }, ...extra });
const keyed = <T extends object>(action: T, eventId = EVENT.eventId) => ({ source: EVENT.source, eventId, occurredAt: AT, ...action });

function setup(options: MemoryCrmOptions = {}) {
  const crm = memoryCrm(options);
  const ledger = memoryLedger();
  const sync = createSync({ adapter: crm.adapter, ledger, retry: { minTimeoutMs: 1, maxTimeoutMs: 2 } });
  return { crm, ledger, sync };
}

const statuses = (outcomes: readonly Outcome[]) => outcomes.map((o) => o.status);

describe('one key, one action', () => {
  it('handle: two different notes on one contact without an intent are both rejected, naming the key and intent; nothing is written for them and the event fails', async () => {
    const { crm, ledger, sync } = setup();
    const result = await sync.handle(EVENT, () => [CONTACT, note('Asked for a refund.'), note('Promised a callback on Friday.')]);
    expect(result.status).toBe('failed');
    expect(statuses(result.outcomes)).toEqual(['created', 'rejected', 'rejected']);
    const [, first, second] = result.outcomes;
    expect(first!.key).toBe(second!.key);
    expect(first!.key).toMatch(/^v1:e:/);
    for (const o of [first!, second!]) {
      expect(o.error).toMatchObject({ code: 'VALIDATION', path: 'intent' });
      expect(o.error!.message).toContain(`actions 1 and 2 share the key ${first!.key} but not their fields or links, so neither is written: give each its own intent`);
      expect(o.attempts).toBe(0);
    }
    expect(crm.activities('note')).toEqual([]);
    expect(crm.calls.create).toBe(0);
    expect(crm.records('contact').map((r) => r.fields)).toEqual([{ email: 'ana@example.com' }]);
    expect(await ledger.get(first!.key)).toBeNull();
  });

  it('handle: with an intent each, the two notes are two actions, both written', async () => {
    const { crm, sync } = setup();
    const result = await sync.handle(EVENT, () => [CONTACT, note('Asked for a refund.', { intent: 'refund' }), note('Promised a callback on Friday.', { intent: 'callback' })]);
    expect(result.status).toBe('completed');
    expect(statuses(result.outcomes)).toEqual(['created', 'created', 'created']);
    expect(result.outcomes[1]!.key).not.toBe(result.outcomes[2]!.key);
    expect(crm.activities('note').map((n) => n.fields.body).sort()).toEqual(['Asked for a refund.', 'Promised a callback on Friday.']);
  });

  it('handle: an identical duplicate stays one action: one note, the second replayed, the event completed', async () => {
    const { crm, sync } = setup();
    const result = await sync.handle(EVENT, () => [CONTACT, note('Asked for a refund.'), note('Asked for a refund.')]);
    expect(result.status).toBe('completed');
    expect(statuses(result.outcomes)).toEqual(['created', 'created', 'replayed']);
    expect(result.outcomes[2]!.recordId).toBe(result.outcomes[1]!.recordId);
    expect(crm.activities('note')).toHaveLength(1);
    expect(crm.calls.create).toBe(1);
  });

  it('handle: the same event delivered again with other model text is replayed, 0 calls, however its actions changed', async () => {
    const { crm, sync } = setup();
    const first = await sync.handle(EVENT, () => [CONTACT, note('Asked for a refund.')]);
    const again = await sync.handle(EVENT, () => [CONTACT, note('Wants the money back.'), note('A second note the model now adds.')]);
    expect(first.status).toBe('completed');
    expect(again.status).toBe('replayed');
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['Asked for a refund.']);
    expect(crm.calls.create).toBe(1);
  });

  it('applyMany: a colliding pair is rejected, the rest of the call is written; the same note in a later call with other text is replayed', async () => {
    const { crm, ledger, sync } = setup();
    const outcomes = await sync.applyMany([keyed(CONTACT), keyed(note('Asked for a refund.')), keyed(note('Promised a callback.')), keyed(note('Another event.'), 'evt-78')]);
    expect(statuses(outcomes)).toEqual(['created', 'rejected', 'rejected', 'created']);
    expect(outcomes[1]!.error!.message).toContain(`actions 1 and 2 share the key ${outcomes[1]!.key}`);
    expect(outcomes[1]!.error!.message).toContain('give each its own intent');
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['Another event.']);
    expect(await ledger.get(outcomes[1]!.key)).toBeNull();

    // Later deliveries, one note each: the first is written, a redelivery with other text replays it.
    const [written] = await sync.applyMany([keyed(note('Asked for a refund.'))]);
    const [replayed] = await sync.applyMany([keyed(note('The customer wants the money back.'))]);
    expect(written!.status).toBe('created');
    expect(replayed).toMatchObject({ status: 'replayed', key: written!.key, recordId: written!.recordId });
    expect(crm.activities('note').map((n) => n.fields.body).sort()).toEqual(['Another event.', 'Asked for a refund.']);
  });

  it('applyMany: two upserts of one record under one event id with different values are both rejected; the record is not written', async () => {
    const { crm, sync } = setup();
    const outcomes = await sync.applyMany([keyed({ ...CONTACT, fields: { lifecyclestage: 'lead' } }), keyed({ ...CONTACT, fields: { lifecyclestage: 'customer' } })]);
    expect(statuses(outcomes)).toEqual(['rejected', 'rejected']);
    expect(outcomes[0]!.error).toMatchObject({ code: 'VALIDATION', path: 'intent' });
    expect(crm.records('contact')).toEqual([]);
    expect(crm.calls.upsert).toBe(0);
  });

  it('rejects every action sharing the key when any differs, identical ones included', async () => {
    const { crm, sync } = setup();
    const outcomes = await sync.applyMany([keyed(CONTACT), keyed(note('A')), keyed(note('A')), keyed(note('B'))]);
    expect(statuses(outcomes)).toEqual(['created', 'rejected', 'rejected', 'rejected']);
    expect(outcomes[3]!.error!.message).toContain('actions 1, 2 and 3 share the key');
    expect(outcomes[3]!.error!.message).toContain('so none of them is written');
    expect(crm.activities('note')).toEqual([]);
  });

  it('takes actions equal after normalization, and links in another order, as one action', async () => {
    const objects: Record<string, ObjectSpec> = {
      company: { kind: 'record', fields: ['name'] },
      contact: {
        kind: 'record', fields: ['email', 'lifecyclestage'], links: ['company'],
        definitions: { lifecyclestage: { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }] }, email: { type: 'email' } },
      },
      note: { kind: 'activity', fields: ['body'], parents: ['contact', 'company'] },
    };
    const { crm, sync } = setup({ objects });
    const company = (id: string) => keyed({ op: 'upsert' as const, object: 'company', externalId: id, fields: { name: id } });
    const links = [{ object: 'company', externalId: 'acme' }, { object: 'company', externalId: 'globex' }];
    const outcomes = await sync.applyMany([
      company('acme'),
      company('globex'),
      keyed({ ...CONTACT, fields: { email: 'ana@example.com', lifecyclestage: 'customer' }, links }),
      keyed({ ...CONTACT, fields: { email: ' ana@example.com', lifecyclestage: 'Customer' }, links: [...links].reverse() }),
      keyed(note('Renewal call.', { links })),
      keyed(note('Renewal call.', { links: [...links].reverse() })),
    ]);
    expect(statuses(outcomes)).toEqual(['created', 'created', 'created', 'replayed', 'created', 'replayed']);
    expect(crm.records('contact').map((r) => r.fields)).toEqual([{ email: 'ana@example.com', lifecyclestage: 'customer' }]);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('sharedKeys "replay": a call of several deliveries writes the first and replays the later ones, whatever their text', async () => {
    const { crm, sync } = setup();
    const outcomes = await sync.applyMany([keyed(CONTACT), keyed(note('Asked for a refund.')), keyed(note('Wants the money back.'))], { sharedKeys: 'replay' });
    expect(statuses(outcomes)).toEqual(['created', 'created', 'replayed']);
    expect(outcomes[2]!.recordId).toBe(outcomes[1]!.recordId);
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['Asked for a refund.']);
  });

  it('applyEach walks deliveries: a later line under the same key with other text is replayed', async () => {
    const { crm, sync } = setup();
    const got: Outcome[] = [];
    for await (const settled of sync.applyEach([keyed(CONTACT), keyed(note('Asked for a refund.')), keyed(note('Wants the money back.'))], { batchSize: 10 })) {
      for (const { index, outcome } of settled) got[index] = outcome;
    }
    expect(statuses(got)).toEqual(['created', 'created', 'replayed']);
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['Asked for a refund.']);
  });

  it('leaves keyless creates to the dedupe window: two notes with other text close in time are one, the second suppressed', async () => {
    const { crm, sync } = setup();
    const keyless = (body: string, occurredAt: string) => ({ source: 'gong', occurredAt, ...note(body) });
    const outcomes = await sync.applyMany([keyed(CONTACT), keyless('Call summary.', AT), keyless('Call summary, reworded.', '2026-12-01T10:02:00Z')]);
    expect(statuses(outcomes)).toEqual(['created', 'created', 'suppressed']);
    expect(crm.activities('note')).toHaveLength(1);
  });

  it('a handle whose applyMany carries other deliveries too (a worker\'s coalesced call) rejects the event\'s clash itself and sends only the rest', async () => {
    const { crm, ledger, sync } = setup();
    const sent: unknown[][] = [];
    const steps = guardedSteps({
      ledger, clock: ledgerClock(ledger, { now: Date.now }), leaseMs: 60_000, retentionMs: null, sleep: async () => undefined, read: sync.read,
      prepare: sync.prepare,
      applyMany: async (actions) => {
        sent.push([...actions]);
        return sync.applyMany(actions, { sharedKeys: 'replay' });
      },
    });
    const handler = (ctx: HandleContext) => {
      void ctx;
      return [CONTACT, note('Asked for a refund.'), note('Promised a callback.'), note('Asked for a refund.', { intent: 'refund' })];
    };
    const result = await steps.handle(EVENT, handler);
    expect(result.status).toBe('failed');
    expect(statuses(result.outcomes)).toEqual(['created', 'rejected', 'rejected', 'created']);
    expect(result.outcomes[1]!.error!.message).toContain(`share the key ${result.outcomes[1]!.key}`);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toHaveLength(2);
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['Asked for a refund.']);
  });
});
