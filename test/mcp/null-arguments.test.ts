/**
 * What a null and `clear` mean to the MCP server's write tools (they take toolCallAction's
 * json-schema reading): a field left out is kept, a null or a name in `clear` empties it, and a
 * null for an optional argument (`links`, `idempotencyKey`, ...) is not given. The SDK's real
 * Client in process, the real HubSpot client against a fake HubSpot on loopback.
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

const objects: HubSpotAdapterOptions['objects'] = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'amount', 'dealstage', 'pipeline', 'closedate'], links: { company: 341 } },
};
const FIVE = { dealname: 'Acme renewal', amount: 50000, dealstage: 'qualifiedtobuy', pipeline: 'default', closedate: '2027-01-15' };
const WRITTEN = { ...FIVE, amount: '50000' };

let fake: FakeHubSpot;
let stop: () => Promise<void>;
let sync: Sync;
let client: Client;

beforeAll(async () => {
  fake = fakeHubSpot();
  const served = await fake.listen();
  stop = served.close;
  const adapter = hubspotAdapter({ accessToken: 'pat-na1-mcp-nulls-0000', basePath: served.basePath, objects, rateBudget: unlimitedRateBudget });
  sync = createSync({ adapter, ledger: openLedger('memory:') });
  const server = createMcpServer({ sync });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'nulls-agent', version: '1.0.0' });
  await client.connect(clientSide);
});
afterAll(async () => {
  await client.close();
  await sync.close();
  await stop();
});

const deal = (externalId: string) => {
  const found = fake.records('deals').filter((r) => r.properties.ai_external_id === externalId);
  expect(found).toHaveLength(1);
  const { dealname, amount, dealstage, pipeline, closedate } = found[0]!.properties;
  return { record: found[0]!, fields: { dealname, amount, dealstage, pipeline, closedate } };
};
async function dealWithFive(externalId: string): Promise<void> {
  const r = await call(client, 'upsert_deal', { externalId, fields: FIVE, idempotencyKey: `${externalId}-seed` });
  expect(r.structured.status).toBe('created');
  expect(deal(externalId).fields).toEqual(WRITTEN);
}

describe('MCP write tools: null, clear and links', () => {
  it('advertises clear on upsert_deal, an array of its field names', async () => {
    const { tools } = await client.listTools();
    const upsert = tools.find((t) => t.name === 'upsert_deal')!;
    const clear = (upsert.inputSchema.properties as Record<string, { type?: string; items?: { enum?: string[] }; description?: string }>).clear!;
    expect(clear).toMatchObject({ type: 'array', items: { enum: ['dealname', 'amount', 'dealstage', 'pipeline', 'closedate'] } });
    expect(upsert.inputSchema.required).toEqual(['externalId', 'fields']);
  });

  it('keeps the fields left out, and empties a field sent as null and one named in clear', async () => {
    await dealWithFive('mcp-nulls-1');
    const r = await call(client, 'upsert_deal', { externalId: 'mcp-nulls-1', fields: { amount: 60000, dealstage: null }, clear: ['closedate'], idempotencyKey: 'mcp-nulls-1-a' });
    expect(r.structured.status).toBe('updated');
    expect(deal('mcp-nulls-1').fields).toEqual({ ...WRITTEN, amount: '60000', dealstage: '', closedate: '' });
  });

  it('takes links: null (and a null idempotencyKey and occurredAt) as not given: the deal is written with no links', async () => {
    const r = await call(client, 'upsert_deal', { externalId: 'mcp-nulls-2', fields: FIVE, links: null, idempotencyKey: null, occurredAt: null });
    expect(r.structured.status).toBe('created');
    expect(r.structured.dedupe).toBeDefined();
    expect(deal('mcp-nulls-2').record.associations.companies ?? []).toEqual([]);
  });

  it('rejects a field both given and named in clear and a name off the allowlist, listing both, and writes nothing', async () => {
    await dealWithFive('mcp-nulls-3');
    const before = fake.count();
    const r = await call(client, 'upsert_deal', { externalId: 'mcp-nulls-3', fields: { amount: 1 }, clear: ['amount', 'hs_priority'], idempotencyKey: 'mcp-nulls-3-a' });
    expect(r.result.isError).toBe(true);
    expect(r.structured).toMatchObject({ status: 'rejected', key: '' });
    expect(r.structured.problems).toEqual([
      { path: 'clear.1', field: 'clear.1', reason: '"hs_priority" is not on the allowlist for "deal" (allowed: dealname, amount, dealstage, pipeline, closedate)' },
      { path: 'fields.amount', field: 'amount', reason: 'is given a value and also named in clear: give it a value or empty it, not both' },
    ]);
    expect(fake.count()).toBe(before);
    expect(deal('mcp-nulls-3').fields).toEqual(WRITTEN);
  });
});
