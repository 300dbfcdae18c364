/**
 * The read tools in process: the SDK's real Client over a linked in-memory transport, a memory
 * CRM seeded with fields the config neither writes nor reads (read-fixture.ts), a memory ledger.
 * describe_ asks nothing of the CRM, get_ reads through sync.read and answers only the allowlist
 * and readFields, and neither writes a ledger entry; a rejected write names its problems.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/adapter.js';
import { createSync, openLedger } from '../../src/index.js';
import { createMcpServer, readToolSpecs } from '../../src/mcp/index.js';
import { call } from './helpers.js';
import { INDUSTRIES, READ_OBJECTS, seededCrm, type Seeded } from './read-fixture.js';

let seeded: Seeded;
const clients: Client[] = [];

async function connect(adapter?: CrmAdapter): Promise<Client> {
  const sync = adapter ? createSync({ adapter, ledger: openLedger('memory:') }) : seeded.sync;
  const server = createMcpServer({ sync });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'read-agent', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

beforeEach(async () => {
  seeded = await seededCrm();
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await seeded.sync.close();
});

type Answer = { id: string; found: boolean; recordId?: string; externalId?: string; fields?: Record<string, unknown>; links?: unknown[]; matches?: number };
const records = (structured: Record<string, unknown>) => structured.records as Answer[];

describe('read tools: listing', () => {
  it('lists describe_ for every object and get_ for every record object, read-only, with output schemas', async () => {
    const { tools } = await (await connect()).listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      'create_note', 'describe_company', 'describe_contact', 'describe_deal', 'describe_note',
      'get_company', 'get_contact', 'get_deal', 'get_outcome', 'upsert_company', 'upsert_contact', 'upsert_deal',
    ]);
    for (const name of ['get_contact', 'get_deal', 'get_company']) {
      expect(byName.get(name)!.annotations).toEqual({ title: expect.any(String), readOnlyHint: true, idempotentHint: true, openWorldHint: true });
      expect(byName.get(name)!.outputSchema?.properties).toHaveProperty('records');
    }
    for (const name of ['describe_contact', 'describe_note']) {
      expect(byName.get(name)!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(Object.keys(byName.get(name)!.outputSchema!.properties!)).toEqual(['object', 'kind', 'fields', 'lookupBy', 'links', 'parents', 'tools']);
    }
    expect(byName.get('upsert_contact')!.annotations?.readOnlyHint).toBe(false);
  });

  it('gives get_ a strict flat schema: every way to name records optional, fields an enum of the readable ones', async () => {
    const { tools } = await (await connect()).listTools();
    const contact = tools.find((t) => t.name === 'get_contact')!.inputSchema as { properties: Record<string, { items?: { enum?: string[] }; maxItems?: number }>; required?: string[]; additionalProperties?: boolean };
    expect(Object.keys(contact.properties)).toEqual(['externalId', 'externalIds', 'email', 'fields']);
    expect(contact.required).toBeUndefined();
    expect(contact.additionalProperties).toBe(false);
    expect(contact.properties.externalIds!.maxItems).toBe(100);
    expect(contact.properties.fields!.items!.enum).toEqual(['email', 'firstname', 'lastname', 'lifecyclestage', 'hs_lead_status']);
    const deal = tools.find((t) => t.name === 'get_deal')!.inputSchema as { properties: Record<string, unknown> };
    expect(Object.keys(deal.properties)).toEqual(['externalId', 'externalIds', 'fields', 'links']);
  });

  it('tells the agent the order: describe, get, then write with an idempotencyKey', async () => {
    const client = await connect();
    expect(client.getInstructions()).toContain('Before writing an object, call describe_<object> (its fields and allowed values, no CRM call) and get_<object> (the record as it is now, where offered). Give every write an idempotencyKey');
    const { tools } = await client.listTools();
    const text = (name: string) => tools.find((t) => t.name === name)!.description!;
    expect(text('get_contact')).toContain('Order: describe_contact (fields, allowed values), get_contact, then upsert_contact with an idempotencyKey.');
    expect(text('describe_contact')).toContain('Call it first, then get_contact to see the record, then upsert_contact with an idempotencyKey.');
    expect(text('upsert_contact')).toContain('Before writing: describe_contact lists its fields and allowed values; get_contact shows what the record holds now.');
    expect(text('create_note')).toContain('Before writing: describe_note lists its fields and allowed values.');
  });

  it('offers no get_ tool when the adapter does not read records, and the write tools do not point to one', async () => {
    const { planReads: _p, readRecords: _r, ...writeOnly } = seeded.crm.adapter;
    const { tools } = await (await connect(writeOnly as CrmAdapter)).listTools();
    expect(tools.map((t) => t.name).filter((n) => n.startsWith('get_'))).toEqual(['get_outcome']);
    expect(tools.map((t) => t.name)).toContain('describe_contact');
    expect(tools.find((t) => t.name === 'upsert_contact')!.description).not.toContain('get_contact');
  });

  it('exports the read tool specs the server registers', () => {
    expect(readToolSpecs(READ_OBJECTS, { crm: 'hubspot' }).map((t) => t.name)).toEqual(['describe_contact', 'get_contact', 'describe_company', 'get_company', 'describe_deal', 'get_deal', 'describe_note']);
    expect(readToolSpecs(READ_OBJECTS, { crm: 'hubspot', reads: false }).map((t) => t.name)).toEqual(['describe_contact', 'describe_company', 'describe_deal', 'describe_note']);
  });

  it('refuses a record object whose get_ tool would be get_outcome, and a lookupBy field named like an argument', () => {
    const record = { kind: 'record' as const, fields: ['name'] };
    expect(() => createMcpServer({ sync: seeded.sync, objects: { outcome: record } })).toThrow('object "outcome" gives the tool name "get_outcome"');
    expect(() => createMcpServer({ sync: seeded.sync, objects: { lead: { ...record, lookupBy: ['fields'] } } })).toThrow('object "lead" has the lookupBy field "fields"');
  });
});

describe('describe_<object>', () => {
  it('lists the allowlist as writable and readFields as read-only, with the enumeration\'s allowed values, and calls no CRM', async () => {
    const client = await connect();
    const before = seeded.crm.adapter.apiCalls();
    const r = await call(client, 'describe_contact', {});
    expect(r.result.isError).toBeUndefined();
    expect(r.structured).toEqual({
      object: 'contact',
      kind: 'record',
      fields: [
        { name: 'email', writable: true, readable: true, type: 'email' },
        { name: 'firstname', writable: true, readable: true, type: 'string', maxLength: 40 },
        { name: 'lastname', writable: true, readable: true },
        { name: 'lifecyclestage', writable: true, readable: true, type: 'enumeration', allowed: ['lead', 'customer', 'subscriber'], labels: { lead: 'Lead', customer: 'Customer' } },
        { name: 'hs_lead_status', writable: false, readable: true },
      ],
      lookupBy: ['email'],
      links: [],
      tools: { read: 'get_contact', write: 'upsert_contact' },
    });
    expect(r.text).toContain('contact (record): writable fields email, firstname, lastname, lifecyclestage; read-only hs_lead_status');
    expect(JSON.parse((r.result.content[1] as { text: string }).text)).toEqual(r.structured);
    expect(seeded.crm.adapter.apiCalls()).toBe(before);
  });

  it('describes an activity by its parents, a record by its links, and every value of a long enumeration', async () => {
    const client = await connect();
    const note = await call(client, 'describe_note', {});
    expect(note.structured).toEqual({
      object: 'note', kind: 'activity', parents: ['contact'], tools: { write: 'create_note' },
      fields: [{ name: 'body', writable: true, readable: false }, { name: 'timestamp', writable: true, readable: false }],
    });
    expect((await call(client, 'describe_deal', {})).structured).toMatchObject({ links: ['company'], fields: expect.arrayContaining([{ name: 'hubspot_owner_id', writable: false, readable: true }]) });
    const company = await call(client, 'describe_company', {});
    expect((company.structured.fields as { name: string; allowed?: string[] }[]).find((f) => f.name === 'industry')!.allowed).toEqual(INDUSTRIES);
  });

  it('refuses an argument (it takes none)', async () => {
    const r = await call(await connect(), 'describe_contact', { verbose: true });
    expect(r.result.isError).toBe(true);
    expect(r.structured.problems).toEqual([{ path: 'verbose', field: 'verbose', reason: 'is not an argument of describe_contact (it takes none)' }]);
  });
});

describe('get_<object>', () => {
  it('reads one record by externalId: the allowlist and readFields, nothing else the CRM holds', async () => {
    const client = await connect();
    const r = await call(client, 'get_contact', { externalId: 'c-1' });
    expect(r.result.isError).toBeUndefined();
    expect(records(r.structured)).toEqual([{
      id: 'c-1', found: true, recordId: seeded.ids.contact, externalId: 'c-1',
      fields: { email: 'ana@example.com', firstname: 'Ana', lastname: null, lifecyclestage: 'lead', hs_lead_status: 'OPEN' },
    }]);
    expect(r.text.split('\n')[0]).toBe('found 1 of 1 contact');
    expect(r.text).not.toContain('internal_score');
    expect(seeded.crm.calls.read).toBe(1);
  });

  it('reads several by externalIds in the order asked, saying which were not found, in one CRM read', async () => {
    const r = await call(await connect(), 'get_contact', { externalIds: ['c-twin-a', 'nope', 'c-1'], fields: ['firstname'] });
    expect(records(r.structured)).toEqual([
      { id: 'c-twin-a', found: true, recordId: seeded.ids.twinA, externalId: 'c-twin-a', fields: { firstname: 'Bo' } },
      { id: 'nope', found: false },
      { id: 'c-1', found: true, recordId: seeded.ids.contact, externalId: 'c-1', fields: { firstname: 'Ana' } },
    ]);
    expect(r.text.split('\n')[0]).toBe('found 2 of 3 contacts; not found: "nope"');
    expect(seeded.crm.calls.read).toBe(1);
  });

  it('finds a record by a lookupBy field, and answers none when the value names several', async () => {
    const client = await connect();
    const one = await call(client, 'get_contact', { email: 'ana@example.com' });
    expect(records(one.structured)).toEqual([expect.objectContaining({ id: 'ana@example.com', found: true, externalId: 'c-1', recordId: seeded.ids.contact })]);
    const shared = await call(client, 'get_contact', { email: 'shared@example.com' });
    expect(records(shared.structured)).toEqual([{ id: 'shared@example.com', found: false, matches: 2 }]);
    expect(shared.text.split('\n')[0]).toBe('found 0 of 1 contact; "shared@example.com" names several records (none answered: read by externalId)');
  });

  it('answers a readFields owner field and, with links, the linked company; never a field off both lists', async () => {
    const client = await connect();
    const r = await call(client, 'get_deal', { externalId: 'd-1', links: true });
    expect(records(r.structured)).toEqual([{
      id: 'd-1', found: true, recordId: seeded.ids.deal, externalId: 'd-1',
      fields: { dealname: 'Acme renewal', amount: 12000, hubspot_owner_id: '777' },
      links: [{ object: 'company', recordId: seeded.ids.company, externalId: 'co-1' }],
    }]);
    expect(r.text).not.toContain('secret_margin');
    const company = await call(client, 'get_company', { domain: 'acme.example' });
    expect(records(company.structured)[0]!.fields).toEqual({ name: 'Acme', domain: 'acme.example', industry: 'industry_03' });
    expect(JSON.stringify(company.result)).not.toContain('confidential');
    expect(records((await call(client, 'get_deal', { externalId: 'd-1' })).structured)[0]).not.toHaveProperty('links');
  });

  it('writes no ledger entry and claims no key', async () => {
    const client = await connect();
    await call(client, 'get_contact', { externalIds: ['c-1', 'c-twin-a'] });
    await call(client, 'get_deal', { externalId: 'd-1', links: true });
    await call(client, 'describe_contact', {});
    expect(await seeded.sync.ledger.list()).toEqual([]);
    expect(seeded.crm.calls).toMatchObject({ read: 2, upsert: 0, create: 0 });
  });

  it.each<[string, Record<string, unknown>, { path: string; reason: string | RegExp }[]]>([
    ['two lookups', { externalId: 'c-1', email: 'ana@example.com' }, [{ path: 'email', reason: 'is given together with externalId: give exactly one of externalId, externalIds, email' }]],
    ['no lookup', { fields: ['email'] }, [{ path: '', reason: 'name the records: give exactly one of externalId, externalIds, email' }]],
    ['a field not readable', { externalId: 'c-1', fields: ['internal_score'] }, [{ path: 'fields.0', reason: '"internal_score" is not readable on "contact" (readable: email, firstname, lastname, lifecyclestage, hs_lead_status)' }]],
    ['over 100 ids', { externalIds: Array.from({ length: 101 }, (_, i) => `c-${i}`) }, [{ path: 'externalIds', reason: 'must name at most 100 externalIds; read the rest in another call' }]],
    ['an unknown argument', { externalId: 'c-1', phone: '555' }, [{ path: 'phone', reason: 'is not an argument of get_contact (arguments: externalId, externalIds, email, fields)' }]],
    ['links on an object that links to nothing', { externalId: 'c-1', links: true }, [{ path: 'links', reason: /^is not an argument of get_contact/ }]],
    ['an empty id', { externalId: '' }, [{ path: 'externalId', reason: 'must not be empty' }]],
  ])('refuses %s as an isError result naming the argument, reading nothing', async (_what, args, expected) => {
    const r = await call(await connect(), 'get_contact', args);
    expect(r.result.isError).toBe(true);
    expect(r.structured.records).toBeUndefined();
    expect(r.structured.problems).toEqual(expected.map((e) => ({ path: e.path, field: e.path || '(arguments)', reason: typeof e.reason === 'string' ? e.reason : expect.stringMatching(e.reason) })));
    expect(r.structured.error).toMatchObject({ code: 'VALIDATION', ...(expected[0]!.path ? { path: expected[0]!.path } : {}) });
    expect(r.text).toMatch(/^rejected: .+; nothing was read$/);
    expect(seeded.crm.calls.read).toBe(0);
  });

  it('reports a failed CRM read as an isError result that says whether to ask again', async () => {
    seeded.crm.failNext('quota', { op: 'read' });
    const r = await call(await connect(), 'get_contact', { externalId: 'c-1' });
    expect(r.result.isError).toBe(true);
    expect(r.structured).toEqual({ error: expect.objectContaining({ code: 'CRM', message: expect.stringContaining('daily limit reached') }) });
    expect(r.text).toMatch(/^failed: .*daily limit reached/);
  });
});

describe('structured rejections of writes', () => {
  it('names the field, the reason and the enumeration\'s allowed values, and writes nothing', async () => {
    const client = await connect();
    const r = await call(client, 'upsert_contact', { externalId: 'c-new', fields: { email: 'new@example.com', lifecyclestage: 'vip' }, idempotencyKey: 'k-vip' });
    expect(r.result.isError).toBe(true);
    expect(r.structured).toMatchObject({ status: 'rejected', error: { code: 'VALIDATION', path: 'fields.lifecyclestage' } });
    expect(r.structured.problems).toEqual([{ path: 'fields.lifecyclestage', field: 'lifecyclestage', reason: '"vip" is not an allowed value; allowed: "lead", "customer", "subscriber"', allowed: ['lead', 'customer', 'subscriber'] }]);
    expect(seeded.crm.calls.upsert).toBe(0);
    expect(seeded.crm.records('contact').map((c) => c.externalId)).not.toContain('c-new');
  });

  it('lists the first 20 allowed values of a long enumeration, and every problem of the call', async () => {
    const r = await call(await connect(), 'upsert_company', { externalId: 'co-2', fields: { industry: 'Shipping' } });
    const [problem] = r.structured.problems as { allowed: string[]; reason: string }[];
    expect(problem!.allowed).toEqual(INDUSTRIES.slice(0, 20));
    expect(problem!.reason).toMatch(/\(and 10 more\)$/);
    const two = await call(await connect(), 'upsert_contact', { externalId: 'c-2', fields: { email: 'not-an-email', firstname: 'x'.repeat(41) } });
    expect(two.structured.problems).toEqual([
      { path: 'fields.email', field: 'email', reason: 'must be an email address (got "not-an-email")' },
      { path: 'fields.firstname', field: 'firstname', reason: 'is 41 characters; the CRM stores at most 40' },
    ]);
  });

  it('names a field off the allowlist and an argument that is not a field', async () => {
    const client = await connect();
    const off = await call(client, 'upsert_contact', { externalId: 'c-3', fields: { internal_score: 5 } });
    expect(off.structured.problems).toEqual([{ path: 'fields.internal_score', field: 'internal_score', reason: 'is not on the allowlist for "contact" (allowed: email, firstname, lastname, lifecyclestage)' }]);
    const noTarget = await call(client, 'create_note', { fields: { body: 'x' } });
    expect(noTarget.structured.problems).toEqual([{ path: 'target', field: 'target', reason: 'is required (an object: the record this note attaches to)' }]);
  });

  it('names idempotencyKey when a key is reused for another record', async () => {
    const client = await connect();
    expect((await call(client, 'upsert_contact', { externalId: 'c-4', fields: { firstname: 'D' }, idempotencyKey: 'k-reused' })).structured.status).toBe('created');
    const clash = await call(client, 'upsert_contact', { externalId: 'c-5', fields: { firstname: 'E' }, idempotencyKey: 'k-reused' });
    expect(clash.structured.problems).toEqual([{ path: 'idempotencyKey', field: 'idempotencyKey', reason: expect.stringContaining('was already used for another action') }]);
  });
});
