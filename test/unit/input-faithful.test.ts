/**
 * Inputs that cannot be represented faithfully are rejected one by one, with a path and a reason,
 * and never take their neighbours down: lone UTF-16 surrogates (the schema), and inputs that
 * throw or change when read (the snapshot taken before parsing).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { actionJsonSchema, actionSchema } from '../../schemas/action.js';
import { formatZodIssues } from '../../schemas/parse.js';
import { snapshotInput } from '../../schemas/snapshot.js';
import { isWellFormed } from '../../schemas/unicode.js';
import { createSync } from '../../src/engine/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';
import { openLedger } from '../../src/index.js';
import { memoryCrm } from '../helpers/memory-crm.js';
import { harness, statuses, type Harness } from '../e2e/salesforce-helpers.js';

const LONE = 'contains a lone UTF-16 surrogate';
const contact = (n: number, extra: Record<string, unknown> = {}) => ({ source: 'test', eventId: `evt-${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email: `c${n}@example.test` }, ...extra });
const note = (n: number, extra: Record<string, unknown> = {}) => ({ source: 'test', eventId: `evt-n${n}`, op: 'create', object: 'note', target: { object: 'contact', externalId: 'c-1' }, fields: { body: `note ${n}` }, ...extra });

describe('lone UTF-16 surrogates', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('rejects the Task whose target has one, by path, and creates its valid neighbour (Salesforce, real jsforce)', async () => {
    h = await harness('loopback');
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 5 } });
    await sync.apply({ source: 'sf', eventId: 'evt-c', op: 'upsert', object: 'contact', externalId: 'C-1', fields: { LastName: 'One' } });
    const task = (eventId: string, externalId: string) => ({ source: 'sf', eventId, op: 'create', object: 'task', target: { object: 'contact', externalId }, fields: { Subject: `call ${eventId}` } });

    const outcomes = await sync.applyMany([task('evt-good', 'C-1'), task('evt-bad', 'C-\ud800')]);

    expect(statuses(outcomes)).toEqual({ created: 1, rejected: 1 });
    expect(outcomes[0]!.status).toBe('created');
    expect(outcomes[1]).toMatchObject({ status: 'rejected', error: { code: 'VALIDATION', path: 'target.externalId' } });
    expect(outcomes[1]!.error!.message).toContain(`target.externalId: ${LONE}`);
    expect(outcomes.filter((o) => o.status === 'failed')).toHaveLength(0);
    expect(h.fake.records('Task').map((t) => t.Subject)).toEqual(['call evt-good']);
    await sync.close();
  });

  it.each([
    ['source', { source: 'zen\udc00desk' }, 'source'],
    ['eventId', { eventId: 'evt-\ud83d' }, 'eventId'],
    ['intent', { intent: '\udfff' }, 'intent'],
    ['externalId', { externalId: 'c-\ud800x' }, 'externalId'],
    ['object', { object: 'cont\ud800act' }, 'object'],
    ['a string field value', { fields: { email: 'a\udc00@b.c' } }, 'fields.email'],
    ['a field name', { fields: { ['em\ud800ail']: 'a@b.c' } }, 'fields.em\\uD800ail'],
  ])('rejects one in %s with its path and reason, and writes its neighbours', async (_label, bad, path) => {
    const crm = memoryCrm();
    const ledger = memoryLedger();
    const sync = createSync({ adapter: crm.adapter, ledger });
    const outcomes = await sync.applyMany([contact(1), contact(2, bad), contact(3)]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'created']);
    expect(outcomes[1]!.error).toMatchObject({ code: 'VALIDATION', path });
    expect(outcomes[1]!.error!.message).toContain(LONE);
    // The outcome is printable and encodable: no lone surrogate leaks into it.
    expect(isWellFormed(JSON.stringify(outcomes[1]))).toBe(true);
    expect((await ledger.list()).map((e) => e.key)).not.toContain(outcomes[1]!.key || 'none');
  });

  it('rejects one in target.object and keeps a valid surrogate pair', () => {
    const bad = formatZodIssues(actionSchema.safeParse(note(1, { target: { object: 'con\udbfftact', externalId: 'c-1' } })).error!);
    expect(bad).toEqual([{ path: 'target.object', message: LONE }]);
    expect(actionSchema.safeParse(contact(1, { externalId: 'c-😀', fields: { email: '😀 \ud83d\ude00' } })).success).toBe(true);
  });

  it('says so in the JSON Schema for tool-call consumers', () => {
    const schema = actionJsonSchema() as { properties: Record<string, { pattern?: string; properties?: Record<string, { pattern?: string }>; propertyNames?: { pattern?: string }; additionalProperties?: { anyOf: { pattern?: string }[] } }> };
    for (const flag of ['', 'u']) {
      const re = (p: string | undefined) => new RegExp(p!, flag);
      for (const name of ['source', 'eventId', 'object', 'externalId', 'intent']) {
        expect(re(schema.properties[name]!.pattern).test('ok 😀')).toBe(true);
        expect(re(schema.properties[name]!.pattern).test('ko \ud800')).toBe(false);
      }
      expect(re(schema.properties.target!.properties!.externalId!.pattern).test('x\udc00')).toBe(false);
      expect(re(schema.properties.fields!.propertyNames!.pattern).test('x\udc00')).toBe(false);
      expect(re(schema.properties.fields!.additionalProperties!.anyOf[0]!.pattern).test('line\nbreak 😀')).toBe(true);
      expect(re(schema.properties.fields!.additionalProperties!.anyOf[0]!.pattern).test('x\udc00')).toBe(false);
    }
  });
});

describe('inputs that throw or change when read', () => {
  const revoked = () => {
    const r = Proxy.revocable(contact(90), {});
    r.revoke();
    return r.proxy;
  };
  const cyclic = () => {
    const a = contact(91) as Record<string, unknown>;
    (a.fields as Record<string, unknown>).self = a;
    return a;
  };
  const throwing = () => {
    const a = contact(92);
    Object.defineProperty(a, 'externalId', { enumerable: true, get: () => { throw new Error('getter exploded, token pat-na1-secret-123'); } });
    return a;
  };
  const trap = () => new Proxy(contact(93), { ownKeys: () => { throw new RangeError('ownKeys trap'); } });
  const badMessage = () => {
    const a = contact(94);
    const err = Object.defineProperty(new Error('x'), 'message', { get: () => { throw new Error('again'); } });
    Object.defineProperty(a, 'fields', { enumerable: true, get: () => { throw err; } });
    return a;
  };

  it.each([
    ['a getter that throws', throwing, 'externalId', /cannot be read: Error: getter exploded/],
    ['a revoked Proxy', revoked, '', /cannot be read: TypeError/],
    ['a Proxy whose trap throws', trap, '', /cannot be read: RangeError: ownKeys trap/],
    ['an error whose message throws', badMessage, 'fields', /cannot be read: an unprintable value/],
    ['a cyclic object', cyclic, 'fields.self', /cycle/],
    ['a BigInt', () => contact(95, { fields: { email: 10n } }), 'fields.email', /BigInt/],
    ['a BigInt at the root', () => 10n, '', /BigInt/],
    ['a function value', () => contact(96, { intent: () => 'x' }), 'intent', /function/],
    ['a symbol value', () => contact(97, { source: Symbol('s') }), 'source', /symbol/],
    ['a Map of fields', () => contact(98, { fields: new Map([['email', 'a@b.c']]) }), 'fields', /Map object, not plain data/],
    ['a Date', () => contact(99, { occurredAt: new Date() }), 'occurredAt', /ISO 8601/],
  ])('rejects %s alone, with a reason, and writes its neighbours', async (_label, make, path, reason) => {
    const crm = memoryCrm();
    const ledger = memoryLedger();
    const sync = createSync({ adapter: crm.adapter, ledger });
    const outcomes = await sync.applyMany([contact(1), make(), note(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'created']);
    expect(outcomes[1]!.error).toMatchObject({ code: 'VALIDATION', path });
    expect(outcomes[1]!.error!.message).toMatch(reason);
    expect(JSON.stringify(outcomes)).not.toContain('pat-na1-secret-123');
    expect(crm.records('contact').map((r) => r.externalId)).toEqual(['c-1']);
    expect(crm.activities('note')).toHaveLength(1);
    expect(await ledger.list()).toHaveLength(2);
  });

  it('reads each property once: a getter that changes its answer cannot make validation and the write differ', async () => {
    const crm = memoryCrm();
    const sync = createSync({ adapter: crm.adapter, ledger: memoryLedger() });
    let reads = 0;
    const shifty = contact(5);
    // First read: an allowed field. Any later read: a field the allowlist forbids.
    Object.defineProperty(shifty, 'fields', { enumerable: true, get: () => (++reads === 1 ? { email: 'first@example.test' } : { email: 'later@example.test', hubspot_owner_id: '7' }) });
    const proxied = new Proxy(contact(6), {
      getOwnPropertyDescriptor(target, key) {
        const d = Reflect.getOwnPropertyDescriptor(target, key);
        return key === 'externalId' && d ? { ...d, value: `c-6-${++reads}` } : d;
      },
      get: () => 'never read through get',
    });

    const outcomes = await sync.applyMany([shifty, proxied]);

    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created']);
    expect(reads).toBe(2);
    expect(crm.records('contact').map((r) => [r.externalId, r.fields])).toEqual([
      ['c-5', { email: 'first@example.test' }],
      ['c-6-2', { email: 'c6@example.test' }],
    ]);
  });

  it('copies into plain data, keeps an own "__proto__" visible to the schema and accepts shared (acyclic) references', () => {
    const shared = { email: 'a@b.c' };
    const snap = snapshotInput({ a: shared, b: shared, list: [1, 'x', null], n: Object.assign(Object.create(null) as object, { k: 1 }) });
    expect(snap).toEqual({ ok: true, value: { a: { email: 'a@b.c' }, b: { email: 'a@b.c' }, list: [1, 'x', null], n: { k: 1 } } });
    const proto = snapshotInput(JSON.parse('{"__proto__":{"polluted":true}}'));
    expect(proto.ok && Object.hasOwn(proto.value as object, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const rejected = snapshotInput(JSON.parse('{"source":"s","eventId":"e","op":"upsert","object":"contact","externalId":"x","fields":{"__proto__":{"a":1}}}'));
    expect(rejected.ok && actionSchema.safeParse(rejected.value).success).toBe(false);
  });

  it('refuses input nested deeper than an action can be, instead of exhausting the stack', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const snap = snapshotInput(deep);
    expect(snap.ok).toBe(false);
    expect(!snap.ok && snap.issues[0]!.message).toMatch(/nests deeper than 32 levels/);
  });
});
