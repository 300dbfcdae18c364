/**
 * createMcpServer in process: the SDK's Client over a linked in-memory transport, the real HubSpot
 * client against a fake HubSpot on loopback, a memory ledger.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync, openLedger, type Sync } from '../../src/index.js';
import { createMcpServer, defaultSourceOf } from '../../src/mcp/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { HUBSPOT_OBJECTS } from '../cli/helpers.js';
import { adapterReads, badArguments, call, contactFor, expectGeneratedTools, keylessNoteThrice, keylessUpsertCorrection, notesWith, noteThriceWithOneKey, TIMESTAMP, upsertTwiceWithOneKey } from './helpers.js';

let fake: FakeHubSpot;
let stopFake: () => Promise<void>;
let sync: Sync;
const clients: Client[] = [];

async function connect(name: string, extra?: (server: ReturnType<typeof createMcpServer>) => void): Promise<Client> {
  const server = createMcpServer({ sync, dedupeWindowMs: 600_000 });
  extra?.(server);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  fake = fakeHubSpot();
  const server = await fake.listen();
  stopFake = server.close;
  const adapter = hubspotAdapter({ accessToken: 'pat-na1-mcp-test-0000', basePath: server.basePath, objects: HUBSPOT_OBJECTS as HubSpotAdapterOptions['objects'], rateBudget: unlimitedRateBudget });
  sync = createSync({ adapter, ledger: openLedger('memory:'), dedupeWindowMs: 600_000 });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await sync.close();
  await stopFake();
});

describe('createMcpServer', () => {
  it('lists the tools generated from the configured objects, with their schemas and hints', async () => {
    await expectGeneratedTools(await connect('lister'), adapterReads(sync.adapter));
  });

  it('replays an upsert repeated with the same key', async () => {
    await upsertTwiceWithOneKey(await connect('agent-a'), fake, 'mem-upsert');
  });

  it('creates one note for three calls with one key and different text', async () => {
    await noteThriceWithOneKey(await connect('agent-a'), fake, 'mem-note');
  });

  it('writes a keyless upsert that corrects a value a moment later, and sends nothing for the same values', async () => {
    await keylessUpsertCorrection(await connect('agent-a'), fake, 'mem-correction');
  });

  it('suppresses identical keyless creates inside the window', async () => {
    await keylessNoteThrice(await connect('agent-a'), fake, 'mem-keyless');
  });

  it('rejects bad arguments with their path, writing nothing', async () => {
    await badArguments(await connect('agent-a'), fake, 'mem-bad');
  });

  it('refuses a key reused on another target, naming the key, and writes nothing', async () => {
    const client = await connect('agent-a');
    const first = await contactFor(client, 'mem-conflict-1');
    const second = await contactFor(client, 'mem-conflict-2');
    const ok = await call(client, 'create_note', { target: { object: 'contact', externalId: first }, fields: { hs_note_body: 'mem-conflict first', hs_timestamp: TIMESTAMP }, idempotencyKey: 'mem-conflict-key' });
    expect(ok.structured.status).toBe('created');
    const before = fake.count();
    const clash = await call(client, 'create_note', { target: { object: 'contact', externalId: second }, fields: { hs_note_body: 'mem-conflict second', hs_timestamp: TIMESTAMP }, idempotencyKey: 'mem-conflict-key' });
    expect(clash.result.isError).toBe(true);
    expect(clash.structured).toMatchObject({ status: 'rejected', key: ok.structured.key, error: { code: 'KEY_CONFLICT', path: 'idempotencyKey' } });
    expect(clash.text).toBe('rejected: idempotencyKey "mem-conflict-key" was already used for another action (another record, object or intent): a key stands for one action, so use a new one for a new action; nothing was written');
    expect(fake.count()).toBe(before);
    expect(notesWith(fake, 'mem-conflict')).toHaveLength(1);
  });

  it('scopes keys by the client: two agents with the same key write two records', async () => {
    const a = await connect('agent-a');
    const b = await connect('agent-b');
    const ra = await call(a, 'upsert_contact', { externalId: 'mem-scope-a', fields: { email: 'a@example.com' }, idempotencyKey: 'task-1' });
    const rb = await call(b, 'upsert_contact', { externalId: 'mem-scope-b', fields: { email: 'b@example.com' }, idempotencyKey: 'task-1' });
    expect([ra.structured.status, rb.structured.status]).toEqual(['created', 'created']);
    expect(ra.structured.key).not.toBe(rb.structured.key);
    expect(fake.records('contacts').filter((r) => r.properties.ai_external_id?.startsWith('mem-scope-'))).toHaveLength(2);
  });

  it('answers in_flight to a concurrent call with the same key, and get_outcome tells the result after', async () => {
    const client = await connect('agent-a');
    const parent = await contactFor(client, 'mem-flight');
    const args = { target: { object: 'contact', externalId: parent }, fields: { hs_note_body: 'mem-flight note', hs_timestamp: TIMESTAMP }, idempotencyKey: 'mem-flight-key' };
    fake.setFaults({ latencyMs: 300 });
    const [one, two] = await Promise.all([call(client, 'create_note', args), new Promise((r) => setTimeout(r, 100)).then(() => call(client, 'create_note', args))]);
    fake.setFaults({});
    expect([one.structured.status, two.structured.status]).toEqual(['created', 'in_flight']);
    expect(two.result.isError).toBeUndefined();
    expect(two.text).toContain(`wait a few seconds, then call get_outcome with key "${String(two.structured.key)}"`);
    const byKey = await call(client, 'get_outcome', { key: String(two.structured.key) });
    const byIdempotencyKey = await call(client, 'get_outcome', { key: 'mem-flight-key' });
    expect(byKey.structured).toMatchObject({ status: 'created', recordId: one.structured.recordId, attempts: 1 });
    expect(byIdempotencyKey.structured).toEqual(byKey.structured);
    expect(byKey.text).toBe(`created: the call under "${String(two.structured.key)}" ended created (record ${String(one.structured.recordId)})`);
    expect(notesWith(fake, 'mem-flight')).toHaveLength(1);
  });

  it('get_outcome finds nothing for a key never used, and another client cannot read by idempotencyKey', async () => {
    const a = await connect('agent-a');
    const other = await connect('agent-z');
    expect((await call(a, 'get_outcome', { key: 'never-used' })).structured).toEqual({ key: 'never-used', status: 'not_found' });
    expect((await call(other, 'get_outcome', { key: 'mem-flight-key' })).structured.status).toBe('not_found');
    const bad = await call(a, 'get_outcome', {});
    expect(bad.result.isError).toBe(true);
  });

  it('records calls under mcp:<client name>, printable and bounded', () => {
    expect(defaultSourceOf({ name: 'claude-ai', version: '0.1' })).toBe('mcp:claude-ai');
    expect(defaultSourceOf({ name: ' bad\u0000\nname ', version: '1' })).toBe('mcp:badname');
    expect(defaultSourceOf(undefined)).toBe('mcp:unknown-client');
    expect(defaultSourceOf({ name: 'x'.repeat(500), version: '1' })).toHaveLength(154);
  });

  it('returns the SDK server, so users register tools of their own beside ours', async () => {
    const client = await connect('agent-a', (server) => server.registerTool('ping', { description: 'ping' }, () => ({ content: [{ type: 'text', text: 'pong' }] })));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ping');
    expect((await call(client, 'ping', {})).text).toBe('pong');
  });
});
