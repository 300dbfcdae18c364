/**
 * The scenarios every MCP front must pass (in-process, spawned over stdio, spawned over
 * Streamable HTTP): the SDK's real Client against the server, a fake HubSpot as the CRM. Each
 * takes a unique prefix so scenarios sharing one fake and one ledger never see each other's records.
 */
import { adapterReads } from '../../src/adapter.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { HUBSPOT_OBJECTS } from '../cli/helpers.js';

export interface Called {
  result: CallToolResult;
  structured: Record<string, unknown>;
  text: string;
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Called> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return { result, structured: (result.structuredContent ?? {}) as Record<string, unknown>, text };
}

const contactsWith = (fake: FakeHubSpot, externalId: string) => fake.records('contacts').filter((r) => r.properties.ai_external_id === externalId);
export const notesWith = (fake: FakeHubSpot, prefix: string) => fake.records('notes').filter((r) => (r.properties.hs_note_body ?? '').startsWith(prefix));

export const TIMESTAMP = '2026-11-30T10:00:00Z';


export { adapterReads };

/** Whether the HubSpot adapter a spawned `crm-upsert mcp` builds reads records (nothing is sent to build one). */
export const hubspotReads = (): boolean =>
  adapterReads(hubspotAdapter({ accessToken: 'pat-na1-mcp-probe-0000', basePath: 'http://127.0.0.1:9', objects: HUBSPOT_OBJECTS as HubSpotAdapterOptions['objects'] }));

/**
 * listTools: the generated tools, each with the allowlist as its schema and the hints. `reads`:
 * the adapter behind the server reads records, so get_contact is served too.
 */
export async function expectGeneratedTools(client: Client, reads: boolean): Promise<void> {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  expect([...byName.keys()].sort()).toEqual(['create_note', 'describe_contact', 'describe_note', ...(reads ? ['get_contact'] : []), 'get_outcome', 'upsert_contact']);
  for (const name of ['describe_contact', 'describe_note', ...(reads ? ['get_contact'] : [])]) {
    expect(byName.get(name)!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.get(name)!.outputSchema).toBeDefined();
  }
  const upsert = byName.get('upsert_contact')!;
  const props = upsert.inputSchema.properties as Record<string, { properties?: Record<string, unknown>; additionalProperties?: unknown; description?: string }>;
  expect(Object.keys(props).sort()).toEqual(['clear', 'externalId', 'fields', 'idempotencyKey', 'occurredAt']);
  expect(Object.keys(props.fields!.properties!)).toEqual(['email', 'firstname', 'lastname', 'lifecyclestage']);
  expect(props.fields!.additionalProperties).toBe(false);
  expect(props.fields!.description).toContain('Only these are allowed: email, firstname, lastname, lifecyclestage');
  expect(upsert.inputSchema.required).toEqual(['externalId', 'fields']);
  expect((upsert.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
  expect(upsert.annotations).toMatchObject({ idempotentHint: true, readOnlyHint: false });
  expect(upsert.outputSchema?.properties).toHaveProperty('status');

  const create = byName.get('create_note')!;
  const target = (create.inputSchema.properties as Record<string, { properties: Record<string, { enum?: string[] }> }>).target!;
  expect(target.properties.object!.enum).toEqual(['contact']);
  expect(create.inputSchema.required).toEqual(['target', 'fields']);
  expect(create.description).toContain('A repeated call with the same idempotencyKey returns the first result');
  expect(create.annotations?.idempotentHint).toBe(false);
  expect(byName.get('get_outcome')!.annotations?.readOnlyHint).toBe(true);
}

/** upsert_contact twice with one key (the second with other AI text): one contact, the second `replayed` with 0 CRM calls. */
export async function upsertTwiceWithOneKey(client: Client, fake: FakeHubSpot, prefix: string): Promise<void> {
  const externalId = `${prefix}-contact`;
  const first = await call(client, 'upsert_contact', { externalId, fields: { email: `${prefix}@example.com`, firstname: 'Ana' }, idempotencyKey: `${prefix}-k1` });
  expect(first.structured).toMatchObject({ status: 'created', idempotencyKey: `${prefix}-k1` });
  expect(first.result.isError).toBeUndefined();
  const before = fake.count();
  const second = await call(client, 'upsert_contact', { externalId, fields: { email: `${prefix}@example.com`, firstname: 'Ana María' }, idempotencyKey: `${prefix}-k1` });
  expect(second.structured).toMatchObject({ status: 'replayed', key: first.structured.key, recordId: first.structured.recordId });
  expect(second.text).toBe(`replayed: this contact was already written as ${String(first.structured.recordId)} (no second write)`);
  expect(fake.count()).toBe(before);
  const contacts = contactsWith(fake, externalId);
  expect(contacts).toHaveLength(1);
  expect(contacts[0]!.properties.firstname).toBe('Ana');
}

/** A contact to attach notes to. */
export async function contactFor(client: Client, prefix: string): Promise<string> {
  const externalId = `${prefix}-parent`;
  const r = await call(client, 'upsert_contact', { externalId, fields: { email: `${prefix}-parent@example.com` }, idempotencyKey: `${prefix}-parent-key` });
  expect(r.structured.status).toBe('created');
  return externalId;
}

/** create_note three times with one key and different AI text: one note, then replayed, replayed. */
export async function noteThriceWithOneKey(client: Client, fake: FakeHubSpot, prefix: string): Promise<void> {
  const parent = await contactFor(client, prefix);
  const results: Called[] = [];
  for (const body of ['Ana asked about invoices.', 'Ana asked about her March invoices.', 'Customer wants invoice export.']) {
    results.push(await call(client, 'create_note', { target: { object: 'contact', externalId: parent }, fields: { hs_note_body: `${prefix} ${body}`, hs_timestamp: TIMESTAMP }, idempotencyKey: `${prefix}-note-key` }));
  }
  expect(results.map((r) => r.structured.status)).toEqual(['created', 'replayed', 'replayed']);
  const notes = notesWith(fake, prefix);
  expect(notes).toHaveLength(1);
  expect(notes[0]!.properties.hs_note_body).toBe(`${prefix} Ana asked about invoices.`);
  expect(results[0]!.structured.recordId).toBe(notes[0]!.id);
  expect(results[2]!.text).toBe(`replayed: this note was already created as ${notes[0]!.id} (no new record)`);
  expect(new Set(results.map((r) => r.structured.key)).size).toBe(1);
}

/** Three identical creates without a key inside the window: one note, two `suppressed`, the window stated. */
export async function keylessNoteThrice(client: Client, fake: FakeHubSpot, prefix: string): Promise<void> {
  const parent = await contactFor(client, prefix);
  const args = { target: { object: 'contact', externalId: parent }, fields: { hs_note_body: `${prefix} Called, no answer.`, hs_timestamp: TIMESTAMP } };
  const results: Called[] = [];
  for (let i = 0; i < 3; i++) results.push(await call(client, 'create_note', args));
  expect(results.map((r) => r.structured.status)).toEqual(['created', 'suppressed', 'suppressed']);
  expect(notesWith(fake, prefix)).toHaveLength(1);
  const dedupe = results[1]!.structured.dedupe as { windowMs: number; bucketStart: string; bucketEnd: string };
  expect(dedupe.windowMs).toBe(600_000);
  expect(Date.parse(dedupe.bucketEnd) - Date.parse(dedupe.bucketStart)).toBe(600_000);
  expect(results[1]!.text).toMatch(/^suppressed: an identical note on contact ".+" was already created as \d+ \(no new record\): calls without an idempotencyKey are one within the 10 min dedupe window/);
  expect(results[0]!.text).toContain('no idempotencyKey: an identical note on this record within 10 min of');
}

/** upsert_contact without a key, lead then customer a moment later: the correction is written; the same values again send nothing. */
export async function keylessUpsertCorrection(client: Client, fake: FakeHubSpot, prefix: string): Promise<void> {
  const externalId = `${prefix}-contact`;
  const write = (lifecyclestage: string) => call(client, 'upsert_contact', { externalId, fields: { email: `${prefix}@example.com`, lifecyclestage } });
  const lead = await write('lead');
  expect(lead.structured.status).toBe('created');
  expect(lead.structured.dedupe).toEqual({ occurredAt: expect.any(String), windowMs: 0 });
  const customer = await write('customer');
  expect(customer.structured).toMatchObject({ status: 'updated', recordId: lead.structured.recordId });
  expect(customer.structured.key).not.toBe(lead.structured.key);
  const contacts = contactsWith(fake, externalId);
  expect(contacts).toHaveLength(1);
  expect(contacts[0]!.properties.lifecyclestage).toBe('customer');
  const before = fake.count();
  const again = await write('customer');
  expect(again.structured).toMatchObject({ status: 'unchanged', recordId: lead.structured.recordId });
  expect(again.text).toMatch(/^unchanged: contact ".+" \(\d+\) already holds these values; nothing was sent$/);
  expect(fake.count()).toBe(before);
}

/** Bad arguments: isError naming the path, nothing written, 0 CRM calls. */
export async function badArguments(client: Client, fake: FakeHubSpot, prefix: string): Promise<void> {
  const before = fake.count();
  const unknown = await call(client, 'upsert_contact', { externalId: `${prefix}-c`, fields: { email: 'a@example.com', favorite_color: 'blue' }, idempotencyKey: `${prefix}-bad-1` });
  const wrongType = await call(client, 'upsert_contact', { externalId: `${prefix}-c`, fields: { email: { address: 'a@example.com' } } });
  const wrongId = await call(client, 'upsert_contact', { externalId: 42, fields: { email: 'a@example.com' } });
  const noTarget = await call(client, 'create_note', { fields: { hs_note_body: 'x', hs_timestamp: TIMESTAMP }, idempotencyKey: `${prefix}-bad-2` });
  for (const r of [unknown, wrongType, wrongId, noTarget]) {
    expect(r.result.isError).toBe(true);
    expect(r.structured.status).toBe('rejected');
    expect(r.text).toMatch(/; nothing was written$/);
  }
  expect(unknown.structured.error).toMatchObject({ code: 'VALIDATION', path: 'fields.favorite_color' });
  expect(unknown.text).toBe('rejected: fields.favorite_color: is not on the allowlist for "contact" (allowed: email, firstname, lastname, lifecyclestage); nothing was written');
  expect(unknown.structured.problems).toEqual([{ path: 'fields.favorite_color', field: 'favorite_color', reason: 'is not on the allowlist for "contact" (allowed: email, firstname, lastname, lifecyclestage)' }]);
  expect(wrongType.structured.error).toMatchObject({ path: 'fields.email', message: 'fields.email: must be a string, number, boolean, null or (for a multi-select field) a list of strings' });
  expect(wrongId.structured.error).toMatchObject({ path: 'externalId' });
  expect(noTarget.structured.error).toMatchObject({ path: 'target', message: 'target: is required (object)' });
  expect(fake.count()).toBe(before);
  expect(contactsWith(fake, `${prefix}-c`)).toHaveLength(0);
}
