/**
 * toolSchema: one object's write arguments as a strict tool schema, per provider dialect. Each
 * schema compiles in a JSON Schema validator (Ajv, draft 2020-12) and accepts a good call while
 * refusing an unknown field; each dialect rule is checked on its own.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { ObjectSpec } from '../../src/adapter.js';
import { ConfigError, SCHEMA_DIALECTS, toolSchema } from '../../src/index.js';
import { ANTHROPIC_MAX_OPTIONAL_PARAMETERS, ANTHROPIC_MAX_UNION_PROPERTIES, OPENAI_MAX_ENUM_VALUES, optionalParameters } from '../../src/tool-schema.js';
import { memoryCrm } from '../helpers/memory-crm.js';

type Json = Record<string, unknown>;
const objects: Record<string, ObjectSpec> = {
  company: { kind: 'record', fields: ['name'] },
  contact: {
    kind: 'record', fields: ['email', 'firstname', 'lifecyclestage', 'closedate', 'amount'], links: ['company'],
    definitions: {
      email: { type: 'email' },
      firstname: { type: 'string', maxLength: 40 },
      lifecyclestage: { type: 'enumeration', options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }] },
      closedate: { type: 'date' },
      amount: { type: 'number' },
    },
  },
  note: { kind: 'activity', fields: ['hs_note_body'], parents: ['contact', 'company'] },
};
const adapter = memoryCrm({ objects }).adapter;

const walk = function* (node: unknown): Generator<Json> {
  if (Array.isArray(node)) for (const n of node) yield* walk(n);
  else if (node && typeof node === 'object') {
    yield node as Json;
    for (const v of Object.values(node)) yield* walk(v);
  }
};
const validator = () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  return ajv;
};
const fieldsOf = (schema: Json) => ((schema.properties as Json).fields as Json).properties as Record<string, Json>;

describe('toolSchema', () => {
  const good = { externalId: 'c-1', fields: { email: 'a@b.co', lifecyclestage: 'lead', closedate: '2027-01-15', amount: 12000 }, links: [{ object: 'company', externalId: 'acme' }], idempotencyKey: 'k-1' };

  it.each(['json-schema', 'openai', 'anthropic'] as const)('%s: compiles in a validator, takes a good call, refuses an unknown field, closes every object', (dialect) => {
    const schema = toolSchema(adapter, 'contact', { for: dialect });
    const validate = validator().compile(schema);
    const call = dialect === 'openai' ? { ...good, fields: { ...good.fields, firstname: null }, clear: null, occurredAt: null } : good;
    expect(validate(call), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...call, fields: { ...call.fields, hubspot_owner_id: '7' } })).toBe(false);
    for (const node of walk(schema)) if (node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'))) expect(node.additionalProperties, JSON.stringify(node)).toBe(false);
  });

  it('carries the rules: enumerations as enums with labels, dates with their format, links as an enum of objects', () => {
    const schema = toolSchema(adapter, 'contact');
    const fields = fieldsOf(schema);
    expect(fields.lifecyclestage).toMatchObject({ type: 'string', enum: ['lead', 'customer'] });
    expect(fields.lifecyclestage!.description).toContain('lead = Lead');
    expect(fields.closedate).toMatchObject({ format: 'date' });
    expect(fields.amount).toMatchObject({ type: 'number' });
    const links = (schema.properties as Json).links as Json;
    expect(((links.items as Json).properties as Json).object).toMatchObject({ enum: ['company'] });
    expect(validator().compile(schema)({ ...good, fields: { lifecyclestage: 'client' } })).toBe(false);
  });

  it('openai: every property required, the optional ones nullable', () => {
    const schema = toolSchema(adapter, 'contact', { for: 'openai' });
    for (const node of walk(schema)) {
      if (node.type !== 'object' || !node.properties) continue;
      expect(node.required).toEqual(Object.keys(node.properties as Json));
    }
    expect(fieldsOf(schema).closedate).toMatchObject({ type: ['string', 'null'] });
    expect(fieldsOf(schema).lifecyclestage!.enum).toEqual(['lead', 'customer', null]);
    expect(((schema.properties as Json).idempotencyKey as Json).type).toEqual(['string', 'null']);
    expect((schema.required as string[])).toContain('externalId');
  });

  it(`openai: at most ${OPENAI_MAX_ENUM_VALUES} enum values in all, the largest enumerations turned into strings that say why`, () => {
    const big = memoryCrm({ objects: { deal: { kind: 'record', fields: ['industry', 'stage', 'region'], definitions: {
      industry: { type: 'enumeration', options: Array.from({ length: 240 }, (_, i) => `i${i}`) },
      stage: { type: 'enumeration', options: Array.from({ length: 200 }, (_, i) => `s${i}`) },
      region: { type: 'enumeration', options: Array.from({ length: 240 }, (_, i) => `r${i}`) },
    } } } }).adapter;
    const plain = toolSchema(big, 'deal');
    // The three enumerations, and the three field names clear takes.
    expect([...walk(plain)].reduce((n, s) => n + (Array.isArray(s.enum) ? s.enum.length : 0), 0)).toBe(683);
    const many = memoryCrm({ objects: { deal: { kind: 'record', fields: ['a', 'b', 'c', 'd', 'e'], definitions: Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((f, k) => [f, { type: 'enumeration' as const, options: Array.from({ length: 230 - k }, (_, i) => `${f}${i}`) }])) } } }).adapter;
    const schema = toolSchema(many, 'deal', { for: 'openai' });
    const total = [...walk(schema)].reduce((n, s) => n + (Array.isArray(s.enum) ? s.enum.length : 0), 0);
    expect(total).toBeLessThanOrEqual(OPENAI_MAX_ENUM_VALUES);
    // The largest one went first.
    expect(fieldsOf(schema).a!.enum).toBeUndefined();
    expect(fieldsOf(schema).a!.description).toContain('more values than a strict OpenAI schema holds');
    expect(fieldsOf(schema).e!.enum).toBeDefined();
  });

  it(`anthropic: no length or number bounds (they move into the description), at most ${ANTHROPIC_MAX_UNION_PROPERTIES} properties with anyOf or a type array`, () => {
    const schema = toolSchema(adapter, 'contact', { for: 'anthropic' });
    for (const node of walk(schema)) for (const k of ['minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems']) expect(node[k], k).toBeUndefined();
    expect(((schema.properties as Json).idempotencyKey as Json).description).toContain('maxLength 500');

    const wide = memoryCrm({ objects: { contact: { kind: 'record', fields: Array.from({ length: 24 }, (_, i) => `f${i}`) } } }).adapter;
    const anthropic = toolSchema(wide, 'contact', { for: 'anthropic' });
    const unions = [...walk(anthropic)].filter((s) => s !== anthropic && (Array.isArray(s.anyOf) || Array.isArray(s.type)));
    expect(unions.length).toBeLessThanOrEqual(ANTHROPIC_MAX_UNION_PROPERTIES);
    expect(fieldsOf(anthropic).f0).toMatchObject({ type: 'string' });
    expect(fieldsOf(anthropic).f0!.description).toContain('send a number or true/false as text');
    // The JSON Schema dialect keeps them all as the engine takes them.
    expect(fieldsOf(toolSchema(wide, 'contact')).f0!.anyOf).toBeDefined();
  });

  it('counts a schema\'s optional parameters, its share of Anthropic\'s budget of 24 per request', () => {
    const three = memoryCrm({ objects: { contact: { kind: 'record', fields: ['a', 'b', 'c'] } } }).adapter;
    const schema = toolSchema(three, 'contact', { for: 'anthropic' });
    const top = schema.properties as Json;
    const topOptional = Object.keys(top).filter((k) => !((schema.required as string[]) ?? []).includes(k)).length;
    // Every field is optional, and so is each top-level argument besides the external id and the fields.
    expect(optionalParameters(schema)).toBe(3 + topOptional);
    expect(topOptional).toBeGreaterThan(0);
    const wide = memoryCrm({ objects: { contact: { kind: 'record', fields: Array.from({ length: 30 }, (_, i) => `f${i}`) } } }).adapter;
    expect(optionalParameters(toolSchema(wide, 'contact', { for: 'anthropic' }))).toBeGreaterThan(ANTHROPIC_MAX_OPTIONAL_PARAMETERS);
    // OpenAI's dialect requires every property: nothing optional is left.
    expect(optionalParameters(toolSchema(wide, 'contact', { for: 'openai' }))).toBe(0);
  });

  it('gives an upsert a clear argument in every dialect, the names of its fields; openai keeps it within 1,000 enum values', () => {
    for (const dialect of SCHEMA_DIALECTS) {
      const clear = (toolSchema(adapter, 'contact', { for: dialect }).properties as Json).clear as Json;
      expect((clear.items as Json).enum, dialect).toEqual(['email', 'firstname', 'lifecyclestage', 'closedate', 'amount']);
    }
    expect((toolSchema(adapter, 'note', { for: 'openai' }).properties as Json).clear).toBeUndefined();
    const huge = memoryCrm({ objects: { contact: { kind: 'record', fields: Array.from({ length: 1_001 }, (_, i) => `f${i}`) } } }).adapter;
    const schema = toolSchema(huge, 'contact', { for: 'openai' });
    expect([...walk(schema)].reduce((n, s) => n + (Array.isArray(s.enum) ? s.enum.length : 0), 0)).toBeLessThanOrEqual(OPENAI_MAX_ENUM_VALUES);
    const clear = (schema.properties as Json).clear as Json;
    expect(clear.items).toEqual({ type: 'string' });
    expect(clear.description).toContain('f1000');
    expect((schema.required as string[])).toContain('clear');
  });

  it('makes a create tool\'s schema too, and refuses an object that cannot be written', () => {
    const schema = toolSchema(adapter, 'note');
    expect(Object.keys(schema.properties as Json)).toEqual(expect.arrayContaining(['target', 'fields', 'links']));
    expect(() => toolSchema(adapter, 'ticket')).toThrow(ConfigError);
    expect(() => toolSchema(adapter, 'ticket')).toThrow('"ticket" is not a configured object that can be written (configured: company, contact, note)');
  });
});

describe('toolSchema descriptions name the CRM as people write it', () => {
  it('says HubSpot, Salesforce and Pipedrive for their adapters, and another adapter by its own name', () => {
    const named = (name: string) => ({ ...adapter, name });
    const description = (name: string) => JSON.stringify(toolSchema(named(name), 'contact', { for: 'openai' }));
    expect(description('hubspot')).toContain('Create or update a HubSpot contact');
    expect(description('hubspot')).not.toMatch(/\bhubspot\b/);
    expect(description('salesforce')).toContain('a Salesforce contact');
    expect(description('pipedrive')).toContain('a Pipedrive contact');
    expect(description('memory')).toContain('a memory contact');
  });
});
