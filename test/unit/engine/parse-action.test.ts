/**
 * The prepare stage's direct parse never disagrees with zod: whenever it answers an input, zod
 * accepts the same input and produces the same value, keys in the same order; everything else
 * goes to zod. Generated inputs sit on every rule's edge (lengths, control characters, lone
 * surrogates, undefined, extra keys, wrong types, the op's shape, forbidden field names).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionSchema } from '../../../schemas/action.js';
import { parseAction, parseDirect } from '../../../src/engine/parse-action.js';

const edgeString = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', 'a', 'x'.repeat(99), 'x'.repeat(100), 'x'.repeat(101), 'x'.repeat(200), 'x'.repeat(201), 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(500), 'x'.repeat(501)),
  fc.constantFrom('tab\there', 'nl\n', 'del\u007f', 'nul\u0000', 'lone\uD800', '\uDC00x', 'pair\uD83D\uDE80', 'é', ' ', 'ключ', 'a\u0085b', 'a\u2028b'),
);
const value = fc.oneof(edgeString, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant([]), fc.constant({}), fc.constant(-0));
const fieldName = fc.oneof(edgeString, fc.constantFrom('__proto__', 'constructor', 'prototype', 'email', '0', '10'));
const fields = fc.oneof(
  fc.dictionary(fieldName, value, { maxKeys: 4 }),
  fc.constantFrom(null, [], 'x', { email: 'a@b.co' }),
);
const when = fc.oneof(fc.constantFrom('2026-11-29T10:00:00Z', '2026-11-29T10:00:00+02:00', '2026-11-29T10:00:00.123Z', '2026-11-29', '2026-11-29T10:00:00', 'yesterday', ''), edgeString);
const target = fc.oneof(
  fc.record({ object: edgeString, externalId: edgeString }),
  fc.record({ object: edgeString, externalId: edgeString, extra: edgeString }),
  fc.record({ object: edgeString }),
  fc.constantFrom(undefined, null, 'c-1'),
);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const links = fc.oneof(
  fc.array(target, { maxLength: 3 }),
  fc.constantFrom(null, 'company', {}, Array.from({ length: 100 }, (_, i) => ({ object: 'company', externalId: `co-${i}` })), Array.from({ length: 101 }, (_, i) => ({ object: 'company', externalId: `co-${i}` }))),
);
const action = fc.record({
  source: fc.oneof(edgeString, fc.constant('zendesk')),
  eventId: optional(fc.oneof(edgeString, fc.constant('evt-1'))),
  occurredAt: optional(when),
  op: fc.constantFrom('upsert', 'create', 'delete', undefined),
  object: fc.oneof(edgeString, fc.constant('contact')),
  externalId: optional(fc.oneof(edgeString, fc.constant('c-1'))),
  target: optional(target),
  intent: optional(edgeString),
  fields,
  links: optional(links),
  extra: optional(edgeString),
}, { requiredKeys: [] });

/** A valid common action with its optional keys dropped at random: the direct path's own ground. */
const valid = fc.record({
  source: fc.constantFrom('zendesk', 'gong', 'webhook:stripe'),
  eventId: optional(fc.string({ minLength: 1, maxLength: 20 }).filter((s) => ![...s].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) && (s as unknown as { isWellFormed(): boolean }).isWellFormed())),
  occurredAt: optional(fc.constantFrom('2026-11-29T10:00:00Z', '2026-11-29T10:00:00.5+01:00')),
  upsert: fc.boolean(),
  intent: optional(fc.constantFrom('welcome', 'follow-up')),
  fields: fc.dictionary(fc.constantFrom('email', 'firstname', 'hs_note_body', 'Subject'), fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 3 }),
  links: optional(fc.array(fc.record({ object: fc.constantFrom('company', 'deal'), externalId: fc.constantFrom('acme', 'd-1', 'é') }), { maxLength: 3 })),
}).map(({ upsert, ...a }) => {
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined));
  if (a.links) out.links = a.links.map((l) => ({ ...l }));
  out.fields = Object.fromEntries(Object.entries(a.fields).filter(([, v]) => typeof v !== 'string' || (v as unknown as { isWellFormed(): boolean }).isWellFormed()));
  return upsert ? { ...out, op: 'upsert', object: 'contact', externalId: 'c-1' } : { ...out, op: 'create', object: 'note', target: { object: 'contact', externalId: 'c-1' } };
});

function agrees(input: unknown): void {
  const zod = actionSchema.safeParse(input);
  const direct = parseDirect(input);
  if (direct !== undefined) {
    expect(zod.success).toBe(true);
    expect(direct).toEqual(zod.data);
    expect(JSON.stringify(direct)).toBe(JSON.stringify(zod.data));
  }
  const ours = parseAction(input);
  expect(ours.success).toBe(zod.success);
  if (ours.success && zod.success) expect(JSON.stringify(ours.data)).toBe(JSON.stringify(zod.data));
}

describe('parseAction', () => {
  it('answers directly only what zod accepts, with the same value (6,000 edge inputs)', () => {
    fc.assert(fc.property(action, (a) => agrees(a)), { numRuns: 6_000, seed: 13 });
  });

  it('takes the direct path for valid common actions, agreeing with zod', () => {
    let direct = 0;
    fc.assert(fc.property(valid, (a) => {
      agrees(a);
      if (parseDirect(a) !== undefined) direct += 1;
    }), { numRuns: 2_000, seed: 7 });
    expect(direct).toBe(2_000);
  });

  it('leaves explicit undefined, extra keys and non-plain objects to zod', () => {
    const base = { source: 's', eventId: 'e', op: 'upsert', object: 'contact', externalId: 'c', fields: { email: 'a@b.co' } };
    expect(parseDirect(base)).toEqual(base);
    expect(parseDirect({ ...base, intent: undefined })).toBeUndefined();
    expect(parseDirect({ ...base, extra: 1 })).toBeUndefined();
    expect(parseDirect(Object.assign(Object.create(null), base))).toBeUndefined();
    expect(parseDirect({ ...base, fields: Object.assign(Object.create(null), { email: 'x' }) })).toBeUndefined();
    for (const bad of [{ ...base, target: { object: 'a', externalId: 'b' } }, { ...base, op: 'create' }, { ...base, fields: JSON.parse('{"__proto__":{"x":1}}') as object }]) {
      expect(parseDirect(bad)).toBeUndefined();
      agrees(bad);
    }
  });
});
