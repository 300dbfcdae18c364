import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { harness, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 8, minTimeoutMs: 5, maxTimeoutMs: 50 };
const upsert = (n: number, fields: Record<string, string>) => ({ source: 'crm-test', eventId: `evt-v${n}`, op: 'upsert', object: 'contact', externalId: `V-${n}`, fields });
const note = (n: number, contact: string, hs_timestamp: string) => ({
  source: 'crm-test', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: contact }, fields: { hs_note_body: `note ${n}`, hs_timestamp },
});
const statuses = (outcomes: Outcome[]) => {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
};

describe('hubspotAdapter when HubSpot refuses a value (definitions stale) over loopback', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('writes 99 of 100 contacts in 2 requests and fails the one naming field, code and value', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const actions = Array.from({ length: 100 }, (_, i) => upsert(i, { email: `v${i}@example.test`, lifecyclestage: i === 63 ? 'client' : 'lead' }));
    const outcomes = await sync.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 99, failed: 1 });
    const failed = outcomes[63]!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ retryable: false, vendorCode: 'INVALID_OPTION', path: 'fields.lifecyclestage' });
    expect(failed.error?.message).toContain('lifecyclestage = "client" (INVALID_OPTION: client was not one of the allowed options: [subscriber, lead,');
    expect(failed.error?.message).toMatch(/the field definitions may be stale: run `crm-upsert schema pull`$/);
    // The refused batch, then the other 99 in one request: not the 2n-1 of halving.
    expect(h.fake.count('batch/upsert')).toBe(2);
    expect(h.fake.count()).toBe(2);
    expect(h.fake.records('contacts')).toHaveLength(99);
    expect(h.fake.records('contacts').map((c) => c.properties.ai_external_id)).not.toContain('V-63');
    await sync.close();
  });

  it('isolates two refused values in one batch in 3 requests, each failure naming its own value', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const bad: Record<number, string> = { 10: 'Customer ', 70: 'client' };
    const actions = Array.from({ length: 100 }, (_, i) => upsert(i, { lifecyclestage: bad[i] ?? 'customer' }));
    const outcomes = await sync.applyMany(actions);
    expect(statuses(outcomes)).toEqual({ created: 98, failed: 2 });
    expect(outcomes[10]!.error?.message).toContain('lifecyclestage = "Customer " (LEADING_TRAILING_WHITESPACE');
    expect(outcomes[70]!.error?.message).toContain('lifecyclestage = "client" (INVALID_OPTION');
    expect(h.fake.count('batch/upsert')).toBe(3);
    expect(h.fake.records('contacts')).toHaveLength(98);
    await sync.close();
  });

  it('leaves a refusal every input shares to the engine, which halves the batch as before', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany(Array.from({ length: 4 }, (_, i) => upsert(i, { lifecyclestage: 'client' })));
    expect(statuses(outcomes)).toEqual({ failed: 4 });
    for (const o of outcomes) expect(o.error?.message).toContain('lifecyclestage = "client" (INVALID_OPTION');
    // 4, then 2 + 2, then 1 + 1 + 1 + 1: the halving a whole-batch refusal got before.
    expect(h.fake.count('batch/upsert')).toBe(7);
    expect(h.fake.records('contacts')).toHaveLength(0);
    await sync.close();
  });

  it('creates notes in one traced batch: HubSpot answers 207, the bad one fails naming its value, the others are created', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.applyMany([upsert(1, { email: 'n1@example.test' })]);
    const outcomes = await sync.applyMany([note(1, 'V-1', '2026-11-28T10:00:00Z'), note(2, 'V-1', '28/11/2026 10:00'), note(3, 'V-1', '1764324000000')]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'failed', 'created']);
    expect(outcomes[1]!.error?.message).toContain('hs_timestamp = "28/11/2026 10:00" (INVALID_DATE');
    expect(outcomes[1]!.error?.message).toMatch(/run `crm-upsert schema pull`$/);
    expect(h.fake.count('notes/batch/create')).toBe(1);
    expect(h.fake.records('notes')).toHaveLength(2);
    await sync.close();
  });
});

describe('hubspotAdapter with pulled definitions: values reach HubSpot with their meaning intact', () => {
  let h: Harness;
  afterEach(() => h?.stop());
  const deal = (n: number, fields: Record<string, unknown>) => ({ source: 'crm-test', eventId: `evt-d${n}`, op: 'upsert', object: 'deal', externalId: `D-${n}`, fields: { dealname: `Deal ${n}`, ...fields } });
  const dealNote = (n: number, hs_timestamp: string) => ({
    source: 'crm-test', eventId: `evt-dn${n}`, op: 'create', object: 'note', target: { object: 'deal', externalId: 'D-1' }, fields: { hs_note_body: `note ${n}`, hs_timestamp },
  });

  it('stores every digit of a number as sent, a valid date-time as given, and refuses a rolled-over date with 0 calls', async () => {
    h = await harness('loopback');
    const section = { ...structuredClone(hubspotCli.salesStarter.section), basePath: h.basePath };
    const fieldDefinitions = await hubspotCli.pullFields!(section, { HUBSPOT_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: h.basePath, objects: section.objects, fieldDefinitions });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const before = h.fake.count();

    const deals = await sync.applyMany([
      deal(1, { amount: '12345678901234567890' }),
      deal(2, { amount: '0.10000000000000000555' }),
      deal(3, { amount: 48000 }),
      deal(4, { amount: ' +007.50' }),
      deal(5, { closedate: '2026-02-30' }),
      deal(6, { closedate: '2026-12-01T19:00:00-05:00' }),
    ]);
    // closedate is a datetime (as in real portals): a time of day is its to keep.
    expect(deals.map((o) => o.status)).toEqual(['created', 'created', 'created', 'created', 'rejected', 'created']);
    expect(deals.map((o) => o.normalized)).toEqual([
      undefined, undefined, undefined, [{ field: 'amount', from: ' +007.50', to: '7.50' }], undefined,
      [{ field: 'closedate', from: '2026-12-01T19:00:00-05:00', to: '2026-12-02T00:00:00Z' }],
    ]);
    expect(deals[4]!.error!.message).toContain('fields.closedate: must be an ISO 8601 date-time with its offset, e.g. 2026-11-28T10:00:00Z; "2026-02-30" is not a day of the calendar (February 2026 has 28 days)');
    expect(h.fake.records('deals').map((d) => d.properties.amount)).toEqual(['12345678901234567890', '0.10000000000000000555', '48000', '7.50', undefined]);
    expect(h.fake.records('deals')[4]!.properties.closedate).toBe('2026-12-02T00:00:00Z');
    // One deals upsert for the five valid ones; nothing for the one refused.
    expect(h.fake.count() - before).toBe(1);

    const notes = await sync.applyMany([dealNote(1, '2026-11-28T10:00:00Z'), dealNote(2, '2026-02-30T10:00:00Z')]);
    expect(notes.map((o) => o.status)).toEqual(['created', 'rejected']);
    expect(notes[0]!.normalized).toBeUndefined();
    expect(notes[1]!.error!.message).toContain('fields.hs_timestamp: must be an ISO 8601 date-time with its offset, e.g. 2026-11-28T10:00:00Z; "2026-02-30T10:00:00Z" is not a day of the calendar');
    expect(h.fake.records('notes').map((n) => n.properties.hs_timestamp)).toEqual(['2026-11-28T10:00:00Z']);
    await sync.close();
  });
});
