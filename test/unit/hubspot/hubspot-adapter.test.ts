import { afterEach, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../../adapters/hubspot/index.js';
import { parentMemoKey, type ActivityWrite, type RecordWrite } from '../../../src/adapter.js';
import { ConfigError, CrmError } from '../../../src/errors.js';
import type { RateBudget } from '../../../src/rate-budget.js';
import { fakeHubSpot, type FakeHubSpot } from '../../../adapters/testing/index.js';

const TOKEN = 'pat-na1-unit-adapter-3b9d';
const objects: HubSpotAdapterOptions['objects'] = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
};
const contact = (n: number): RecordWrite => ({ key: `k-${n}`, object: 'contact', externalId: `C-${n}`, fields: { email: `c${n}@x.test` } });
const note = (key: string, parent: string): ActivityWrite => ({ key, object: 'note', parent: { object: 'contact', externalId: parent }, fields: { hs_note_body: key, hs_timestamp: '2026-11-29T10:00:00Z' } });

class ClaimLost extends Error {}

describe('hubspotAdapter (real @hubspot/api-client against the fake)', () => {
  let fake: FakeHubSpot;
  let stop: () => Promise<void>;
  afterEach(() => stop?.());

  async function setup(extra: Partial<HubSpotAdapterOptions> = {}) {
    fake = fakeHubSpot({ token: TOKEN });
    const front = await fake.open('nock', `https://hubspot-unit-${Math.random().toString(36).slice(2)}.test`);
    stop = front.stop;
    return hubspotAdapter({ accessToken: TOKEN, basePath: front.url, objects, ...extra });
  }

  describe('beforeSend', () => {
    it('stops an upsert before it leaves: its error propagates unchanged, 0 requests', async () => {
      const adapter = await setup();
      const lost = new ClaimLost('claim lost');
      const err = await adapter.upsertRecords('contact', [contact(1)], { memo: new Map(), beforeSend: () => Promise.reject(lost) }).catch((e: unknown) => e);
      expect(err).toBe(lost);
      expect(fake.count()).toBe(0);
      expect(adapter.apiCalls()).toBe(0);
      expect(fake.records('contacts')).toHaveLength(0);
    });

    it('stops a note create before it leaves (the parent read is not a write), and runs after the budget was granted', async () => {
      const order: string[] = [];
      const budget: RateBudget = { acquire: async () => void order.push('budget') };
      const adapter = await setup({ rateBudget: budget });
      await adapter.upsertRecords('contact', [contact(1)]);
      const memo = new Map([[parentMemoKey('contact', 'C-1'), fake.records('contacts')[0]!.id]]);
      fake.core.resetLog();
      order.length = 0;
      const beforeSend = async () => {
        order.push('beforeSend');
        throw new ClaimLost('claim lost');
      };
      await expect(adapter.createActivities('note', [note('n1', 'C-1')], { memo, beforeSend })).rejects.toBeInstanceOf(ClaimLost);
      expect(order).toEqual(['budget', 'beforeSend']);
      expect(fake.count()).toBe(0);
      expect(fake.records('notes')).toHaveLength(0);
    });

    it('lets the write through when it resolves, once per request', async () => {
      const adapter = await setup();
      let calls = 0;
      await adapter.upsertRecords('contact', [contact(1), contact(2)], { memo: new Map(), beforeSend: async () => void (calls += 1) });
      expect(calls).toBe(1);
      expect(fake.records('contacts')).toHaveLength(2);
    });
  });

  it('makes an input missing from a committed 2xx retryable and possibly written', async () => {
    const adapter = await setup();
    await adapter.upsertRecords('contact', [contact(1), contact(2)]);
    fake.failNext('missing_result', { endpoint: 'notes/batch/create' });
    const results = await adapter.createActivities('note', [note('n1', 'C-1'), note('n2', 'C-2')]);
    expect(results[0]).toMatchObject({ ok: true });
    const missing = results[1]!;
    expect(!missing.ok && missing.error).toMatchObject({ kind: 'transient', ambiguous: true, retryable: true, vendorCode: 'NO_RESULT' });
    expect(fake.records('notes')).toHaveLength(2);
  });

  it('keeps the status of a 5xx whose body is an HTML page served as JSON, and retries it', async () => {
    const adapter = await setup();
    fake.failNext('html_error');
    const err = await adapter.upsertRecords('contact', [contact(1)]).catch((e: unknown) => e);
    const crm = adapter.classifyError(err);
    expect(crm).toBeInstanceOf(CrmError);
    expect(crm).toMatchObject({ kind: 'transient', ambiguous: true, retryable: true, status: 502, vendorCode: 'UNREADABLE_RESPONSE' });
    expect(crm.message).toContain('502 Bad Gateway');
    expect(crm.message.length).toBeLessThan(400);
  });

  it('waits about one second on a SECONDLY 429', async () => {
    const adapter = await setup();
    fake.failNext('secondly_limit');
    const crm = adapter.classifyError(await adapter.upsertRecords('contact', [contact(1)]).catch((e: unknown) => e));
    expect(crm).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000, vendorCode: 'SECONDLY', status: 429 });
  });

  it.each([
    ['conflict', { kind: 'permanent', splittable: true, status: 409 }, /Contact already exists\. Existing ID: 37765128953/],
    ['non_unique_id_property', { kind: 'permanent', splittable: false, status: 400 }, /non-unique ai_external_id property.*check-setup/],
    ['unknown_property', { kind: 'permanent', splittable: false, status: 400 }, /property "email" does not exist.*check-setup/],
  ] as const)('classifies the injected %s response of a 2-input batch', async (fault, shape, message) => {
    const adapter = await setup();
    fake.failNext(fault);
    const crm = adapter.classifyError(await adapter.upsertRecords('contact', [contact(1), contact(2)]).catch((e: unknown) => e));
    expect(crm).toMatchObject(shape);
    expect(crm.message).toMatch(message);
    expect(fake.records('contacts')).toHaveLength(0);
  });
});

describe('hubspotAdapter given an object it was not configured with', () => {
  const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: 'https://hubspot-unknown-object.test', objects });

  it.each([
    ['upsertRecords', () => adapter.upsertRecords('deal', [{ ...contact(1), object: 'deal' }])],
    ['createActivities', () => adapter.createActivities('task', [{ ...note('k', 'C-1'), object: 'task' }])],
    ['findActivities', () => adapter.findActivities('task', [{ ...note('k', 'C-1'), object: 'task' }])],
    ['upsertRecords of an activity object', () => adapter.upsertRecords('note', [contact(1)])],
  ])('%s throws a ConfigError naming the object and the configured ones, sending nothing', async (_name, call) => {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/"(deal|task|note)" is not a configured (record|activity) object; configured: contact \(record\), note \(activity\)/);
    expect(adapter.apiCalls()).toBe(0);
  });
});
