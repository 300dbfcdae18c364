/**
 * Field values in the engine, on the in-memory CRM: with definitions, a bad value is rejected
 * before any claim (0 calls, nothing in the ledger) while its neighbours are written in one batch,
 * a sloppy value is normalized and the outcome says so, and the unchanged mark sees the normalized
 * value; without definitions, values pass as they do today.
 */
import { describe, expect, it } from 'vitest';
import type { ObjectSpec } from '../../../src/adapter.js';
import { createSync, openLedger } from '../../../src/index.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const withDefinitions: Record<string, ObjectSpec> = {
  contact: {
    kind: 'record', fields: ['email', 'lifecyclestage', 'amount'],
    definitions: {
      lifecyclestage: { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }] },
      amount: { type: 'number' },
      email: { type: 'email' },
    },
  },
};
const upsert = (n: number, fields: Record<string, unknown>, eventId = `evt-${n}`) => ({ source: 'crm', eventId, occurredAt: '2026-12-01T10:00:00Z', op: 'upsert', object: 'contact', externalId: `c-${n}`, fields });

describe('field values in the engine', () => {
  it('rejects what cannot be made valid before any claim, normalizes the rest, and writes the valid neighbours in one batch', async () => {
    const crm = memoryCrm({ objects: withDefinitions });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: crm.adapter, ledger });
    const outcomes = await sync.applyMany([
      upsert(1, { email: 'a@b.co', lifecyclestage: 'Customer ' }),
      upsert(2, { email: 'b@b.co', lifecyclestage: 'client' }),
      upsert(3, { email: 'c@b.co', amount: '$12,000' }),
      upsert(4, { email: ' d@b.co', amount: '12000' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'rejected', 'created']);
    expect(outcomes[0]!.normalized).toEqual([{ field: 'lifecyclestage', from: 'Customer ', to: 'customer' }]);
    expect(outcomes[1]!.error).toMatchObject({ code: 'VALIDATION', path: 'fields.lifecyclestage', message: expect.stringContaining('"client" is not an allowed value; allowed: "lead", "customer"') });
    expect(outcomes[2]!.error!.message).toContain('fields.amount: must be a number with no currency sign');
    // "12000" is written as the number 12000 (its text unchanged, so not reported).
    expect(outcomes[3]!.normalized).toEqual([{ field: 'email', from: ' d@b.co', to: 'd@b.co' }]);
    expect(crm.calls.upsert).toBe(1);
    expect(crm.records('contact').map((r) => r.fields)).toEqual([{ email: 'a@b.co', lifecyclestage: 'customer' }, { email: 'd@b.co', amount: 12000 }]);
    // Nothing of the rejected ones reached the ledger.
    expect(await ledger.get(outcomes[1]!.key)).toBeNull();
    expect(await ledger.get(outcomes[2]!.key)).toBeNull();
  });

  it('judges a later event by its normalized values: "Customer" after "customer" is unchanged, 0 calls', async () => {
    const crm = memoryCrm({ objects: withDefinitions });
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:') });
    await sync.applyMany([upsert(1, { lifecyclestage: 'customer' })]);
    const [again] = await sync.applyMany([upsert(1, { lifecyclestage: 'Customer' }, 'evt-1b')]);
    expect(again).toMatchObject({ status: 'unchanged', normalized: [{ field: 'lifecyclestage', from: 'Customer', to: 'customer' }] });
    expect(crm.calls.upsert).toBe(1);
  });

  it('judges "12000" after 12000 unchanged, and keeps every digit of a longer number, 0 calls for the repeat', async () => {
    const crm = memoryCrm({ objects: withDefinitions });
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:') });
    await sync.applyMany([upsert(1, { amount: 12000 }), upsert(2, { amount: '12345678901234567890' })]);
    const again = await sync.applyMany([upsert(1, { amount: '12000' }, 'evt-1b'), upsert(2, { amount: '12345678901234567890' }, 'evt-2b')]);
    expect(again.map((o) => o.status)).toEqual(['unchanged', 'unchanged']);
    expect(again.map((o) => o.normalized)).toEqual([undefined, undefined]);
    expect(crm.calls.upsert).toBe(1);
    expect(crm.records('contact').map((r) => r.fields.amount)).toEqual([12000, '12345678901234567890']);
  });

  it('joins a multi-select given as a list the CRM\'s way, and refuses a list anywhere else, with 0 calls', async () => {
    const objects: Record<string, ObjectSpec> = {
      contact: {
        kind: 'record', fields: ['interests', 'lifecyclestage', 'email'],
        definitions: {
          interests: { type: 'enumeration', multiple: true, options: [{ value: 'seats', label: 'Seats' }, { value: 'support', label: 'Support' }] },
          lifecyclestage: { type: 'enumeration', options: ['lead', 'customer'] },
        },
      },
    };
    const crm = memoryCrm({ objects });
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:') });
    const outcomes = await sync.applyMany([
      upsert(1, { interests: ['Support', ' seats', 'support'] }),
      upsert(2, { lifecyclestage: ['lead'] }),
      upsert(3, { email: ['a@b.co'] }),
      upsert(4, { interests: ['seats', 'golf'] }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'rejected', 'rejected']);
    expect(outcomes[0]!.normalized).toEqual([{ field: 'interests', from: ['Support', ' seats', 'support'], to: 'support;seats' }]);
    expect(outcomes[1]!.error!.message).toContain('fields.lifecyclestage: a list of values is only for a multi-select field with a field definition; send one value');
    expect(outcomes[2]!.error!.message).toContain('fields.email: a list of values is only for a multi-select field with a field definition (crm-upsert schema pull)');
    expect(outcomes[3]!.error!.message).toContain('"golf" is not an allowed value; allowed: "seats", "support"');
    expect(crm.records('contact').map((r) => r.fields)).toEqual([{ interests: 'support;seats' }]);
    expect(crm.calls.upsert).toBe(1);
    const strict = createSync({ adapter: memoryCrm({ objects }).adapter, ledger: openLedger('memory:'), normalize: false });
    const [unjoined] = await strict.applyMany([upsert(5, { interests: ['seats'] })]);
    expect(unjoined!.error!.message).toContain('must be allowed values joined with ";" (got a list)');
  });

  it('with normalize: false takes only values already in the CRM\'s form', async () => {
    const crm = memoryCrm({ objects: withDefinitions });
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:'), normalize: false });
    const outcomes = await sync.applyMany([upsert(1, { lifecyclestage: 'Customer' }), upsert(2, { lifecyclestage: 'customer' })]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'created']);
  });

  it('without definitions sends values as given, as before', async () => {
    const crm = memoryCrm({ objects: { contact: { kind: 'record', fields: ['email', 'lifecyclestage', 'amount'] } } });
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:') });
    const [o] = await sync.applyMany([upsert(1, { lifecyclestage: 'client', amount: '$12,000' })]);
    expect(o).toMatchObject({ status: 'created' });
    expect(o!.normalized).toBeUndefined();
    expect(crm.records('contact')[0]!.fields).toEqual({ lifecyclestage: 'client', amount: '$12,000' });
  });
});
