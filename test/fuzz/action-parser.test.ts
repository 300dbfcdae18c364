/**
 * Fuzzing the action boundary: 10,000 generated bad inputs (wrong types, missing and extra keys,
 * huge strings, control characters, unicode, prototype-pollution keys, nested junk) through
 * `applyMany` and `prepare`. Every one must come back `rejected` with a path (or the root) and a
 * reason, with nothing claimed in the ledger and no request sent to the CRM. Then the CLI's
 * JSONL reader with random byte lines: it never throws and numbers every line.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { readLines, type RawLine } from '../../src/cli/jsonl.js';
import { ReportBuilder } from '../../src/cli/report.js';
import { runActions } from '../../src/cli/sync.js';
import type { CrmAdapter, WriteResult } from '../../src/adapter.js';
import { CrmError } from '../../src/errors.js';
import { createSync, type Outcome, type Sync } from '../../src/engine/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';
import type { LedgerBackend } from '../../src/ledger/types.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';

const SEED = 20261129;
const TOKEN = 'pat-na1-fuzz-token';
const MAX_FIELD_LENGTH = 65_536;

const objects = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'firstname', 'lastname', 'lifecyclestage'] },
  note: { kind: 'activity', objectType: 'notes', keyProperty: 'crm_upsert_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
} as const;

/** Counts every ledger method call that would read or write an entry. */
function countingLedger(inner: LedgerBackend) {
  const calls: Record<string, number> = {};
  const proxy = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || prop === 'close' || prop === 'list' || prop === 'get') return value;
      return (...args: unknown[]) => {
        calls[String(prop)] = (calls[String(prop)] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ledger: proxy, calls };
}

// ---------------------------------------------------------------------------------------------
// Generators: every input is invalid by construction.

const DANGEROUS_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__', 'valueOf'];
const KNOWN_KEYS = ['source', 'eventId', 'occurredAt', 'op', 'object', 'externalId', 'target', 'intent', 'fields'];

/** Sets an own enumerable property even for `__proto__` (plain assignment would change the prototype). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const identifierLike = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
  fc.constantFrom('zendesk', 'gong', 'c-1', 'Ünïcødé-🧪', '客户-42', 'a\u200bb'),
).filter((s) => ![...s].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) && s.length <= 100);

const validUpsert = fc.record(
  {
    source: identifierLike,
    eventId: identifierLike,
    occurredAt: fc.constant('2026-11-29T10:00:00Z'),
    op: fc.constant('upsert'),
    object: fc.constant('contact'),
    externalId: identifierLike,
    intent: identifierLike,
    fields: fc.record({ email: fc.string({ maxLength: 30 }), firstname: fc.oneof(fc.string({ maxLength: 30 }), fc.constant(null)), lifecyclestage: fc.constantFrom('lead', 'customer') }, { requiredKeys: [] }),
  },
  { requiredKeys: ['source', 'op', 'object', 'externalId', 'fields'] },
);

const validCreate = fc.record(
  {
    source: identifierLike,
    eventId: identifierLike,
    op: fc.constant('create'),
    object: fc.constant('note'),
    target: fc.record({ object: fc.constant('contact'), externalId: identifierLike }),
    fields: fc.record({ hs_note_body: fc.string({ maxLength: 200 }), hs_timestamp: fc.integer() }, { requiredKeys: [] }),
  },
  { requiredKeys: ['source', 'op', 'object', 'target', 'fields'] },
);

const validAction = fc.oneof(validUpsert, validCreate) as fc.Arbitrary<Record<string, unknown>>;

const controlChar = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, 10n ** 30n),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 3 }),
  fc.constant(Symbol('junk')),
  fc.constant(() => 'a function'),
  fc.constant(new Date(0)),
  fc.constant(new Map([['a', 1]])),
);

/** A value for one of the known keys that the schema refuses. */
function wrongValueFor(key: string, action: Record<string, unknown>): fc.Arbitrary<unknown> {
  const tooLong = (max: number) => fc.string({ minLength: max + 1, maxLength: max + 40 }).map((s) => (s.length > max ? s : s.padEnd(max + 1, 'x')));
  const withControl = fc.tuple(fc.string({ maxLength: 5 }), controlChar, fc.string({ maxLength: 5 })).map(([a, c, b]) => `${a}${c}${b}`);
  const badString = (max: number) => fc.oneof(fc.constant(''), tooLong(max), withControl, junk);
  switch (key) {
    case 'source': return badString(200);
    case 'eventId': return badString(500);
    case 'externalId': return action.op === 'upsert' ? badString(255) : identifierLike;
    case 'object': return fc.oneof(badString(100), fc.constantFrom('company', 'deal', 'Contact', '__proto__', 'constructor', 'toString'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }).filter((s) => s !== 'contact' && s !== 'note'));
    case 'intent': return badString(100);
    case 'op': return fc.oneof(fc.constantFrom('delete', 'UPSERT', 'create ', '', 'update'), junk);
    case 'occurredAt': return fc.oneof(fc.constantFrom('yesterday', '2026-13-01T00:00:00Z', '2026-11-29', '2026-11-29T10:00:00', ''), junk);
    case 'target':
      return action.op === 'create'
        ? fc.oneof(junk, fc.constant({}), fc.record({ object: fc.constantFrom('note', 'company', '__proto__'), externalId: identifierLike }), fc.record({ object: fc.constant('contact'), externalId: badString(255) }))
        : fc.record({ object: fc.constant('contact'), externalId: identifierLike });
    case 'fields':
      return fc.oneof(
        junk.filter((v) => !(v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype)),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.object({ maxDepth: 2 }), fc.array(fc.integer(), { minLength: 0, maxLength: 3 })), { minKeys: 1, maxKeys: 3 }),
      );
    default: return junk;
  }
}

type Mutation = (action: Record<string, unknown>) => fc.Arbitrary<unknown>;

const mutations: Mutation[] = [
  // A required key missing.
  (a) => fc.constantFrom(...['source', 'op', 'object', 'fields', a.op === 'upsert' ? 'externalId' : 'target']).map((k) => {
    const copy = { ...a };
    delete copy[k];
    return copy;
  }),
  // A known key with a wrong type, an empty / huge / control-character string, or a wrong value.
  (a) => fc.constantFrom(...KNOWN_KEYS).chain((k) => wrongValueFor(k, a).map((v) => ({ ...a, [k]: v }))),
  // An extra key, including prototype-pollution names, with any value.
  (a) => fc.tuple(fc.oneof(fc.constantFrom(...DANGEROUS_KEYS), fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !KNOWN_KEYS.includes(k))), fc.anything({ maxDepth: 2 })).map(([k, v]) => {
    const copy = { ...a };
    setOwn(copy, k, v);
    return copy;
  }),
  // A field that is not on the allowlist (unicode, pollution names, CRM internals).
  (a) => fc.oneof(fc.constantFrom(...DANGEROUS_KEYS, 'hs_object_id', 'ai_external_id', 'crm_upsert_key', 'Email'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }))
    .filter((k) => !['email', 'firstname', 'lastname', 'lifecyclestage', 'hs_note_body', 'hs_timestamp'].includes(k))
    .map((k) => {
      const fields = { ...(a.fields as Record<string, unknown>) };
      setOwn(fields, k, 'x');
      return { ...a, fields };
    }),
  // A field value that is too long, non-finite or nested.
  (a) => fc.oneof(
    fc.constant('y'.repeat(MAX_FIELD_LENGTH + 1)),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
    fc.object({ maxDepth: 3 }),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.constant(undefined),
  ).map((v) => ({ ...a, fields: { ...(a.fields as Record<string, unknown>), [a.op === 'upsert' ? 'email' : 'hs_note_body']: v } })),
  // The op does not fit the object or the shape (upsert with a target, create with an externalId).
  (a) => fc.constant(a.op === 'upsert'
    ? { ...a, target: { object: 'contact', externalId: 'c-1' } }
    : { ...a, externalId: 'n-1' }),
  (a) => fc.constant({ ...a, object: a.op === 'upsert' ? 'note' : 'contact' }),
  // Deeply nested junk where a string or the fields record should be.
  (a) => fc.integer({ min: 50, max: 2_000 }).map((depth) => {
    let nested: unknown = 'bottom';
    for (let i = 0; i < depth; i++) nested = i % 2 === 0 ? [nested] : { k: nested };
    return { ...a, [a.op === 'upsert' ? 'externalId' : 'target']: nested };
  }),
  // JSON text with a real own `__proto__` / `constructor` key, as JSON.parse builds it from a model's output.
  (a) => fc.tuple(fc.constantFrom('{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}'), fc.constantFrom('top', 'fields', 'alone'))
    .map(([extra, where]) => {
      const copy = JSON.parse(JSON.stringify(a)) as Record<string, unknown>;
      if (where === 'alone') return JSON.parse(extra) as unknown;
      if (where === 'fields') return { ...copy, fields: Object.assign(JSON.parse(extra) as Record<string, unknown>, copy.fields) };
      return Object.assign(JSON.parse(extra) as Record<string, unknown>, copy);
    }),
];

const mutated: fc.Arbitrary<unknown> = validAction.chain((a) => fc.integer({ min: 0, max: mutations.length - 1 }).chain((m) => mutations[m]!(a)));

/** Anything that is not an object with a usable `op` is invalid: op is required and closed. */
const anythingBad: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ maxDepth: 3, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withObjectString: true, withBoxedValues: true }),
  fc.dictionary(fc.oneof(fc.constantFrom(...DANGEROUS_KEYS, ...KNOWN_KEYS), fc.string()), fc.anything({ maxDepth: 2 }), { maxKeys: 12 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
).filter((x) => {
  if (x === null || typeof x !== 'object') return true;
  const op = (x as { op?: unknown }).op;
  return op !== 'upsert' && op !== 'create';
});

function expectRejected(outcome: Outcome): void {
  expect(outcome.status).toBe('rejected');
  expect(outcome.attempts).toBe(0);
  expect(outcome.recordId).toBeUndefined();
  expect(outcome.error?.code).toBe('VALIDATION');
  const path = outcome.error?.path;
  expect(typeof path).toBe('string');
  // "(root): why" when the input itself is wrong, "fields.x: why" otherwise: always a place and a reason.
  const head = `[crm-upsert] ${path || '(root)'}: `;
  expect(outcome.error?.message.startsWith(head)).toBe(true);
  expect(outcome.error?.message.slice(head.length)).toMatch(/\S/);
}

describe('action parser fuzzing', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let sync: Sync;
  let ledgerCalls: Record<string, number>;
  let inner: LedgerBackend;
  let checked = 0;

  beforeAll(async () => {
    fake = fakeHubSpot({ token: TOKEN });
    server = await fake.listen();
    inner = memoryLedger();
    const counted = countingLedger(inner);
    ledgerCalls = counted.calls;
    sync = createSync({
      adapter: hubspotAdapter({ accessToken: TOKEN, basePath: server.basePath, objects: objects as never, rateBudget: unlimitedRateBudget }),
      ledger: counted.ledger,
      maxFieldLength: MAX_FIELD_LENGTH,
    });
  });

  afterAll(async () => {
    await sync?.close();
    await server?.close();
  });

  it.each([
    ['mutated valid actions', mutated, 6_000],
    ['arbitrary values and objects', anythingBad, 4_000],
  ] as const)('rejects every one of %s with a path and a reason, one at a time', async (_name, arb, runs) => {
    await fc.assert(
      fc.asyncProperty(arb, async (input) => {
        const prepared = sync.prepare(input);
        expect(prepared.ok).toBe(false);
        if (!prepared.ok) {
          expect(prepared.error.issues.length).toBeGreaterThan(0);
          for (const issue of prepared.error.issues) {
            expect(typeof issue.path).toBe('string');
            expect(issue.message.length).toBeGreaterThan(0);
          }
        }
        const [outcome] = await sync.applyMany([input]);
        expectRejected(outcome!);
        checked += 1;
      }),
      { numRuns: runs, seed: SEED },
    );
  });

  it('rejects a whole batch of bad inputs in input order, next to nothing else', async () => {
    const inputs = fc.sample(fc.oneof(mutated, anythingBad), { numRuns: 2_000, seed: SEED + 1 });
    const outcomes = await sync.applyMany(inputs);
    expect(outcomes).toHaveLength(inputs.length);
    outcomes.forEach(expectRejected);
  });

  // Found by this fuzzer: zod's record parser skips an own `__proto__` key, so such an action was
  // accepted with the field silently dropped; schemas/action.ts now looks at the raw keys.
  it('rejects a fields record with an own "__proto__" key (JSON.parse makes one)', async () => {
    const input = JSON.parse('{"source":"s","eventId":"e-proto","op":"upsert","object":"contact","externalId":"c-proto","fields":{"__proto__":{"polluted":true},"email":"a@b.c"}}') as unknown;
    expect(sync.prepare(input).ok).toBe(false);
  });

  it('claimed nothing, wrote nothing, called the CRM zero times and polluted no prototype', async () => {
    expect(checked).toBe(10_000);
    expect(ledgerCalls).toEqual({});
    expect(await inner.list()).toEqual([]);
    expect(sync.adapter.apiCalls()).toBe(0);
    expect(fake.count()).toBe(0);
    expect(fake.records('contacts')).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

// ---------------------------------------------------------------------------------------------
// The CLI's JSONL reader with random bytes.

async function* chunked(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Buffer> {
  let start = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((x, y) => x - y)) {
    yield Buffer.from(bytes.subarray(start, cut));
    start = cut;
  }
  yield Buffer.from(bytes.subarray(start));
}

/**
 * The reader's contract restated simply: split on \n, drop one trailing \r and a BOM on line 1,
 * number from 1, decode with a fatal TextDecoder (an invalid line keeps no text).
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function referenceLines(bytes: Uint8Array, max: number): RawLine[] {
  const buf = Buffer.from(bytes);
  const out: RawLine[] = [];
  let start = 0;
  let line = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(10, start);
    const end = nl === -1 ? buf.length : nl;
    line += 1;
    if (end - start > max) out.push({ line, tooLong: true, bytes: end - start, limit: max });
    else {
      let body = buf.subarray(start, end);
      if (line === 1 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) body = body.subarray(3);
      if (body.at(-1) === 13) body = body.subarray(0, -1);
      try {
        out.push({ line, text: strictUtf8.decode(body) });
      } catch {
        out.push({ line, invalidUtf8: true, byte: expect.any(Number) as number, fileByte: expect.any(Number) as number, reason: expect.stringMatching(/^invalid UTF-8 at byte \d+ /) as string });
      }
    }
    if (nl === -1) break;
    start = nl + 1;
  }
  return out;
}

/** The reported offset is where the first ill-formed sequence starts: the bytes before it decode. */
function checkOffsets(bytes: Uint8Array, got: RawLine[]): void {
  const buf = Buffer.from(bytes);
  let start = 0;
  for (const l of got) {
    const nl = buf.indexOf(10, start);
    const lineBytes = buf.subarray(start, nl === -1 ? buf.length : nl);
    if ('invalidUtf8' in l) {
      expect(l.fileByte).toBe(start + l.byte);
      expect(() => strictUtf8.decode(lineBytes.subarray(l.line === 1 && lineBytes[0] === 0xef && lineBytes[1] === 0xbb && lineBytes[2] === 0xbf ? 3 : 0, l.byte))).not.toThrow();
      const rest = lineBytes.subarray(l.byte);
      expect(new TextDecoder().decode(rest).startsWith('\ufffd')).toBe(true);
      expect([rest[0], rest[1], rest[2]]).not.toEqual([0xef, 0xbf, 0xbd]);
    }
    start = nl + 1;
  }
}

const byteLine = fc.oneof(
  fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b).toString('latin1').replace(/\n/g, '')),
  // Well-formed multi-byte UTF-8 (the file is built from latin1, one char per byte), a BOM, a BOM later on.
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((t) => Buffer.from(t.replace(/\n/g, ''), 'utf8').toString('latin1')),
  fc.constantFrom('\xef\xbb\xbf{}', '\xef\xbb\xbf', 'a\xef\xbb\xbf', '\xed\xa0\x80', '\xc0\xaf', '\xf4\x90\x80\x80', '\xe2\x82'),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/\n/g, '')),
  fc.constantFrom('{"source":"x","op":"upsert","object":"contact","externalId":"c-1","fields":{}}', '{', '[]', 'null', '{"__proto__":{"a":1}}', '\r', '', '\ufeff{}', '\u0000'),
  fc.json({ maxDepth: 2 }),
);

/** An in-process CRM that accepts every write: the reader test is about lines, not HTTP. */
function acceptingAdapter(): CrmAdapter {
  let calls = 0;
  const ok = (writes: { key: string }[]): WriteResult[] => writes.map((w) => ({ ok: true, recordId: `r-${w.key.slice(-8)}`, created: true }));
  return {
    name: 'accepting',
    capabilities: { maxBatch: 100, nativeActivityUpsert: true },
    objects: { contact: { kind: 'record', fields: ['email', 'firstname'] }, note: { kind: 'activity', fields: ['hs_note_body'], parents: ['contact'] } },
    upsertRecords: async (_o, writes) => ((calls += 1), ok(writes)),
    createActivities: async (_o, writes) => ((calls += 1), ok(writes)),
    findActivities: async () => new Map(),
    classifyError: (err) => (err instanceof CrmError ? err : new CrmError(String(err), { vendor: 'accepting', kind: 'permanent' })),
    apiCalls: () => calls,
  };
}

describe('JSONL reader fuzzing', () => {
  it('never throws, numbers every line from 1 and reports each bad line with its number', async () => {
    const sync = createSync({ adapter: acceptingAdapter(), ledger: memoryLedger() });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(byteLine, { maxLength: 30 }),
          fc.boolean(),
          fc.array(fc.nat({ max: 4_000 }), { maxLength: 8 }),
          fc.integer({ min: 8, max: 200 }),
          fc.integer({ min: 1, max: 7 }),
          async (lines, trailingNewline, cuts, maxLineBytes, batchSize) => {
            const bytes = Buffer.from(lines.join('\n') + (trailingNewline && lines.length > 0 ? '\n' : ''), 'latin1');
            const got: RawLine[] = [];
            for await (const l of readLines(chunked(bytes, cuts), { maxLineBytes })) got.push(l);
            const expected = referenceLines(bytes, maxLineBytes);
            expect(got).toEqual(expected);
            expect(got.map((l) => l.line)).toEqual(got.map((_, i) => i + 1));
            checkOffsets(bytes, got);

            // The sync command's loop over the same bytes: every bad line becomes a problem with its number.
            const report = new ReportBuilder();
            await runActions({ sync, lines: readLines(chunked(bytes, cuts), { maxLineBytes }), report, batchSize });
            const bad = expected.filter((l) => {
              if ('tooLong' in l || 'invalidUtf8' in l) return true;
              if (l.text.trim() === '') return false;
              try {
                return !sync.prepare(JSON.parse(l.text)).ok;
              } catch {
                return true;
              }
            }).map((l) => l.line);
            const problems = report.toJSON(0).problems;
            expect(problems.map((p) => p.line)).toEqual(bad);
            for (const p of problems) {
              expect(p.status).toBe('rejected');
              expect(p.reason).toMatch(/\S/);
            }
            expect(report.actions).toBe(expected.filter((l) => !('text' in l) || l.text.trim() !== '').length);
          },
        ),
        { numRuns: 2_000, seed: SEED },
      );
    } finally {
      await sync.close();
    }
  });
});
