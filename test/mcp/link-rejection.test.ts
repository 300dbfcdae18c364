/**
 * A write tool called with a link (or a target) to an object the config does not allow: the
 * rejected result says it in the engine's words (docs/api.md), naming the link, the object and
 * what is allowed, the same message `sync.apply` gives for that action; nothing is sent.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync, openLedger, type Sync } from '../../src/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { call } from './helpers.js';

const OBJECTS = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'], links: { company: 279 } },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname'], links: { contact: 3, company: 341 } },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202, company: 190 } },
};

let fake: FakeHubSpot;
let stopFake: () => Promise<void>;
let sync: Sync;
let client: Client;

beforeAll(async () => {
  fake = fakeHubSpot();
  const server = await fake.listen();
  stopFake = server.close;
  const adapter = hubspotAdapter({ accessToken: 'pat-na1-mcp-link-test-0000', basePath: server.basePath, objects: OBJECTS as HubSpotAdapterOptions['objects'], rateBudget: unlimitedRateBudget });
  sync = createSync({ adapter, ledger: openLedger('memory:'), dedupeWindowMs: 600_000 });
  const mcp = createMcpServer({ sync, dedupeWindowMs: 600_000 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  client = new Client({ name: 'link-agent', version: '1.0.0' });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client.close();
  await sync.close();
  await stopFake();
});

describe('a link the config does not allow', () => {
  it('is rejected naming the link path and the allowed objects, as the engine words it, with 0 CRM calls', async () => {
    const before = fake.count();
    const r = await call(client, 'upsert_contact', { externalId: 'c-link-1', fields: { email: 'ana@example.com' }, links: [{ object: 'company', externalId: 'acme' }, { object: 'deal', externalId: 'd-1' }], idempotencyKey: 'link-1' });
    const reason = '"contact" cannot link to "deal"; allowed: company';
    expect(r.result.isError).toBe(true);
    expect(r.structured.status).toBe('rejected');
    expect(r.structured.error).toMatchObject({ code: 'VALIDATION', path: 'links.1.object', message: `links.1.object: ${reason}` });
    expect(r.structured.problems).toEqual([{ path: 'links.1.object', field: 'links.1.object', reason }]);
    expect(r.text).toBe(`rejected: links.1.object: ${reason}; nothing was written`);
    expect(r.text).not.toMatch(/Invalid option|expected one of/);

    // The library says the same of the same action.
    const direct = await sync.apply({ source: 'mcp:link-agent', eventId: 'link-1', op: 'upsert', object: 'contact', externalId: 'c-link-1', fields: { email: 'ana@example.com' }, links: [{ object: 'company', externalId: 'acme' }, { object: 'deal', externalId: 'd-1' }] });
    expect(direct.status).toBe('rejected');
    expect(direct.error?.message).toBe(`[crm-upsert] links.1.object: ${reason}`);
    expect(fake.count()).toBe(before);
    expect(fake.records('contacts')).toHaveLength(0);
  });

  it('words a target that is not a parent the same way, and a link of an activity too', async () => {
    const before = fake.count();
    const target = await call(client, 'create_note', { target: { object: 'deal', externalId: 'd-1' }, fields: { hs_note_body: 'x', hs_timestamp: '2026-12-01T10:00:00Z' }, idempotencyKey: 'link-2' });
    expect(target.structured.problems).toEqual([{ path: 'target.object', field: 'target.object', reason: '"note" cannot attach to "deal"; allowed: contact, company' }]);
    const link = await call(client, 'create_note', { target: { object: 'contact', externalId: 'c-1' }, links: [{ object: 'note', externalId: 'n-1' }], fields: { hs_note_body: 'x', hs_timestamp: '2026-12-01T10:00:00Z' }, idempotencyKey: 'link-3' });
    expect(link.structured.problems).toEqual([{ path: 'links.0.object', field: 'links.0.object', reason: '"note" cannot link to "note"; allowed: contact, company' }]);
    expect(fake.count()).toBe(before);
  });
});
