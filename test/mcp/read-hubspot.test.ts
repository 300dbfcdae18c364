/**
 * The read tools of `crm-upsert mcp` on the real HubSpot adapter: the built CLI spawned over stdio
 * and over Streamable HTTP (with its bearer token), the SDK's real clients, a fake HubSpot on
 * loopback, a pulled field definitions file. An agent describes, reads by external id and by
 * email, reads a deal's owner and linked company, and never sees a property the config does not name.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { formatFieldDefinitions } from '../../schemas/field-definitions.js';
import { ensureBuilt, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { call } from './helpers.js';
import { CRM_TOKEN, httpClient, httpServer, stdioServer, type HttpServer, type StdioServer } from './spawn.js';

const MCP_TOKEN = 'mcp-hubspot-read-token-51c0e8a2f9d4b736';
const STAGES = ['subscriber', 'lead', 'customer'];

const OBJECTS = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name', 'domain'] },
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lifecyclestage'], lookupBy: ['email'], links: { company: 279 } },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'amount'], readFields: ['hubspot_owner_id'], links: { company: 341 } },
};

let fake: FakeHubSpot;
let crm: { basePath: string; close(): Promise<void> };
let config: string;

beforeAll(async () => {
  ensureBuilt();
  fake = fakeHubSpot({ token: CRM_TOKEN });
  crm = await fake.listen();
  const dir = tempDir('crm-upsert-mcp-read-hs-');
  const fieldsFile = join(dir, 'crm-upsert.fields.json');
  writeFileSync(fieldsFile, formatFieldDefinitions({
    crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-12-05',
    objects: { contact: { lifecyclestage: { type: 'enumeration', options: STAGES.map((value) => ({ value, label: value[0]!.toUpperCase() + value.slice(1) })) } } },
  }));
  config = writeHubSpotConfig(dir, crm.basePath, { fieldDefinitions: fieldsFile }, { objects: OBJECTS });
  // Set in HubSpot by people, not by this config: the owner (a readFields property) and a note for the board.
  fake.state.seed('deals', { ai_external_id: 'd-1', dealname: 'Acme renewal', hubspot_owner_id: '777', description: 'board only: walk away under 10k' });
});
afterAll(async () => crm?.close());

/** What every front must do: the agent's order, describe -> get -> write, on the real adapter. */
async function agentSession(client: Client, tag: string): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['describe_contact', 'get_contact', 'get_deal', 'describe_deal', 'upsert_deal', 'get_outcome']));

  const described = await call(client, 'describe_contact', {});
  const fields = described.structured.fields as { name: string; writable: boolean; allowed?: string[] }[];
  expect(fields.map((f) => f.name)).toEqual(['email', 'firstname', 'lifecyclestage']);
  expect(fields.find((f) => f.name === 'lifecyclestage')!.allowed).toEqual(STAGES);

  const company = `co-${tag}`;
  const contact = `c-${tag}`;
  const email = `ana.${tag}@acme.example`;
  for (const [tool, args] of [
    ['upsert_company', { externalId: company, fields: { name: 'Acme', domain: 'acme.example' }, idempotencyKey: `${tag}-1` }],
    ['upsert_contact', { externalId: contact, fields: { email, firstname: 'Ana', lifecyclestage: 'Lead' }, links: [{ object: 'company', externalId: company }], idempotencyKey: `${tag}-2` }],
    ['upsert_deal', { externalId: 'd-1', fields: { amount: 12000 }, links: [{ object: 'company', externalId: company }], idempotencyKey: `${tag}-3` }],
  ] as const) {
    const written = await call(client, tool, args);
    expect(written.result.isError ?? false).toBe(false);
  }

  let before = fake.count();
  const byId = await call(client, 'get_contact', { externalId: contact });
  expect(byId.structured.records).toEqual([{ id: contact, found: true, recordId: expect.any(String), externalId: contact, fields: { email, firstname: 'Ana', lifecyclestage: 'lead' } }]);
  expect(fake.count() - before).toBe(1);

  const byEmail = await call(client, 'get_contact', { email, links: true });
  expect(byEmail.structured.records).toEqual([expect.objectContaining({ id: email, found: true, externalId: contact, links: [{ object: 'company', recordId: expect.any(String), externalId: company }] })]);

  before = fake.count();
  const deal = await call(client, 'get_deal', { externalIds: ['d-1', 'd-missing'], links: true });
  expect(deal.structured.records).toEqual([
    { id: 'd-1', found: true, recordId: expect.any(String), externalId: 'd-1', fields: { dealname: 'Acme renewal', amount: '12000', hubspot_owner_id: '777' }, links: expect.arrayContaining([{ object: 'company', recordId: expect.any(String), externalId: company }]) },
    { id: 'd-missing', found: false },
  ]);
  // A batch read, the deal-to-company associations, the companies' external ids.
  expect(fake.count() - before).toBe(3);
  for (const r of [byId, byEmail, deal]) {
    const all = JSON.stringify(r.result);
    for (const hidden of ['board only', 'description', 'hs_object_id', 'createdate', 'lastmodifieddate']) expect(all).not.toContain(hidden);
  }

  const notReadable = await call(client, 'get_deal', { externalId: 'd-1', fields: ['description'] });
  expect(notReadable.result.isError).toBe(true);
}

describe('read tools of crm-upsert mcp on HubSpot', () => {
  let stdio: StdioServer;
  let http: HttpServer;

  afterAll(async () => {
    await stdio?.client.close();
    http?.cli.child.kill('SIGTERM');
    await http?.cli.done;
  });

  it('over stdio: describe, get by external id and by email, a deal with its owner and company', async () => {
    stdio = await stdioServer(config, 'read-agent-stdio');
    await agentSession(stdio.client, 'stdio');
    expect(stdio.stderr()).toMatch(/tools upsert_company, upsert_contact, upsert_deal, describe_company, get_company, describe_contact, get_contact, describe_deal, get_deal, get_outcome/);
  });

  it('over Streamable HTTP with its token: the same session; without the token nothing is read', async () => {
    http = await httpServer(['--config', config, '--http', '0'], { CRM_UPSERT_MCP_TOKEN: MCP_TOKEN });
    const before = fake.count();
    await expect(httpClient(http.url, 'no-token')).rejects.toThrow();
    expect(fake.count()).toBe(before);
    const client = await httpClient(http.url, 'read-agent-http', { authorization: `Bearer ${MCP_TOKEN}` });
    try {
      await agentSession(client, 'http');
    } finally {
      await client.close();
    }
  });
});
