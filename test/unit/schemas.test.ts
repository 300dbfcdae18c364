import { describe, expect, it } from 'vitest';
import { actionJsonSchema, actionSchema } from '../../schemas/action.js';
import { configSchema } from '../../adapters/config-schema.js';
import { formatZodIssues } from '../../schemas/parse.js';
import { createSync } from '../../src/engine/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';
import { memoryCrm } from '../helpers/memory-crm.js';

const issues = (schema: typeof configSchema, input: unknown) => {
  const r = schema.safeParse(input);
  return r.success ? [] : formatZodIssues(r.error);
};

describe('action JSON Schema', () => {
  it('exports the action for LLM tool calls with its required properties', () => {
    const schema = actionJsonSchema() as { type: string; required: string[]; properties: Record<string, unknown>; additionalProperties: boolean };
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(expect.arrayContaining(['source', 'op', 'object', 'fields']));
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['eventId', 'occurredAt', 'externalId', 'target', 'intent']));
    expect(schema.additionalProperties).toBe(false);
  });

  it('accepts the example action of the design', () => {
    expect(actionSchema.safeParse({ source: 'zendesk', eventId: 'evt_9', op: 'upsert', object: 'contact', externalId: 'zd-42', fields: { email: 'a@b.c', firstname: null } }).success).toBe(true);
  });
});

describe('action field values', () => {
  const action = (value: unknown) => ({ source: 'zendesk', eventId: 'evt_9', op: 'upsert', object: 'contact', externalId: 'zd-42', fields: { email: 'a@b.c', firstname: value } });
  const parsed = (value: unknown) => {
    const r = actionSchema.safeParse(action(value));
    return r.success ? [] : formatZodIssues(r.error);
  };

  it.each([
    ['an object', { first: 'Ana' }],
    ['an empty object', {}],
    ['a list of numbers', [1, 2]],
    ['a list holding an object', ['Ana', {}]],
    ['undefined', undefined],
  ])('rejects %s with the field path and what a value may be', (_what, value) => {
    expect(parsed(value)).toEqual([{ path: 'fields.firstname', message: 'must be a string, number, boolean, null or (for a multi-select field) a list of strings' }]);
  });

  it('takes a list of strings (the engine accepts it only for a multi-select field)', () => {
    expect(parsed(['Ana', 'Bo'])).toEqual([]);
  });

  it('refuses a list for a field with no multi-select definition, with 0 calls', async () => {
    const crm = memoryCrm();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger() });
    const outcome = await sync.apply(action(['Ana']));
    expect(outcome).toMatchObject({ status: 'rejected', error: { path: 'fields.firstname' } });
    expect(outcome.error!.message).toContain('a list of values is only for a multi-select field with a field definition');
    expect(crm.adapter.apiCalls()).toBe(0);
    await sync.close();
  });

  it('says a number must be finite', () => {
    expect(parsed(Infinity)).toEqual([{ path: 'fields.firstname', message: 'must be a finite number' }]);
  });

  it.each(['Ana', 7, false, null])('accepts %j', (value) => {
    expect(parsed(value)).toEqual([]);
  });

  it('gives the engine’s rejected outcome the same reason, writing nothing', async () => {
    const crm = memoryCrm();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger() });
    const outcome = await sync.apply(action({ first: 'Ana' }));
    expect(outcome.status).toBe('rejected');
    expect(outcome.error).toMatchObject({ path: 'fields.firstname', message: '[crm-upsert] fields.firstname: must be a string, number, boolean, null or (for a multi-select field) a list of strings' });
    expect(crm.adapter.apiCalls()).toBe(0);
    await sync.close();
  });
});

describe('config schema', () => {
  const hubspot = { objects: { contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'] } } };

  it('fills the defaults', () => {
    const c = configSchema.parse({ crm: 'hubspot', hubspot });
    expect(c).toMatchObject({ ledger: 'sqlite:.crm-upsert/ledger.db', dedupeWindowMs: 600_000 });
  });

  it('names the missing field', () => {
    const bad = { crm: 'hubspot', hubspot: { objects: { contact: { kind: 'record', objectType: 'contacts', fields: ['email'] } } } };
    expect(issues(configSchema, bad).map((i) => i.path)).toContain('hubspot.objects.contact.idProperty');
  });

  it('refuses a token in the config file and says where it belongs', () => {
    const found = issues(configSchema, { crm: 'hubspot', hubspot: { ...hubspot, accessToken: 'pat-123' } });
    expect(found[0]).toMatchObject({ path: 'hubspot.accessToken' });
    expect(found[0]!.message).toContain('HUBSPOT_ACCESS_TOKEN');
    expect(JSON.stringify(found)).not.toContain('pat-123');
  });

  it.each(['hubspot', 'salesforce'] as const)('takes onMissing on a %s record object, create or skip, and names any other value', (crm) => {
    const record = crm === 'hubspot'
      ? { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'] }
      : { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email'] };
    const config = (onMissing: unknown) => ({ crm, [crm]: { objects: { contact: { ...record, onMissing } } } });
    expect(configSchema.parse(config('skip'))[crm]!.objects.contact).toMatchObject({ onMissing: 'skip' });
    expect(configSchema.parse(config('create'))[crm]!.objects.contact).toMatchObject({ onMissing: 'create' });
    expect(issues(configSchema, config('never')).map((i) => i.path)).toEqual([`${crm}.objects.contact.onMissing`]);
  });

  it('needs the section of the chosen CRM', () => {
    expect(issues(configSchema, { crm: 'salesforce', hubspot }).map((i) => i.path)).toContain('salesforce');
  });

  it('names a shared rate budget URL that is not Redis or Postgres', () => {
    const found = issues(configSchema, { crm: 'hubspot', hubspot, sharedRateBudget: { url: 'http://x', points: 100, durationMs: 10_000 } });
    expect(found.map((i) => i.path)).toEqual(['sharedRateBudget.url']);
  });

  it('names an unknown top-level property', () => {
    expect(issues(configSchema, { crm: 'hubspot', hubspot, dedupeWindow: 5 }).map((i) => i.path)).toContain('dedupeWindow');
  });
});
