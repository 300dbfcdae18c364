/**
 * One suite, every adapter: the engine driving each CRM adapter against its fake, with the
 * faults every CRM has (lost responses, resets, 429, 5xx, a missing parent). Each adapter's
 * test file only wires up a harness.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CrmAdapter, Fields } from '../../src/adapter.js';
import { createSync, type Sync } from '../../src/engine/index.js';
import { memoryLedger } from '../../src/ledger/memory.js';
import type { FaultKind } from '../../adapters/testing/fake-http.js';

/** The faults every CRM has, which every harness can inject. */
export type ConformanceFault = Extract<FaultKind, 'lost_response' | 'reset' | 'server_error' | 'rate_limit'>;

export interface AdapterHarness {
  adapter: CrmAdapter;
  /** Logical record and activity objects configured on the adapter. */
  recordObject: string;
  activityObject: string;
  recordFields(n: number, variant?: string): Fields;
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

export function describeAdapterConformance(name: string, open: () => Promise<AdapterHarness>): void {
  describe(`${name} adapter conformance`, () => {
    let h: AdapterHarness;
    let sync: Sync;
    const start = async () => {
      h = await open();
      sync = createSync({ adapter: h.adapter, ledger: memoryLedger(), retry: { minTimeoutMs: 5, maxTimeoutMs: 20 } });
    };
    afterEach(async () => {
      await sync?.close();
      await h?.close();
    });

    const upsert = (n: number, variant?: string, eventId = `e-${n}${variant ?? ''}`) => ({
      source: 'conformance', eventId, op: 'upsert', object: h.recordObject, externalId: `ext-${n}`, fields: h.recordFields(n, variant),
    });
    const activity = (n: number, text: string, eventId = `a-${n}`) => ({
      source: 'conformance', eventId, op: 'create', object: h.activityObject, target: { object: h.recordObject, externalId: `ext-${n}` }, fields: h.activityFields(n, text),
    });

    it('writes one more record than the maximum batch in two calls and replays them with none', async () => {
      await start();
      const n = h.adapter.capabilities.maxBatch + 1;
      const actions = Array.from({ length: n }, (_, i) => upsert(i));
      const first = await sync.applyMany(actions);
      expect(first.every((o) => o.status === 'created')).toBe(true);
      expect(h.requests()).toBe(2);
      const again = await sync.applyMany(actions);
      expect(again.every((o) => o.status === 'replayed')).toBe(true);
      expect(h.requests()).toBe(2);
      expect(new Set(h.recordExternalIds()).size).toBe(n);
      expect(h.recordExternalIds()).toHaveLength(n);
    });

    it.each(['lost_response', 'reset', 'server_error', 'rate_limit'] as const)('writes a record once through a %s', async (kind) => {
      await start();
      h.failNextWrite(kind, 'record');
      const outcome = await sync.apply(upsert(1));
      expect(['created', 'updated']).toContain(outcome.status);
      expect(h.recordExternalIds()).toEqual(['ext-1']);
    });

    it.each(['lost_response', 'reset', 'server_error', 'rate_limit'] as const)('creates an activity once through a %s', async (kind) => {
      await start();
      await sync.apply(upsert(1));
      h.failNextWrite(kind, 'activity');
      const outcome = await sync.apply(activity(1, 'summary'));
      expect(outcome.status).toBe('created');
      expect(h.activityKeys()).toEqual([outcome.key]);
    });

    it('replays an activity delivered again with different model text', async () => {
      await start();
      await sync.apply(upsert(1));
      const first = await sync.apply(activity(1, 'The customer wants a refund.'));
      const requests = h.requests();
      const replay = await sync.apply(activity(1, 'Customer asked for their money back.'));
      expect(replay).toMatchObject({ status: 'replayed', recordId: first.recordId });
      expect(h.requests()).toBe(requests);
      expect(h.activityKeys()).toHaveLength(1);
    });

    it('fails an activity whose parent is missing with a reason naming the parent', async () => {
      await start();
      const outcome = await sync.apply(activity(404, 'orphan'));
      expect(outcome.status).toBe('failed');
      expect(outcome.error!.message).toContain('ext-404');
      expect(h.activityKeys()).toHaveLength(0);
    });

    it('updates a record whose fields changed and skips one whose fields did not', async () => {
      await start();
      await sync.apply(upsert(1));
      const changed = await sync.apply(upsert(1, 'b'));
      const requests = h.requests();
      const same = await sync.apply(upsert(1, 'b', 'e-1b-again'));
      expect(changed.status).toBe('updated');
      expect(same.status).toBe('unchanged');
      expect(h.requests()).toBe(requests);
    });
  });
}
