/** The tools generated from objects, their arguments and the actions they become. */
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ObjectSpec } from '../../schemas/objects.js';
import { ConfigError } from '../../src/errors.js';
import { parseArgs, toAction } from '../../src/mcp/arguments.js';
import { advertisedSchema, fieldRule, toolSpecs } from '../../src/mcp/tool-schemas.js';

const objects: Record<string, ObjectSpec> = {
  contact: { kind: 'record', fields: ['email', 'firstname'] },
  company: { kind: 'record', fields: ['name'] },
  note: { kind: 'activity', fields: ['hs_note_body', 'hs_timestamp'], parents: ['contact', 'company'] },
  orphan: { kind: 'activity', fields: ['body'], parents: [] },
  odd: { kind: 'activity', fields: ['body'], parents: ['note'] },
};
const tools = toolSpecs(objects, { crm: 'HubSpot', windowMs: 600_000 });
const tool = (name: string) => tools.find((t) => t.name === name)!;

describe('toolSpecs', () => {
  it('makes upsert tools for records and create tools for activities that have a record parent', () => {
    expect(tools.map((t) => [t.name, t.op, t.object])).toEqual([
      ['upsert_contact', 'upsert', 'contact'],
      ['upsert_company', 'upsert', 'company'],
      ['create_note', 'create', 'note'],
    ]);
  });

  it('limits fields to the allowlist and targets to the parents', () => {
    expect(Object.keys(tool('upsert_contact').input.shape.fields!.shape as object)).toEqual(['email', 'firstname']);
    const json = z.toJSONSchema(tool('create_note').input) as unknown as { properties: { target: { properties: { object: { enum: string[] } } } } };
    expect(json.properties.target.properties.object.enum).toEqual(['contact', 'company']);
  });

  it('says what protects a create, by key and by window', () => {
    expect(tool('create_note').description).toBe(
      'Create a HubSpot note on a contact or company record, found by its externalId. A repeated call with the same idempotencyKey returns the first result (status "replayed") and creates nothing, even when the text differs. Without a key, an identical note on the same record within 10 min is suppressed. Allowed fields: hs_note_body, hs_timestamp. Before writing: describe_note lists its fields and allowed values.',
    );
    expect(toolSpecs(objects, { crm: 'HubSpot', windowMs: 0 })[2]!.description).toContain('Without a key, only the same 10 min time bucket protects it.');
    expect(toolSpecs(objects, { crm: 'HubSpot', windowMs: 0, bucketMs: 3_600_000 })[2]!.description).toContain('only the same 60 min time bucket');
    expect(tool('upsert_contact').description).toContain('Without a key, a call whose values the record already holds is "unchanged" and sends nothing, and changed values are always written (the latest call wins).');
    expect(tool('upsert_contact').description).not.toContain('bucket');
  });

  it('refuses an object name that makes no valid tool name', () => {
    const odd: Record<string, ObjectSpec> = { 'my contact': { kind: 'record', fields: [] } };
    expect(() => toolSpecs(odd, { crm: 'x', windowMs: 0 })).toThrow(ConfigError);
    expect(() => toolSpecs(odd, { crm: 'x', windowMs: 0 })).toThrow('object "my contact" gives the tool name "upsert_my contact": MCP tool names use only letters, digits, _ and -');
  });
});

describe('advertisedSchema', () => {
  it('shows the strict schema in tools/list but lets every argument through to the handler', () => {
    const input = tool('create_note').input;
    const advertised = advertisedSchema(input);
    const strict = toJsonSchemaCompat(input, { pipeStrategy: 'input' });
    expect(toJsonSchemaCompat(advertised, { pipeStrategy: 'input' })).toEqual(strict);
    expect(advertised.safeParse({ anything: 1 }).success).toBe(true);
  });
});

describe('advertisedSchema with field definitions', () => {
  const spec: ObjectSpec = {
    kind: 'record', fields: ['lifecyclestage', 'closedate', 'ai_renewal_date', 'amount', 'industry', 'email', 'dealstage'],
    definitions: {
      dealstage: { type: 'enumeration', pipelineField: 'pipeline', options: [{ value: 'closedwon', label: 'Closed Won', pipeline: 'default' }, { value: 'renewal_won', label: 'Closed Won', pipeline: 'renewals' }] },
      lifecyclestage: { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }] },
      // HubSpot's deal closedate is a datetime; a date property is a custom one.
      closedate: { type: 'datetime' },
      ai_renewal_date: { type: 'date' },
      amount: { type: 'number' },
      industry: { type: 'enumeration', options: Array.from({ length: 300 }, (_, i) => `I${i}`) },
    },
  };
  const [upsertDeal] = toolSpecs({ deal: spec }, { crm: 'HubSpot', windowMs: 0 });
  type Fields = { properties: { fields: { properties: Record<string, { type?: string; enum?: string[]; format?: string; description?: string }>; additionalProperties: boolean } } };
  const json = toJsonSchemaCompat(advertisedSchema(upsertDeal!.input, spec.definitions), { pipeStrategy: 'input' }) as unknown as Fields;
  const fields = json.properties.fields.properties;

  it('tells the model each defined field\'s rule: enumerations as enums with their labels, dates with their format', () => {
    expect(fields.lifecyclestage).toMatchObject({ type: 'string', enum: ['lead', 'customer'] });
    expect(fields.lifecyclestage!.description).toContain('lead = Lead; customer = Customer');
    expect(fields.dealstage).toMatchObject({ type: 'string', enum: ['closedwon', 'renewal_won'] });
    expect(fields.dealstage!.description).toContain('closedwon = Closed Won (pipeline default); renewal_won = Closed Won (pipeline renewals)');
    expect(fields.closedate).toMatchObject({ type: 'string', format: 'date-time' });
    expect(fields.ai_renewal_date).toMatchObject({ type: 'string', format: 'date' });
    expect(fields.amount).toMatchObject({ type: 'number' });
    expect(json.properties.fields.additionalProperties).toBe(false);
  });

  it('advertises an enumeration past 250 values as a string, says so, and leaves undefined fields as they were', () => {
    expect(fields.industry!.enum).toBeUndefined();
    expect(fields.industry!.description).toContain('One of 300 values');
    expect(fields.email!.enum).toBeUndefined();
  });

  it('still lets the engine normalize: "Customer " passes the arguments check and is the engine\'s to map', () => {
    expect(parseArgs(upsertDeal!, { externalId: 'd', fields: { lifecyclestage: 'Customer ' } }).ok).toBe(true);
  });
});

describe('fieldRule and options hidden in the CRM', () => {
  it('leaves a hidden option and its label out of the enumeration offered', () => {
    const rule = fieldRule('lifecyclestage', { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'subscriber', label: 'Subscriber', hidden: true }, 'other'] });
    expect(rule).toEqual({ type: 'string', enum: ['lead', 'other'], description: 'Property "lifecyclestage". lead = Lead.' });
  });

  it('offers a plain string when every option is hidden (an empty enum admits nothing)', () => {
    expect(fieldRule('f', { type: 'enumeration', options: [{ value: 'old', hidden: true }] })).toEqual({ type: 'string', description: 'Property "f".' });
  });
});

describe('parseArgs', () => {
  const upsert = tool('upsert_contact');
  const create = tool('create_note');

  it.each([
    ['an unknown argument', upsert, { externalId: 'c', fields: {}, extra: 1 }, [{ path: 'extra', message: 'is not an argument of upsert_contact (arguments: externalId, fields, clear, idempotencyKey, occurredAt)' }]],
    ['a field off the allowlist', upsert, { externalId: 'c', fields: { phone: '1' } }, [{ path: 'fields.phone', message: 'is not on the allowlist for "contact" (allowed: email, firstname)' }]],
    ['a value of the wrong type', upsert, { externalId: 'c', fields: { email: [1] } }, [{ path: 'fields.email', message: 'must be a string, number, boolean, null or (for a multi-select field) a list of strings' }]],
    ['an object value', upsert, { externalId: 'c', fields: { firstname: { first: 'Ana' } } }, [{ path: 'fields.firstname', message: 'must be a string, number, boolean, null or (for a multi-select field) a list of strings' }]],
    ['a lone surrogate', upsert, { externalId: 'c', fields: { email: 'a\uD800' } }, [{ path: 'fields.email', message: 'contains a lone UTF-16 surrogate' }]],
    ['a missing externalId', upsert, { fields: {} }, [{ path: 'externalId', message: 'is required (a string: your id for this contact: the value of its external-id field in HubSpot)' }]],
    ['a missing target', create, { fields: {} }, [{ path: 'target', message: 'is required (an object: the record this note attaches to)' }]],
    ['a target that is not a parent', create, { target: { object: 'deal', externalId: 'd' }, fields: {} }, [{ path: 'target.object', message: '"note" cannot attach to "deal"; allowed: contact, company' }]],
    ['an externalId of the wrong type', upsert, { externalId: 42, fields: {} }, [{ path: 'externalId', message: 'must be a string: your id for this contact: the value of its external-id field in HubSpot; got the number 42' }]],
    ['a target without its object', create, { target: { externalId: 'c' }, fields: {} }, [{ path: 'target.object', message: 'is required (one of "contact", "company")' }]],
    ['a field to clear off the allowlist', upsert, { externalId: 'c', fields: {}, clear: ['phone'] }, [{ path: 'clear.0', message: '"phone" is not on the allowlist for "contact" (allowed: email, firstname)' }]],
    ['a bad occurredAt', create, { target: { object: 'contact', externalId: 'c' }, fields: {}, occurredAt: 'yesterday' }, [{ path: 'occurredAt', message: 'must be an ISO 8601 date-time, e.g. 2026-11-29T10:00:00Z' }]],
  ])('names the path and the reason for %s', (_what, t, raw, issues) => {
    expect(parseArgs(t, raw)).toEqual({ ok: false, issues });
  });

  it('accepts valid arguments as they are', () => {
    expect(parseArgs(upsert, { externalId: 'c', fields: { email: 'a@b.c', firstname: null } })).toEqual({ ok: true, args: { externalId: 'c', fields: { email: 'a@b.c', firstname: null } } });
  });
});

describe('toAction', () => {
  const call = '2026-12-01T10:03:00.000Z';

  it('makes the idempotencyKey the event id under the client source, with no clock time', () => {
    expect(toAction(tool('upsert_contact'), { externalId: 'c-1', fields: { email: 'a@b.c' }, idempotencyKey: 'k1' }, 'mcp:claude', call)).toEqual({
      source: 'mcp:claude', eventId: 'k1', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@b.c' },
    });
  });

  it('gives a keyless call the time of the call as its event time, and keeps intent', () => {
    expect(toAction(tool('create_note'), { target: { object: 'contact', externalId: 'c-1' }, fields: { hs_note_body: 'x', hs_timestamp: undefined }, intent: 'summary' }, 'mcp:claude', call)).toEqual({
      source: 'mcp:claude', occurredAt: call, op: 'create', object: 'note', target: { object: 'contact', externalId: 'c-1' }, intent: 'summary', fields: { hs_note_body: 'x' },
    });
  });

  it('keeps an occurredAt the agent gave', () => {
    expect(toAction(tool('create_note'), { target: { object: 'contact', externalId: 'c' }, fields: {}, occurredAt: '2026-11-30T08:00:00Z' }, 's', call).occurredAt).toBe('2026-11-30T08:00:00Z');
  });
});

describe('links on the tools', () => {
  const sales: Record<string, ObjectSpec> = {
    company: { kind: 'record', fields: ['name'] },
    contact: { kind: 'record', fields: ['email'], links: ['company'] },
    deal: { kind: 'record', fields: ['dealname'], links: ['contact', 'company'] },
    note: { kind: 'activity', fields: ['hs_note_body'], parents: ['contact', 'company', 'deal'] },
    task: { kind: 'activity', fields: ['hs_task_subject'], parents: ['deal'] },
  };
  const specs = toolSpecs(sales, { crm: 'HubSpot', windowMs: 600_000 });
  const find = (name: string) => specs.find((t) => t.name === name)!;
  type Json = { properties: Record<string, { items?: { properties: { object: { enum: string[] } }; additionalProperties: boolean } }> };
  const linkEnum = (name: string) => (z.toJSONSchema(find(name).input) as unknown as Json).properties.links?.items?.properties.object.enum;

  it('offers links with the objects each one may be associated with, and none where there are none', () => {
    expect(linkEnum('upsert_contact')).toEqual(['company']);
    expect(linkEnum('upsert_deal')).toEqual(['contact', 'company']);
    expect(linkEnum('create_note')).toEqual(['contact', 'company', 'deal']);
    expect(linkEnum('upsert_company')).toBeUndefined();
    expect(linkEnum('create_task')).toBeUndefined();
    expect((z.toJSONSchema(find('upsert_deal').input) as unknown as Json).properties.links!.items!.additionalProperties).toBe(false);
  });

  it('turns links into the action, and refuses an object the tool does not offer', () => {
    const deal = find('upsert_deal');
    const parsed = parseArgs(deal, { externalId: 'd-1', fields: { dealname: 'Renewal' }, links: [{ object: 'company', externalId: 'acme' }], idempotencyKey: 'k1' });
    if (!parsed.ok) throw new Error('expected valid arguments');
    expect(toAction(deal, parsed.args, 'mcp:agent', '2026-12-01T10:00:00Z')).toMatchObject({ op: 'upsert', object: 'deal', links: [{ object: 'company', externalId: 'acme' }] });
    const bad = parseArgs(deal, { externalId: 'd-1', fields: {}, links: [{ object: 'note', externalId: 'n' }] });
    // The engine's wording for a link the config does not allow (docs/api.md), not zod's enum text.
    expect(bad).toEqual({ ok: false, issues: [{ path: 'links.0.object', message: '"deal" cannot link to "note"; allowed: contact, company' }] });
  });
});

