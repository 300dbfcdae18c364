import { describe, expect, it } from 'vitest';
import { childKey, deriveKey, eventKey, fieldsHash, fingerprintOf, MAX_KEY_LENGTH, periodBucket } from '../../src/key.js';

const base = { source: 'zendesk', op: 'upsert' as const, object: 'contact', externalId: 'zd-1' };

describe('deriveKey', () => {
  it('derives the same key from the same event whatever the fields or the clock', () => {
    const a = deriveKey({ ...base, eventId: 'e1' }, { now: () => 1 });
    const b = deriveKey({ ...base, eventId: 'e1' }, { now: () => 9e12 });
    expect(a).toBe(b);
    expect(a).toMatch(/^v1:e:/);
  });

  it('gives one event fan-out distinct keys by op, object, record and intent', () => {
    const keys = new Set([
      deriveKey({ ...base, eventId: 'e1' }),
      deriveKey({ ...base, eventId: 'e1', externalId: 'zd-2' }),
      deriveKey({ source: 'zendesk', eventId: 'e1', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' } }),
      deriveKey({ source: 'zendesk', eventId: 'e1', op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, intent: 'follow-up' }),
      deriveKey({ ...base, eventId: 'e1', source: 'gong' }),
    ]);
    expect(keys.size).toBe(5);
  });

  it('buckets keyless creates by event time, not run time', () => {
    const note = { source: 'zendesk', op: 'create' as const, object: 'note', target: { object: 'contact', externalId: 'zd-1' } };
    const at = (iso: string, fields = {}) => deriveKey({ ...note, occurredAt: iso, fields }, { bucketMs: 600_000, now: () => Math.random() * 1e12 });
    expect(at('2026-11-29T10:01:00Z')).toBe(at('2026-11-29T10:09:59Z', { hs_note_body: 'other model text' }));
    expect(at('2026-11-29T10:01:00Z')).not.toBe(at('2026-11-29T10:10:00Z'));
    expect(at('2026-11-29T10:01:00Z')).toMatch(/^v1:f:/);
  });

  it('keys a keyless upsert by its exact event time and its values: a correction is a new key, a repeat the same', () => {
    const at = (iso: string, fields: Record<string, string>) => deriveKey({ ...base, occurredAt: iso, fields }, { bucketMs: 600_000, now: () => Math.random() * 1e12 });
    const first = at('2026-11-29T10:00:00Z', { lifecyclestage: 'lead', email: 'a@x.test' });
    expect(first).toMatch(/^v1:u:/);
    expect(at('2026-11-29T10:00:00Z', { email: 'a@x.test', lifecyclestage: 'lead' })).toBe(first);
    expect(at('2026-11-29T10:00:00Z', { lifecyclestage: 'customer', email: 'a@x.test' })).not.toBe(first);
    expect(at('2026-11-29T10:02:00Z', { lifecyclestage: 'lead', email: 'a@x.test' })).not.toBe(first);
    expect(deriveKey({ ...base, occurredAt: '2026-11-29T10:00:00Z' })).toBe(deriveKey({ ...base, occurredAt: '2026-11-29T10:00:00Z', fields: {} }));
  });

  it('hashes fields whatever their order, and tells values apart', () => {
    expect(fieldsHash({ a: 1, b: 'x' })).toBe(fieldsHash({ b: 'x', a: 1 }));
    expect(fieldsHash({ a: 1 })).not.toBe(fieldsHash({ a: '1' }));
    expect(fieldsHash({ a: null })).not.toBe(fieldsHash({}));
  });

  it('uses the clock only for keyless actions with no time at all', () => {
    expect(periodBucket(base, { bucketMs: 1000, now: () => 12_345 })).toBe(12_000);
  });

  it('makes printable ASCII keys of at most 100 characters, even from long Unicode ids', () => {
    const key = deriveKey({ ...base, eventId: 'é'.repeat(500), externalId: '客户/#?%'.repeat(40) });
    expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(key).toMatch(/^[\x21-\x7e]+$/);
    expect(childKey(key, 'x'.repeat(1000)).length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
  });

  it('gives stable child and event keys', () => {
    expect(childKey('v1:h:abc', 'summarize')).toBe(childKey('v1:h:abc', 'summarize'));
    expect(childKey('v1:h:abc', 'summarize')).not.toBe(childKey('v1:h:abc', 'notify'));
    expect(eventKey({ source: 'a', eventId: 'b' })).not.toBe(eventKey({ source: 'a:b', eventId: '' }));
  });

  it('fingerprints identity, never fields', () => {
    expect(fingerprintOf({ ...base, eventId: 'e' })).toBe(fingerprintOf({ ...base, eventId: 'other' }));
    expect(fingerprintOf(base)).not.toBe(fingerprintOf({ ...base, intent: 'x' }));
  });
});
