/**
 * A portal whose language is Portuguese: HubSpot words every error `message` in it. The fake's
 * `localize` does the same, so the whole path (real SDK client, adapter, engine) meets refusals
 * whose words it cannot read: each is still classified and placed by its codes, property names
 * and context, as the English twin is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { parentMemoKey, type RecordWrite } from '../../src/adapter.js';
import { createSync, openLedger } from '../../src/index.js';
import { harness, objects, type Harness } from './hubspot-helpers.js';

const PORTUGUESE: [RegExp, string][] = [
  [/^Property values were not valid$/, 'Os valores das propriedades não eram válidos'],
  [/^Email address (.*) is invalid$/s, 'O endereço de email $1 não é válido'],
  [/^One or more associations are invalid$/, 'Uma ou mais associações são inválidas'],
  [/^Unable to perform update\/upsert by non-unique (\S+) property$/, 'Não é possível atualizar ou inserir pela propriedade não exclusiva $1'],
];
const seen: string[] = [];
/** Portuguese for the messages these tests meet; any other message would stay English and fail the check below. */
const portuguese = (message: string) => {
  const rule = PORTUGUESE.find(([re]) => re.test(message));
  const out = rule ? message.replace(rule[0], rule[1]) : message;
  seen.push(out);
  return out;
};

const fast = { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 };
const stop: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stop.splice(0)) await s();
  seen.length = 0;
});

const withCompany: HubSpotAdapterOptions['objects'] = {
  ...objects,
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  contact: { ...(objects.contact as Extract<HubSpotAdapterOptions['objects'][string], { kind: 'record' }>), links: { company: 279 } },
};

async function open(adapterObjects: HubSpotAdapterOptions['objects'] = withCompany): Promise<Harness> {
  const h = await harness('loopback', { localize: portuguese }, { objects: adapterObjects });
  stop.push(h.stop);
  return h;
}
const contact = (n: number, fields: Record<string, unknown>, links?: { object: string; externalId: string }[]) => ({
  source: 'app', eventId: `c-${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields, ...(links ? { links } : {}),
});

describe('HubSpot refusals worded in Portuguese', () => {
  it('fails only the contact whose email HubSpot refuses, naming the field, and writes its neighbours in one more request', async () => {
    // The engine checks a contact's email before sending; the adapter is called directly so the
    // address reaches HubSpot, as one from an older version of a definitions rule would.
    const h = await open();
    const write = (n: number, email: string): RecordWrite => ({ key: `k-${n}`, object: 'contact', externalId: `c-${n}`, fields: { email } });
    const results = await h.adapter.upsertRecords('contact', [write(1, 'ann@northwind.example'), write(2, 'ana at northwind'), write(3, 'bo@northwind.example')], { memo: new Map(), absent: new Set() });
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    const refused = results[1]!;
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error).toMatchObject({ vendorCode: 'INVALID_EMAIL', field: 'email', retryable: false });
    expect(refused.error.message).toContain('O endereço de email ana at northwind não é válido');
    // The refused batch, then the two good contacts again: no halving.
    expect(h.fake.count('contacts/batch/upsert')).toBe(2);
    expect(h.fake.records('contacts').map((r) => r.properties.email).sort()).toEqual(['ann@northwind.example', 'bo@northwind.example']);
    // Every word HubSpot sent was Portuguese.
    expect(seen).toContain('Os valores das propriedades não eram válidos');
    expect(seen.filter((m) => PORTUGUESE.some(([english]) => english.test(m)))).toEqual([]);
  });

  it('places a Portuguese association error on the write whose company is gone; its neighbour is linked', async () => {
    const h = await open();
    const acme = h.fake.state.seed('companies', { ai_external_id: 'acme', name: 'Acme' });
    const context = { memo: new Map<string, string>(), absent: new Set<string>() };
    // An id found earlier in the batch whose company was deleted in HubSpot since.
    context.memo.set(parentMemoKey('company', 'gone'), '999999');
    const write = (n: number, company: string): RecordWrite => ({ key: `k-${n}`, object: 'contact', externalId: `c-${n}`, fields: { email: `c${n}@northwind.example` }, links: [{ object: 'company', externalId: company }] });
    const results = await h.adapter.upsertRecords('contact', [write(1, 'gone'), write(2, 'acme')], context);
    // Placed by the ids it names, not its words: the id is dropped, the company read again, and none holds the external id.
    expect(results[0]).toMatchObject({ ok: false, error: { vendorCode: 'LINK_NOT_FOUND' } });
    expect((results[0] as { error: Error }).error.message).toContain('link company "gone" does not exist');
    expect(results[1]).toMatchObject({ ok: true, created: true });
    const c2 = h.fake.records('contacts').find((r) => r.properties.ai_external_id === 'c-2')!;
    expect(h.fake.associations('contacts', c2.id).map((a) => [a.toId, a.typeId])).toEqual([[acme, 279]]);
    expect(h.fake.core.log.filter((e) => e.endpoint.includes('associations')).map((e) => e.status)).toEqual([207]);
    // acme's read, then the gone company's.
    expect(h.fake.count('companies/batch/read')).toBe(2);
  });

  it('stops at once on an idProperty without unique values, pointing at check-setup: one request, no split', async () => {
    const h = await open({ contact: { kind: 'record', objectType: 'contacts', idProperty: 'firstname', fields: ['email'] } });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany([1, 2, 3, 4].map((n) => contact(n, { email: `c${n}@northwind.example` })));
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(outcomes[0]!.error!.message).toContain('propriedade não exclusiva firstname');
    expect(outcomes[0]!.error!.message).toContain('crm-upsert check-setup');
    expect(h.fake.count('contacts/batch/upsert')).toBe(1);
    await sync.close();
  });
});
