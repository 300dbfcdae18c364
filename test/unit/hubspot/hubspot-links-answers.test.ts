/**
 * writeLinks against a small injected responder standing in for `client.apiRequest`: each answer
 * the v4 association batch create can give (201 as specified, 200 as HubSpot's v3 create answers,
 * 207 with per-input errors, whatever language their words are in) and what it does to the writes.
 */
import { describe, expect, it } from 'vitest';
import type { HubSpotClientLike } from '../../../adapters/hubspot/hubspot-client.js';
import { writeLinks, type LinkIo, type LinkProgress } from '../../../adapters/hubspot/hubspot-links.js';
import { parentMemoKey, type RecordWrite, type WriteResult } from '../../../src/adapter.js';

type RecordConfig = ReturnType<LinkIo['record']>;
const company: RecordConfig = { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] };
const contact: RecordConfig = { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'], links: { company: 279 } };

/** An io whose association call answers `status` with `body`; records the requests. */
function io(status: number, body: unknown) {
  const sent: { path: string; body: unknown }[] = [];
  const client = {
    apiRequest: ({ path, body: b }: { path: string; body?: unknown }) => {
      sent.push({ path, body: b });
      return Promise.resolve({ status, headers: { forEach: () => undefined }, text: () => Promise.resolve(JSON.stringify(body)) });
    },
  } as unknown as HubSpotClientLike;
  const companies = new Map([[parentMemoKey('company', 'acme'), '501'], [parentMemoKey('company', 'gone'), '502'], [parentMemoKey('company', 'closed'), '503']]);
  const linkIo: LinkIo = {
    client,
    write: (call) => call(),
    resolve: (links) => Promise.resolve(new Map(links.flatMap((l) => (companies.has(parentMemoKey(l.object, l.externalId)) ? [[parentMemoKey(l.object, l.externalId), companies.get(parentMemoKey(l.object, l.externalId))!]] : [])))),
    record: (object) => (object === 'company' ? company : contact),
  };
  return { linkIo, sent };
}

const writes: RecordWrite[] = [
  { key: 'k-1', object: 'contact', externalId: 'ann', fields: {}, links: [{ object: 'company', externalId: 'gone' }] },
  { key: 'k-2', object: 'contact', externalId: 'bob', fields: {}, links: [{ object: 'company', externalId: 'acme' }] },
];
const upserted = (): WriteResult[] => [{ ok: true, recordId: '11', created: true }, { ok: true, recordId: '12', created: true }];
const progress = (): LinkProgress => ({ upserted: new Map(), edges: new Set() });
const result = (from: string, to: string) => ({ fromObjectTypeId: '0-1', fromObjectId: Number(from), toObjectTypeId: '0-2', toObjectId: Number(to), labels: [] });
const batch = (results: unknown[], errors: unknown[] = []) => ({ status: 'COMPLETE', results, ...(errors.length > 0 ? { numErrors: errors.length, errors } : {}) });

describe('writeLinks and the association batch create answers', () => {
  it.each([201, 200])('takes a %i with every result as success: both writes ok, both edges confirmed', async (status) => {
    const { linkIo, sent } = io(status, batch([result('11', '502'), result('12', '501')]));
    const p = progress();
    const out = await writeLinks(linkIo, 'contact', contact, writes, upserted(), p);
    expect(out.map((r) => r.ok)).toEqual([true, true]);
    expect(sent.map((s) => s.path)).toEqual(['/crm/v4/associations/contacts/companies/batch/create']);
    expect(p.edges.size).toBe(2);
  });

  it('maps a 207 per input, by the TYPE=id each error names even when its words are not English', async () => {
    const invalid = (id: string) => ({ status: 'error', category: 'VALIDATION_ERROR', message: 'Uma ou mais associações são inválidas', context: { INVALID_OBJECT_IDS: [`COMPANY=${id}`] } });
    const three: RecordWrite[] = [...writes, { key: 'k-3', object: 'contact', externalId: 'cat', fields: {}, links: [{ object: 'company', externalId: 'closed' }] }];
    const { linkIo } = io(207, batch([result('12', '501')], [invalid('503'), invalid('502')]));
    const p = progress();
    const out = await writeLinks(linkIo, 'contact', contact, three, [...upserted(), { ok: true, recordId: '13', created: true }], p);
    for (const i of [0, 2]) {
      expect(out[i]).toMatchObject({ ok: false, error: { kind: 'permanent', retryable: false } });
      expect((out[i] as { error: Error }).error.message).toContain('Uma ou mais associações são inválidas');
    }
    expect(out[1]).toMatchObject({ ok: true });
    expect(p.edges.size).toBe(1);
  });

  it('leaves an input a 2xx does not mention possibly written: retryable, ambiguous', async () => {
    const { linkIo } = io(201, batch([result('12', '501')]));
    const out = await writeLinks(linkIo, 'contact', contact, writes, upserted(), progress());
    expect(out[0]).toMatchObject({ ok: false, error: { vendorCode: 'NO_RESULT', retryable: true, ambiguous: true } });
    expect(out[1]).toMatchObject({ ok: true });
  });
});
