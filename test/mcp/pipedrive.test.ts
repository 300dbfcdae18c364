/**
 * The MCP tools on the Pipedrive adapter, in process (the SDK's real Client over a linked
 * in-memory transport, fakePipedrive on loopback): an agent's upsert retried under one key writes
 * one person, get_ reads it back by external id and by email, and a note retried under one key
 * is one note.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { PipedriveAdapterOptions } from '../../adapters/pipedrive/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { harness, objects, type Harness } from '../e2e/pipedrive-helpers.js';
import { call } from './helpers.js';

const withLookup: PipedriveAdapterOptions['objects'] = { ...objects, contact: { ...objects.contact!, lookupBy: ['email'] } as PipedriveAdapterOptions['objects'][string] };

describe('MCP tools on pipedriveAdapter', () => {
  let h: Harness | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    await h?.stop();
  });

  it('writes once per key and reads back what it wrote, while the search index lags', async () => {
    h = await harness({ searchLagMs: 60_000 }, { objects: withLookup });
    const server = createMcpServer({ sync: createSync({ adapter: h.adapter, ledger: openLedger('memory:') }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 'pipedrive-agent', version: '1.0.0' });
    await client.connect(clientSide);

    for (const name of ['Ada', 'Ada Lovelace']) {
      const upserted = await call(client, 'upsert_contact', { externalId: 'P-1', fields: { name, email: 'ada@acme.test' }, idempotencyKey: 'agent-turn-1' });
      expect(upserted.result.isError, upserted.text).toBeFalsy();
    }
    expect(h.fake.records('person')).toHaveLength(1);
    for (const text of ['Ada wants a demo.', 'Ada asked for a demo.']) {
      await call(client, 'create_note', { target: { object: 'contact', externalId: 'P-1' }, fields: { content: text }, idempotencyKey: 'agent-turn-2' });
    }
    expect(h.fake.notes()).toHaveLength(1);

    const byId = await call(client, 'get_contact', { externalId: 'P-1' });
    expect(byId.result.isError, byId.text).toBeFalsy();
    expect((byId.structured.records as { found: boolean; externalId?: string }[])[0]).toMatchObject({ found: true, externalId: 'P-1' });
    const byEmail = await call(client, 'get_contact', { email: 'ada@acme.test' });
    expect((byEmail.structured.records as { found: boolean; externalId?: string }[])[0]).toMatchObject({ found: true, externalId: 'P-1' });
  });
});
