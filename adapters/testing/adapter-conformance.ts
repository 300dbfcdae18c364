/**
 * The adapter conformance suite: the engine driving a CRM adapter against its fake, with the
 * faults every CRM has (lost responses, resets, 429, 5xx, a missing parent). Every adapter in
 * this package passes it; a third-party adapter proves itself with one file:
 *
 *   import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 *   import { adapterConformance } from 'crm-upsert-sync/testing';
 *   adapterConformance('acme', async () => ({ adapter, ...harness }), { describe, it, expect, beforeEach, afterEach });
 *
 * The test functions are passed in (vitest's, or any with the same shape), so nothing here
 * depends on a test runner. See docs/testing.md.
 */
import type { CrmAdapter, Fields } from '../../src/adapter.js';
import { createSync, type Sync } from '../../src/engine/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';
import type { FaultKind } from './fake-http.js';

/** The faults every CRM has, which every harness can inject. */
export type ConformanceFault = Extract<FaultKind, 'lost_response' | 'reset' | 'server_error' | 'rate_limit'>;

const FAULTS: readonly ConformanceFault[] = ['lost_response', 'reset', 'server_error', 'rate_limit'];

/** An adapter wired to its fake CRM, with the views of the fake the suite asserts on. */
export interface AdapterHarness {
  adapter: CrmAdapter;
  /** Logical record and activity objects configured on the adapter; the activity attaches to the record. */
  recordObject: string;
  activityObject: string;
  /** Allowlisted fields of record `n`; a different `variant` must give different values. */
  recordFields(n: number, variant?: string): Fields;
  /** Allowlisted fields of an activity carrying `text` (model output). */
  activityFields(n: number, text: string): Fields;
  /** External ids of the record object's records in the CRM (duplicates show as repeats). */
  recordExternalIds(): string[];
  /** Action keys held by the activity object's records in the CRM. */
  activityKeys(): string[];
  /** HTTP requests the fake has received. */
  requests(): number;
  /** Inject `kind` into the next write to the record (`record`) or activity (`activity`) endpoint. */
  failNextWrite(kind: ConformanceFault, target: 'record' | 'activity'): void;
  close(): Promise<void>;
}

/** The assertions the suite makes (vitest's and Jest's `expect` have them). */
export interface ConformanceAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toContain(expected: unknown): void;
  toHaveLength(length: number): void;
  toMatchObject(expected: object): void;
}

/** The test runner's functions, passed in: `{ describe, it, expect, beforeEach, afterEach }` from vitest. */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>): void;
  expect(actual: unknown): ConformanceAssertion;
  beforeEach(hook: () => Promise<void>): void;
  afterEach(hook: () => Promise<void>): void;
}

/** What each sub-suite gets: the current harness and engine (fresh per test), and the test API. */
interface Suite {
  t: ConformanceTestApi;
  h(): AdapterHarness;
  sync(): Sync;
}

const upsert = (h: AdapterHarness, n: number, variant?: string, eventId = `e-${n}${variant ?? ''}`) => ({
  source: 'conformance', eventId, op: 'upsert', object: h.recordObject, externalId: `ext-${n}`, fields: h.recordFields(n, variant),
});
const activity = (h: AdapterHarness, n: number, text: string, eventId = `a-${n}`) => ({
  source: 'conformance', eventId, op: 'create', object: h.activityObject, target: { object: h.recordObject, externalId: `ext-${n}` }, fields: h.activityFields(n, text),
});

/** Batches: cut at the adapter's maximum, replayed with zero requests, no duplicate. */
function batching({ t, h, sync }: Suite): void {
  t.it('writes one more record than the maximum batch in two calls and replays them with none', async () => {
    const n = h().adapter.capabilities.maxBatch + 1;
    const actions = Array.from({ length: n }, (_, i) => upsert(h(), i));
    const first = await sync().applyMany(actions);
    t.expect(first.every((o) => o.status === 'created')).toBe(true);
    t.expect(h().requests()).toBe(2);
    const again = await sync().applyMany(actions);
    t.expect(again.every((o) => o.status === 'replayed')).toBe(true);
    t.expect(h().requests()).toBe(2);
    t.expect(new Set(h().recordExternalIds()).size).toBe(n);
    t.expect(h().recordExternalIds()).toHaveLength(n);
  });
}

/** Faults on a write: the record or activity exists exactly once afterwards. */
function faults({ t, h, sync }: Suite): void {
  for (const kind of FAULTS) {
    t.it(`writes a record once through a ${kind}`, async () => {
      h().failNextWrite(kind, 'record');
      const outcome = await sync().apply(upsert(h(), 1));
      t.expect(['created', 'updated']).toContain(outcome.status);
      t.expect(h().recordExternalIds()).toEqual(['ext-1']);
    });
  }
  for (const kind of FAULTS) {
    t.it(`creates an activity once through a ${kind}`, async () => {
      await sync().apply(upsert(h(), 1));
      h().failNextWrite(kind, 'activity');
      const outcome = await sync().apply(activity(h(), 1, 'summary'));
      t.expect(outcome.status).toBe('created');
      t.expect(h().activityKeys()).toEqual([outcome.key]);
    });
  }
}

/** Activities: a replay with new model text writes nothing; a missing parent fails by name. */
function activities({ t, h, sync }: Suite): void {
  t.it('replays an activity delivered again with different model text', async () => {
    await sync().apply(upsert(h(), 1));
    const first = await sync().apply(activity(h(), 1, 'The customer wants a refund.'));
    const requests = h().requests();
    const replay = await sync().apply(activity(h(), 1, 'Customer asked for their money back.'));
    t.expect(replay).toMatchObject({ status: 'replayed', recordId: first.recordId });
    t.expect(h().requests()).toBe(requests);
    t.expect(h().activityKeys()).toHaveLength(1);
  });

  t.it('fails an activity whose parent is missing with a reason naming the parent', async () => {
    const outcome = await sync().apply(activity(h(), 404, 'orphan'));
    t.expect(outcome.status).toBe('failed');
    t.expect(outcome.error!.message).toContain('ext-404');
    t.expect(h().activityKeys()).toHaveLength(0);
  });
}

/** Changes: new fields update, the same fields under a new key cost nothing. */
function changes({ t, h, sync }: Suite): void {
  t.it('updates a record whose fields changed and skips one whose fields did not', async () => {
    await sync().apply(upsert(h(), 1));
    const changed = await sync().apply(upsert(h(), 1, 'b'));
    const requests = h().requests();
    const same = await sync().apply(upsert(h(), 1, 'b', 'e-1b-again'));
    t.expect(changed.status).toBe('updated');
    t.expect(same.status).toBe('unchanged');
    t.expect(h().requests()).toBe(requests);
  });
}

/**
 * Run the adapter conformance suite on the adapter `open` wires up (called once per test; its
 * `close` runs after each). Sub-suites: batching, faults, activities, changes.
 */
export function adapterConformance(name: string, open: () => Promise<AdapterHarness>, t: ConformanceTestApi): void {
  t.describe(`${name} adapter conformance`, () => {
    let harness: AdapterHarness | undefined;
    let engine: Sync | undefined;
    t.beforeEach(async () => {
      harness = await open();
      engine = createSync({ adapter: harness.adapter, ledger: memoryLedger(), retry: { minTimeoutMs: 5, maxTimeoutMs: 20 } });
    });
    t.afterEach(async () => {
      await engine?.close();
      await harness?.close();
      engine = undefined;
      harness = undefined;
    });
    const suite: Suite = { t, h: () => harness!, sync: () => engine! };
    t.describe('batching', () => batching(suite));
    t.describe('faults', () => faults(suite));
    t.describe('activities', () => activities(suite));
    t.describe('changes', () => changes(suite));
  });
}
