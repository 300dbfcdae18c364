/**
 * toolCallAction: a model's tool call, made against toolSchema's schema for a dialect, as the
 * action the engine applies. Driven end to end: the schema validates the call (Ajv), the action is
 * applied through hubspotAdapter to the fake HubSpot, and the record it holds is what is checked.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter, type HubSpotAdapterOptions } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { ConfigError, createSync, openLedger, toolCallAction, toolSchema, ValidationError, type Sync } from '../../src/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';

type Json = Record<string, unknown>;
const objects: HubSpotAdapterOptions['objects'] = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'amount', 'dealstage', 'pipeline', 'closedate'], links: { company: 341 } },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { deal: 214, company: 190 } },
};
const fieldDefinitions = {
  crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-12-01',
  objects: { deal: { amount: { type: 'number' as const }, closedate: { type: 'date' as const }, pipeline: { type: 'enumeration' as const, options: ['default'] } } },
};

let fake: FakeHubSpot;
let stop: () => Promise<void>;
let adapter: ReturnType<typeof hubspotAdapter>;
let sync: Sync;

beforeAll(async () => {
  fake = fakeHubSpot({ token: 'pat-na1-tool-call-0000' });
  const served = await fake.listen();
  stop = served.close;
  adapter = hubspotAdapter({ accessToken: 'pat-na1-tool-call-0000', basePath: served.basePath, objects, fieldDefinitions, rateBudget: unlimitedRateBudget });
  sync = createSync({ adapter, ledger: openLedger('memory:') });
});
afterAll(async () => {
  await sync.close();
  await stop();
});

const FIVE = { dealname: 'Acme renewal', amount: 50000, dealstage: 'qualifiedtobuy', pipeline: 'default', closedate: '2027-01-15' };
const dealNamed = (externalId: string) => fake.records('deals').filter((r) => r.properties.ai_external_id === externalId);
const propsOf = (externalId: string) => {
  const found = dealNamed(externalId);
  expect(found).toHaveLength(1);
  const { dealname, amount, dealstage, pipeline, closedate } = found[0]!.properties;
  return { dealname, amount, dealstage, pipeline, closedate };
};
const validate = (schema: Json, call: Json) => {
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  const check = ajv.compile(schema);
  expect(check(call), JSON.stringify(check.errors)).toBe(true);
};
/** A deal with all five fields, written by a plain action. */
async function dealWithFive(externalId: string): Promise<void> {
  expect((await sync.apply({ source: 'crm-test', eventId: `seed-${externalId}`, op: 'upsert', object: 'deal', externalId, fields: FIVE })).status).toBe('created');
  expect(propsOf(externalId)).toEqual({ ...FIVE, amount: '50000' });
}
/** What an OpenAI strict call carries: every argument, null for those not given. */
const openAiCall = (externalId: string, fields: Json, rest: Json = {}) => ({
  externalId, fields: { dealname: null, amount: null, dealstage: null, pipeline: null, closedate: null, ...fields }, clear: null, links: null, idempotencyKey: null, occurredAt: null, ...rest,
});

describe('toolCallAction, openai: a null is "not given"', () => {
  it('updates only amount: the four other fields of the deal are kept', async () => {
    await dealWithFive('tc-partial');
    const call = openAiCall('tc-partial', { amount: 60000 }, { idempotencyKey: 'tc-partial-1' });
    validate(toolSchema(adapter, 'deal', { for: 'openai' }), call);
    const action = toolCallAction(adapter, 'deal', call, { for: 'openai', source: 'agent-a' });
    expect(action).toEqual({ source: 'agent-a', eventId: 'tc-partial-1', op: 'upsert', object: 'deal', externalId: 'tc-partial', fields: { amount: 60000 } });
    expect((await sync.apply(action)).status).toBe('updated');
    expect(propsOf('tc-partial')).toEqual({ ...FIVE, amount: '60000' });
  });

  it('takes the JSON text OpenAI returns as function.arguments', async () => {
    await dealWithFive('tc-text');
    const action = toolCallAction(adapter, 'deal', JSON.stringify(openAiCall('tc-text', { dealstage: 'closedwon' }, { idempotencyKey: 'tc-text-1' })), { for: 'openai' });
    expect(action.fields).toEqual({ dealstage: 'closedwon' });
    expect(action.source).toBe('tool-call');
    expect((await sync.apply(action)).status).toBe('updated');
    expect(propsOf('tc-text')).toEqual({ ...FIVE, amount: '50000', dealstage: 'closedwon' });
  });

  it('empties a field named in clear, and only that one', async () => {
    await dealWithFive('tc-clear-openai');
    const call = openAiCall('tc-clear-openai', { amount: 65000 }, { clear: ['closedate'], idempotencyKey: 'tc-clear-openai-1' });
    validate(toolSchema(adapter, 'deal', { for: 'openai' }), call);
    const action = toolCallAction(adapter, 'deal', call, { for: 'openai' });
    expect(action.fields).toEqual({ amount: 65000, closedate: null });
    expect((await sync.apply(action)).status).toBe('updated');
    expect(propsOf('tc-clear-openai')).toEqual({ ...FIVE, amount: '65000', closedate: '' });
  });

  it('gives a keyless call the time of the call as its event time', () => {
    const action = toolCallAction(adapter, 'deal', openAiCall('tc-keyless', { amount: 1 }), { for: 'openai', now: () => Date.parse('2026-12-01T10:00:00Z') });
    expect(action).toEqual({ source: 'tool-call', occurredAt: '2026-12-01T10:00:00.000Z', op: 'upsert', object: 'deal', externalId: 'tc-keyless', fields: { amount: 1 } });
  });
});

describe('toolCallAction, json-schema and anthropic: a field left out is "not given"', () => {
  it('json-schema: a null empties the field, the others left out are kept', async () => {
    await dealWithFive('tc-clear-json');
    const call = { externalId: 'tc-clear-json', fields: { dealstage: null }, idempotencyKey: 'tc-clear-json-1' };
    const action = toolCallAction(adapter, 'deal', call, { for: 'json-schema' });
    expect(action.fields).toEqual({ dealstage: null });
    expect((await sync.apply(action)).status).toBe('updated');
    expect(propsOf('tc-clear-json')).toEqual({ ...FIVE, amount: '50000', dealstage: '' });
  });

  it('anthropic: clear empties a defined field (whose strict schema takes no null)', async () => {
    await dealWithFive('tc-clear-anthropic');
    const schema = toolSchema(adapter, 'deal', { for: 'anthropic' });
    const amount = (((schema.properties as Json).fields as Json).properties as Json).amount as Json;
    expect(amount.type).toBe('number');
    const call = { externalId: 'tc-clear-anthropic', fields: { dealname: 'Acme renewal 2027' }, clear: ['amount'], idempotencyKey: 'tc-clear-anthropic-1' };
    validate(schema, call);
    const action = toolCallAction(adapter, 'deal', call, { for: 'anthropic' });
    expect(action.fields).toEqual({ dealname: 'Acme renewal 2027', amount: null });
    expect((await sync.apply(action)).status).toBe('updated');
    expect(propsOf('tc-clear-anthropic')).toEqual({ ...FIVE, dealname: 'Acme renewal 2027', amount: '' });
  });

  it('anthropic: a null, where a field takes one, empties it as in an action', () => {
    expect(toolCallAction(adapter, 'deal', { externalId: 'd', fields: { dealname: null } }, { for: 'anthropic' }).fields).toEqual({ dealname: null });
  });
});

describe('toolCallAction: links, and the optional arguments', () => {
  it.each(['openai', 'anthropic', 'json-schema'] as const)('%s: links null is no links, and the deal is written without any', async (dialect) => {
    const externalId = `tc-links-null-${dialect}`;
    const call = dialect === 'openai'
      ? openAiCall(externalId, FIVE, { idempotencyKey: `${externalId}-1` })
      : { externalId, fields: FIVE, links: null, idempotencyKey: `${externalId}-1`, occurredAt: null };
    if (dialect === 'openai') validate(toolSchema(adapter, 'deal', { for: 'openai' }), call);
    const action = toolCallAction(adapter, 'deal', call, { for: dialect });
    expect(action).not.toHaveProperty('links');
    expect(action).not.toHaveProperty('occurredAt');
    expect((await sync.apply(action)).status).toBe('created');
    const [deal] = dealNamed(externalId);
    expect(deal!.associations.companies ?? []).toEqual([]);
  });

  it('carries links given, and writes the association', async () => {
    expect((await sync.apply({ source: 'crm-test', eventId: 'tc-acme', op: 'upsert', object: 'company', externalId: 'tc-acme', fields: { name: 'Acme' } })).status).toBe('created');
    const action = toolCallAction(adapter, 'deal', openAiCall('tc-linked', { dealname: 'Linked' }, { links: [{ object: 'company', externalId: 'tc-acme' }], idempotencyKey: 'tc-linked-1' }), { for: 'openai' });
    expect(action.links).toEqual([{ object: 'company', externalId: 'tc-acme' }]);
    expect((await sync.apply(action)).status).toBe('created');
    const company = fake.records('companies').find((r) => r.properties.ai_external_id === 'tc-acme')!;
    expect(dealNamed('tc-linked')[0]!.associations.companies?.map((a) => a.id)).toContain(company.id);
  });

  it('makes a create tool\'s action, with its target and intent, a null intent not given', () => {
    const action = toolCallAction(adapter, 'note', { target: { object: 'deal', externalId: 'tc-partial' }, fields: { hs_note_body: 'Call went well', hs_timestamp: null }, links: null, idempotencyKey: 'n-1', occurredAt: null, intent: null }, { for: 'openai' });
    expect(action).toEqual({ source: 'tool-call', eventId: 'n-1', op: 'create', object: 'note', target: { object: 'deal', externalId: 'tc-partial' }, fields: { hs_note_body: 'Call went well' } });
  });
});

describe('toolCallAction: bad arguments', () => {
  const reject = (args: unknown, dialect: 'openai' | 'anthropic' | 'json-schema' = 'openai', object = 'deal') => {
    const before = fake.count();
    let thrown: unknown;
    try {
      toolCallAction(adapter, object, args, { for: dialect });
    } catch (err) {
      thrown = err;
    }
    expect(fake.count()).toBe(before);
    expect(thrown).toBeInstanceOf(ValidationError);
    return thrown as ValidationError;
  };

  it.each<[string, unknown, 'openai' | 'anthropic' | 'json-schema', { path: string; message: string }[]]>([
    ['a field off the allowlist, even null', openAiCall('d', { hubspot_owner_id: null }), 'openai',
      [{ path: 'fields.hubspot_owner_id', message: 'is not on the allowlist for "deal" (allowed: dealname, amount, dealstage, pipeline, closedate)' }]],
    ['an unknown argument', { externalId: 'd', fields: {}, priority: 'high' }, 'json-schema',
      [{ path: 'priority', message: 'is not an argument of upsert_deal (arguments: externalId, fields, clear, links, idempotencyKey, occurredAt)' }]],
    ['an unknown argument sent as null', { externalId: 'd', fields: {}, priority: null }, 'openai',
      [{ path: 'priority', message: 'is not an argument of upsert_deal (arguments: externalId, fields, clear, links, idempotencyKey, occurredAt)' }]],
    ['a value of the wrong type', openAiCall('d', { amount: { value: 60000 } }), 'openai',
      [{ path: 'fields.amount', message: 'must be a string, number, boolean, null or (for a multi-select field) a list of strings' }]],
    ['an externalId that is a number', { externalId: 42, fields: {} }, 'anthropic', [{ path: 'externalId', message: 'must be a string: your id for this deal: the value of its external-id field in HubSpot; got the number 42' }]],
    ['a missing externalId', { fields: {} }, 'anthropic', [{ path: 'externalId', message: 'is required (a string: your id for this deal: the value of its external-id field in HubSpot)' }]],
    ['a null externalId', openAiCall('d', {}, { externalId: null }), 'openai', [{ path: 'externalId', message: 'must be a string: your id for this deal: the value of its external-id field in HubSpot; got null' }]],
    ['fields sent as null', { externalId: 'd', fields: null }, 'openai', [{ path: 'fields', message: 'must be an object: the deal fields to write; got null' }]],
    ['a link to an object the deal cannot link to', openAiCall('d', {}, { links: [{ object: 'contact', externalId: 'c' }] }), 'openai',
      [{ path: 'links.0.object', message: '"deal" cannot link to "contact"; allowed: company' }]],
    ['a field to clear that is not on the allowlist', openAiCall('d', {}, { clear: ['hs_priority'] }), 'openai',
      [{ path: 'clear.0', message: '"hs_priority" is not on the allowlist for "deal" (allowed: dealname, amount, dealstage, pipeline, closedate)' }]],
    ['a field both given and cleared', openAiCall('d', { amount: 60000 }, { clear: ['amount'] }), 'openai',
      [{ path: 'fields.amount', message: 'is given a value and also named in clear: give it a value or empty it, not both' }]],
    ['every problem of the call at once', openAiCall('d', { amount: 60000, hs_priority: 'high' }, { clear: ['amount'] }), 'openai', [
      { path: 'fields.hs_priority', message: 'is not on the allowlist for "deal" (allowed: dealname, amount, dealstage, pipeline, closedate)' },
      { path: 'fields.amount', message: 'is given a value and also named in clear: give it a value or empty it, not both' },
    ]],
    ['a bad occurredAt', { externalId: 'd', fields: {}, occurredAt: 'yesterday' }, 'json-schema',
      [{ path: 'occurredAt', message: 'must be an ISO 8601 date-time, e.g. 2026-11-29T10:00:00Z' }]],
    ['arguments that are a list', [1, 2], 'openai', [{ path: '', message: 'the arguments of upsert_deal must be an object, not a list' }]],
    ['text that is not JSON', '{"externalId": "d", fields: {}}', 'openai', [{ path: '', message: 'the arguments of upsert_deal are not valid JSON text' }]],
  ])('rejects %s, naming the argument and the reason, with no CRM call', (_what, args, dialect, issues) => {
    const err = reject(args, dialect);
    expect(err.issues).toEqual(issues);
    expect(err.message).toBe(`[crm-upsert] ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
  });

  it('rejects clear on a create tool, which has none', () => {
    expect(reject({ target: { object: 'deal', externalId: 'd' }, fields: {}, clear: ['hs_note_body'] }, 'anthropic', 'note').issues[0]).toMatchObject({ path: 'clear', message: expect.stringContaining('is not an argument of create_note') });
  });

  it('refuses an object that cannot be written and an unknown dialect as configuration errors', () => {
    expect(() => toolCallAction(adapter, 'ticket', {})).toThrow(ConfigError);
    expect(() => toolCallAction(adapter, 'ticket', {})).toThrow('toolCallAction: "ticket" is not a configured object that can be written (configured: company, deal, note)');
    expect(() => toolCallAction(adapter, 'deal', {}, { for: 'gemini' as never })).toThrow('toolCallAction: unknown dialect "gemini"; known: json-schema, openai, anthropic');
  });
});

describe('the schema says what a null means', () => {
  const props = (dialect: 'openai' | 'anthropic' | 'json-schema') => toolSchema(adapter, 'deal', { for: dialect }).properties as Record<string, Json>;

  it('openai: every field, the fields object and every optional argument say null is "not given"', () => {
    const p = props('openai');
    expect(p.fields!.description).toContain('null means "not given", and the record keeps that field\'s value (a null never empties a field; to empty one, name it in clear)');
    for (const [name, field] of Object.entries(p.fields!.properties as Record<string, Json>)) {
      expect(field.description, name).toContain('null: not written, the record keeps its value (to empty it, name it in clear).');
    }
    expect(p.links!.description).toContain('null: no links.');
    expect(p.clear!.description).toContain('null: empty none.');
    expect(p.idempotencyKey!.description).toContain('null: not given.');
    expect(p.clear).toMatchObject({ type: ['array', 'null'], items: { type: 'string', enum: ['dealname', 'amount', 'dealstage', 'pipeline', 'closedate'] } });
  });

  it('anthropic and json-schema: leaving a field out keeps it; clear (and a null) empties it', () => {
    expect(props('anthropic').fields!.description).toContain('Leave a field out to keep what the record holds; to empty one, name it in clear (a null, where a field takes one, empties it too).');
    expect(props('json-schema').fields!.description).toContain('Leave a field out to keep what the record holds; null empties it, and so does naming it in clear.');
    expect(props('anthropic').clear).toMatchObject({ type: 'array', items: { enum: ['dealname', 'amount', 'dealstage', 'pipeline', 'closedate'] } });
  });

  it('a create tool has no clear: its fields description says null only', () => {
    const note = toolSchema(adapter, 'note', { for: 'openai' }).properties as Record<string, Json>;
    expect(note.clear).toBeUndefined();
    expect(note.fields!.description).toContain('Every field must be sent: null means "not given", and that field is not written.');
    expect((note.fields!.properties as Record<string, Json>).hs_note_body!.description).toContain('null: not written.');
    expect((toolSchema(adapter, 'note', { for: 'anthropic' }).properties as Record<string, Json>).fields!.description).toContain('A field left out is not written.');
  });
});
