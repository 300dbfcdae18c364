/**
 * formatZodIssues: every kind of zod issue in words, naming the field and what it needs; a message
 * a schema sets itself is kept; zod's own English never comes out. And the same words wherever an
 * action is parsed: parseWith, the engine's prepare / apply.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { actionSchema } from '../../schemas/action.js';
import { formatZodIssues, issueMessage, withNeeds, type FieldNeeds } from '../../schemas/parse.js';
import { parseWith } from '../../src/parse-with.js';
import { createSync, openLedger, ValidationError } from '../../src/index.js';
import { memoryCrm } from '../helpers/memory-crm.js';

const ZOD_ENGLISH = /Invalid (input|option|string|number|key|element)|Too (big|small)|Unrecognized key|expected \w+, received/;

function messages(schema: z.ZodType, input: unknown, needs?: FieldNeeds) {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error('expected a failure');
  const issues = formatZodIssues(parsed.error, { input, ...(needs ? { needs } : {}) });
  for (const i of issues) expect(i.message).not.toMatch(ZOD_ENGLISH);
  return issues;
}

describe('formatZodIssues, by issue kind', () => {
  const person = z.strictObject({
    name: z.string(),
    age: z.number().int().min(0).max(150).optional(),
    role: z.enum(['admin', 'member']).optional(),
    kind: z.literal('person').optional(),
    tags: z.array(z.string().min(1)).min(1).max(2).optional(),
    code: z.string().min(3).max(5).optional(),
    email: z.email().optional(),
    site: z.url().optional(),
    when: z.iso.datetime().optional(),
    slug: z.string().regex(/^[a-z]+$/).optional(),
    step: z.number().multipleOf(5).optional(),
    value: z.union([z.string(), z.number(), z.null()]).optional(),
    address: z.strictObject({ city: z.string() }).optional(),
    labels: z.record(z.string().min(2), z.string()).optional(),
  });

  it('a missing required field: "is required" and the kind of value, or the words given for it', () => {
    expect(messages(person, {})).toEqual([{ path: 'name', message: 'is required (a string)' }]);
    expect(messages(person, {}, { name: 'a string: the person\'s full name' })).toEqual([{ path: 'name', message: 'is required (a string: the person\'s full name)' }]);
    expect(messages(person, { name: 'a', address: {} })).toEqual([{ path: 'address.city', message: 'is required (a string)' }]);
  });

  it('a missing enum field: "is required" with its values', () => {
    const s = z.strictObject({ op: z.enum(['upsert', 'create']) });
    expect(messages(s, {})).toEqual([{ path: 'op', message: 'is required (one of "upsert", "create")' }]);
  });

  it('a wrong type: what it must be and what was sent, a string never quoted', () => {
    expect(messages(person, { name: 5 })).toEqual([{ path: 'name', message: 'must be a string; got the number 5' }]);
    expect(messages(person, { name: null })).toEqual([{ path: 'name', message: 'must be a string; got null' }]);
    expect(messages(person, { name: 'a', age: 'old' })).toEqual([{ path: 'age', message: 'must be a number; got a string' }]);
    expect(messages(person, { name: 'a', age: 1.5 })).toEqual([{ path: 'age', message: 'must be a whole number; got the number 1.5' }]);
    expect(messages(person, { name: 'a', tags: 'x' })).toEqual([{ path: 'tags', message: 'must be a list; got a string' }]);
    expect(messages(person, { name: 'a', address: [] })).toEqual([{ path: 'address', message: 'must be an object; got a list' }]);
    expect(messages(person, 'nope')).toEqual([{ path: '', message: 'must be an object; got a string' }]);
  });

  it('an unknown key: named at its own path, with the known ones when the words are given', () => {
    expect(messages(person, { name: 'a', nick: 'b' })).toEqual([{ path: 'nick', message: 'is not a known property' }]);
    expect(messages(person, { name: 'a', address: { city: 'x', zip: 1 } }, { name: 'a string', 'address.city': 'a string', 'address.zip': 'never' })).toEqual([
      { path: 'address.zip', message: 'is not a known property (known: city, zip)' },
    ]);
  });

  it('a value off an enum or a literal: the allowed values and what was sent', () => {
    expect(messages(person, { name: 'a', role: 'owner' })).toEqual([{ path: 'role', message: 'must be one of "admin", "member"; got "owner"' }]);
    expect(messages(person, { name: 'a', kind: 'robot' })).toEqual([{ path: 'kind', message: 'must be "person"; got "robot"' }]);
  });

  it('too long, too short, too big, too small: the bound and the size sent', () => {
    expect(messages(person, { name: 'a', code: 'abcdefgh' })).toEqual([{ path: 'code', message: 'must be at most 5 characters (it is 8 characters)' }]);
    expect(messages(person, { name: 'a', code: 'ab' })).toEqual([{ path: 'code', message: 'must be at least 3 characters (it is 2 characters)' }]);
    expect(messages(person, { name: 'a', tags: ['x', 'y', 'z'] })).toEqual([{ path: 'tags', message: 'must hold at most 2 items (it has 3)' }]);
    expect(messages(person, { name: 'a', tags: [] })).toEqual([{ path: 'tags', message: 'must not be empty' }]);
    expect(messages(person, { name: 'a', tags: [''] })).toEqual([{ path: 'tags.0', message: 'must not be empty' }]);
    expect(messages(person, { name: 'a', age: 200 })).toEqual([{ path: 'age', message: 'must be at most 150 (it is 200)' }]);
    expect(messages(person, { name: 'a', age: -1 })).toEqual([{ path: 'age', message: 'must be at least 0 (it is -1)' }]);
    expect(messages(z.number().positive(), 0)).toEqual([{ path: '', message: 'must be greater than 0 (it is 0)' }]);
  });

  it('a bad format: what form it must take', () => {
    expect(messages(person, { name: 'a', email: 'ann' })).toEqual([{ path: 'email', message: 'must be an email address' }]);
    expect(messages(person, { name: 'a', site: 'not a url' })).toEqual([{ path: 'site', message: 'must be a URL, e.g. https://example.com' }]);
    expect(messages(person, { name: 'a', when: 'yesterday' })).toEqual([{ path: 'when', message: 'must be an ISO 8601 date-time, e.g. 2026-11-29T10:00:00Z' }]);
    expect(messages(person, { name: 'a', slug: 'A-1' })).toEqual([{ path: 'slug', message: 'must match the pattern /^[a-z]+$/' }]);
    expect(messages(z.string().startsWith('redis://'), 'http://x')).toEqual([{ path: '', message: 'must start with "redis://"' }]);
  });

  it('a number off its step, a value no union branch takes, a bad record key', () => {
    expect(messages(person, { name: 'a', step: 7 })).toEqual([{ path: 'step', message: 'must be a multiple of 5' }]);
    expect(messages(person, { name: 'a', value: true })).toEqual([{ path: 'value', message: 'must be a string, a number or null; got true' }]);
    expect(messages(person, { name: 'a', labels: { x: 'y' } })).toEqual([{ path: 'labels.x', message: 'field name must be at least 2 characters (it is 1 character)' }]);
  });

  it('keeps a message the schema sets itself, for any kind', () => {
    const s = z.strictObject({
      url: z.string().regex(/^redis:/, 'must be a redis:// URL'),
      n: z.number({ error: 'must be a number of seconds' }),
      x: z.string().refine((v) => v !== 'bad', 'is a word we refuse'),
    });
    expect(messages(s, { url: 'http:', n: 'ten', x: 'bad' })).toEqual([
      { path: 'url', message: 'must be a redis:// URL' },
      { path: 'n', message: 'must be a number of seconds' },
      { path: 'x', message: 'is a word we refuse' },
    ]);
  });

  it('without the input, still words the issue from what zod reports', () => {
    const parsed = person.safeParse({ age: 'x', role: 'owner' });
    if (parsed.success) throw new Error('expected a failure');
    expect(formatZodIssues(parsed.error)).toEqual([
      { path: 'name', message: 'is required (a string)' },
      { path: 'age', message: 'must be a number; got a string' },
      { path: 'role', message: 'must be one of "admin", "member"' },
    ]);
    expect(issueMessage({ code: 'custom', path: [], message: 'Invalid input', input: 1 } as z.core.$ZodIssue)).toBe('is not valid');
  });

  it('withNeeds: parseWith says the words attached to the schema', () => {
    const s = withNeeds(z.strictObject({ id: z.string() }), { id: 'a string: the order id' });
    expect(() => parseWith(s, {})).toThrow(ValidationError);
    expect(() => parseWith(s, {})).toThrow('id: is required (a string: the order id)');
  });
});

describe('an action without source, or with a bad field, in words wherever it is parsed', () => {
  const line = { eventId: 'e-1', op: 'upsert', object: 'contact', externalId: 'c-1', fields: { email: 'a@example.com' } };
  const SOURCE = 'source: is required (a string naming the system the event came from, e.g. "zendesk")';

  it('parseWith(actionSchema)', () => {
    expect(() => parseWith(actionSchema, line)).toThrow(SOURCE);
    expect(() => parseWith(actionSchema, { ...line, source: 's', op: 'delete' })).toThrow('op: must be one of "upsert", "create"; got "delete"');
    expect(() => parseWith(actionSchema, { ...line, source: 's', extra: 1 })).toThrow('extra: is not a known property (known: source, eventId, occurredAt, op, object, externalId, target, intent, fields, links)');
    expect(() => parseWith(actionSchema, { ...line, source: 's'.repeat(201) })).toThrow('source: must be at most 200 characters');
    expect(() => parseWith(actionSchema, { ...line, source: 's', links: [{ externalId: 'x' }] })).toThrow('links.0.object: is required (a string naming a configured record object, e.g. "company")');
  });

  it('the engine: prepare and apply reject it with the same words, and call nothing', async () => {
    const crm = memoryCrm();
    const sync = createSync({ adapter: crm.adapter, ledger: openLedger('memory:') });
    try {
      const prepared = sync.prepare(line);
      expect(prepared.ok).toBe(false);
      if (!prepared.ok) expect(prepared.error.issues).toEqual([{ path: 'source', message: SOURCE.slice('source: '.length) }]);
      const outcome = await sync.apply({ ...line, source: 7 } as never);
      expect(outcome.status).toBe('rejected');
      expect(outcome.error?.message).toBe('[crm-upsert] source: must be a string naming the system the event came from, e.g. "zendesk"; got the number 7');
      expect(crm.calls).toEqual({ upsert: 0, create: 0, find: 0, read: 0 });
    } finally {
      await sync.close();
    }
  });
});
