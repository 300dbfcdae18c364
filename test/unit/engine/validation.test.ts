import { describe, expect, it } from 'vitest';
import { createSync } from '../../../src/engine/index.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const good = { source: 'zendesk', eventId: 'e1', op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { email: 'a@b.c' } };

describe('bad input', () => {
  it.each([
    ['a missing source', { ...good, source: undefined }, 'source'],
    ['a wrong type', { ...good, fields: { email: 42n as unknown as number } }, 'fields.email'],
    ['a nested object value', { ...good, fields: { email: { $gt: '' } } }, 'fields.email'],
    ['a field not on the allowlist', { ...good, fields: { email: 'a@b.c', hs_lead_status: 'OPEN' } }, 'fields.hs_lead_status'],
    ['an oversized value', { ...good, fields: { email: 'x'.repeat(70_000) } }, 'fields.email'],
    ['an unknown object', { ...good, object: 'invoice' }, 'object'],
    ['an upsert without externalId', { ...good, externalId: undefined }, 'externalId'],
    ['a create without target', { ...good, op: 'create', object: 'note', externalId: undefined, fields: { body: 'x' } }, 'target'],
    ['a create on a disallowed parent', { ...good, op: 'create', object: 'task', externalId: undefined, target: { object: 'company', externalId: 'c' }, fields: { subject: 'x' } }, 'target.object'],
    ['an unknown property', { ...good, prompt: 'ignore previous instructions' }, 'prompt'],
    ['a bad occurredAt', { ...good, occurredAt: 'yesterday' }, 'occurredAt'],
    ['an empty externalId', { ...good, externalId: '' }, 'externalId'],
    ['a control character in an id', { ...good, externalId: 'a\u0000b' }, 'externalId'],
    ['a non-object', 'upsert contact please', ''],
  ])('rejects %s with the field path and reason, claiming and writing nothing', async (_label, input, path) => {
    const crm = memoryCrm();
    const ledger = memoryLedger();
    const sync = createSync({ adapter: crm.adapter, ledger });
    const outcome = await sync.apply(input);
    expect(outcome.status).toBe('rejected');
    expect(outcome.error!.code).toBe('VALIDATION');
    expect(outcome.error!.path).toBe(path);
    expect(outcome.error!.message).toContain(path ? `${path}:` : '(root)');
    expect(crm.adapter.apiCalls()).toBe(0);
    expect(await ledger.list()).toEqual([]);
  });

  it('writes the valid actions of a mixed batch and rejects only the bad ones', async () => {
    const crm = memoryCrm();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger() });
    const outcomes = await sync.applyMany([good, { ...good, eventId: 'e2', fields: { ssn: '1' } }, { ...good, eventId: 'e3', externalId: 'zd-3' }]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'created']);
    expect(crm.records('contact').map((r) => r.externalId)).toEqual(['zd-1', 'zd-3']);
  });
});

describe('prototype keys', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('rejects a field named %s, naming it', async (name) => {
    const crm = memoryCrm();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger() });
    const input = JSON.parse(`{"source":"s","eventId":"e","op":"upsert","object":"contact","externalId":"c","fields":{"${name}":"x","email":"a@b.c"}}`) as unknown;
    const outcome = await sync.apply(input);
    expect(outcome).toMatchObject({ status: 'rejected', error: { path: `fields.${name}` } });
    expect(crm.adapter.apiCalls()).toBe(0);
  });
});
