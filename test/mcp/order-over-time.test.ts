/**
 * Order over time through the MCP tools: createMcpServer in process (the SDK's Client over a linked
 * in-memory transport, the real HubSpot client against a fake HubSpot on loopback, a memory
 * ledger). An upsert call with an older occurredAt after a newer one is `superseded`, names the
 * fields and the newer event's time in structuredContent, and sends nothing; one that also sets
 * another field is `updated` with the fields it left.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync, openLedger, type Sync } from '../../src/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { HUBSPOT_OBJECTS } from '../cli/helpers.js';
import { call } from './helpers.js';

const at = (hhmm: string) => `2026-11-30T${hhmm}:00.000Z`;

let fake: FakeHubSpot;
let stopFake: () => Promise<void>;
let sync: Sync;
let client: Client;

beforeAll(async () => {
  fake = fakeHubSpot();
  const server = await fake.listen();
  stopFake = server.close;
  const adapter = hubspotAdapter({ accessToken: 'pat-na1-mcp-order-0000', basePath: server.basePath, objects: HUBSPOT_OBJECTS as HubSpotAdapterOptions['objects'], rateBudget: unlimitedRateBudget });
  sync = createSync({ adapter, ledger: openLedger('memory:') });
  const mcp = createMcpServer({ sync });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  client = new Client({ name: 'order-agent', version: '1.0.0' });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client.close();
  await sync.close();
  await stopFake();
});

describe('MCP upsert tool calls out of event order', () => {
  const held = (externalId: string) => fake.records('contacts').find((c) => c.properties.ai_external_id === externalId)!.properties;

  for (const [keying, key] of [['keyed', (k: string) => ({ idempotencyKey: k })], ['keyless', () => ({})]] as const) {
    it(`${keying}: a call with an older occurredAt after a newer one is superseded, with the fields and newerAt, and sends nothing`, async () => {
      const externalId = `order-${keying}`;
      const upsert = (k: string, time: string, fields: Record<string, unknown>) => call(client, 'upsert_contact', { externalId, fields, occurredAt: at(time), ...key(k) });
      const newer = await upsert(`${keying}-1`, '10:00', { email: `${keying}@example.com`, lifecyclestage: 'customer' });
      expect(newer.structured.status).toBe('created');

      const before = fake.count();
      const older = await upsert(`${keying}-2`, '09:55', { lifecyclestage: 'lead' });
      expect(older.result.isError).toBeFalsy();
      expect(older.structured).toMatchObject({ status: 'superseded', recordId: newer.structured.recordId, superseded: ['lifecyclestage'], newerAt: at('10:00') });
      expect(older.text).toContain(`superseded: contact "${externalId}"`);
      expect(fake.count()).toBe(before);

      const partly = await upsert(`${keying}-3`, '09:50', { lifecyclestage: 'lead', firstname: 'Ana' });
      expect(partly.structured).toMatchObject({ status: 'updated', superseded: ['lifecyclestage'], newerAt: at('10:00') });
      expect(partly.text).toContain('not sent, as a newer event already set them');
      expect(held(externalId)).toMatchObject({ lifecyclestage: 'customer', firstname: 'Ana' });
    });
  }
});
