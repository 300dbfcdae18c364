/**
 * createSync's OpenTelemetry spans and metrics, through the SDK's in-memory exporter and a
 * manually collected metric reader, against the fake HubSpot (real client, loopback): a run with
 * a 429 and its Retry-After wait, rate-budget waits, a failure and a rejection, then a replay run.
 */
import { metrics, trace } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, MetricReader, PeriodicExportingMetricReader, type DataPoint, type Histogram, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { createSync, localRateBudget, memoryLedger, type LedgerBackend, type Outcome, type RateBudget } from '../../src/index.js';
import { MetricName, SpanName } from '../../src/telemetry/index.js';
import { objects, TOKEN } from '../e2e/hubspot-helpers.js';

class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

interface Otel {
  exporter: InMemorySpanExporter;
  reader: CollectingReader;
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
}

function otel(): Otel {
  const exporter = new InMemorySpanExporter();
  const reader = new CollectingReader();
  return {
    exporter,
    reader,
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    meterProvider: new MeterProvider({ readers: [reader] }),
  };
}

type Point = DataPoint<number | Histogram>;
async function points(reader: MetricReader, name: string): Promise<Point[]> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as Point[]);
}
const sumBy = (ps: Point[], attr: string) => Object.fromEntries(ps.map((p) => [String(p.attributes[attr]), p.value as number]));

// Distinctive values: none of them may appear in any span, event or metric attribute.
const PRIVATE = ['ext-7f3a', 'private.person', 'Zelda', 'evt-9b2c', 'Confidential call summary', 'NoSuchParent-51'];
const contact = (n: number) => ({ source: 'crm-test', eventId: `evt-9b2c-${n}`, op: 'upsert' as const, object: 'contact', externalId: `ext-7f3a-${n}`, fields: { email: `private.person${n}@example.com`, firstname: `Zelda${n}` } });
const note = (eventId: string, parent: string) => ({
  source: 'crm-test', eventId, op: 'create', object: 'note', target: { object: 'contact', externalId: parent },
  fields: { hs_note_body: 'Confidential call summary', hs_timestamp: '2026-11-29T10:00:00Z' },
});
const actions = [
  contact(1), contact(2), contact(3),
  note('evt-9b2c-n1', 'ext-7f3a-1'),
  note('evt-9b2c-n2', 'NoSuchParent-51'),
  { ...contact(4), fields: { email: 'private.person4@example.com', not_allowed: 'Zelda4' } },
];
const statuses = (outcomes: Outcome[]) => {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
};

/** The ledger's calls by method, counted independently of the library (the metric must agree). */
function countingLedger(inner: LedgerBackend): { ledger: LedgerBackend; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const ledger = new Proxy(inner, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || typeof prop !== 'string' || prop === 'close') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        calls[prop] = (calls[prop] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ledger, calls };
}

/** A budget of 4 requests per virtual minute: the 5th request waits (on a virtual clock, at once). */
function virtualBudget(): RateBudget {
  let t = 0;
  return localRateBudget({ points: 4, durationMs: 60_000, marginMs: 0, label: 'test budget', now: () => t, sleep: async (ms) => void (t += ms) });
}

describe('telemetry', () => {
  let fake: FakeHubSpot;
  let close: () => Promise<void>;
  let basePath: string;
  beforeEach(async () => {
    fake = fakeHubSpot({ token: TOKEN, faults: { retryAfterSeconds: 2 } });
    ({ url: basePath, close } = await fake.open('loopback'));
  });
  afterEach(() => close());

  it('gives each step of applyEach one span, whose actions are the outcomes it settled, and counts every input once', async () => {
    const o = otel();
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects });
    const sync = createSync({ adapter, ledger: memoryLedger(), telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } });
    const walk = async (inputs: unknown[]) => {
      let n = 0;
      for await (const settled of sync.applyEach(inputs, { batchSize: 2 })) n += settled.length;
      return n;
    };
    const five = [contact(1), contact(2), contact(3), contact(4), contact(5)];
    expect(await walk(five)).toBe(5);
    const firstRun = o.exporter.getFinishedSpans().filter((s) => s.name === SpanName.applyMany).map((s) => s.attributes);
    // The first lookup reads and finds nothing; the later ones are skipped without a span; three calls write.
    expect(firstRun.map((a) => [a['crm_upsert.actions'], a['crm_upsert.outcome.created'] ?? 0])).toEqual([[0, 0], [2, 2], [2, 2], [1, 1]]);
    o.exporter.reset();

    expect(await walk([...five, { ...contact(6), fields: { not_allowed: 'x' } }])).toBe(6);
    const replay = o.exporter.getFinishedSpans().filter((s) => s.name === SpanName.applyMany).map((s) => s.attributes);
    // Only lookups: each answers its inputs from the ledger (the last one also rejects its bad line).
    expect(replay.map((a) => [a['crm_upsert.actions'], a['crm_upsert.outcome.replayed'] ?? 0, a['crm_upsert.outcome.rejected'] ?? 0])).toEqual([[2, 2, 0], [2, 2, 0], [2, 1, 1]]);
    expect(sumBy(await points(o.reader, MetricName.outcomes), 'crm_upsert.status')).toEqual({ created: 5, replayed: 5, rejected: 1 });
    await sync.close();
  });

  it('gives each read request a batch span (op read, found and not found counted) and counts its calls, with no ledger round trip', async () => {
    const o = otel();
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects });
    const sync = createSync({ adapter, ledger: memoryLedger(), telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } });
    await sync.applyMany([contact(1), contact(2)]);
    o.exporter.reset();
    const roundTrips = sumBy(await points(o.reader, MetricName.ledgerRoundTrips), 'crm_upsert.ledger.method');
    const calls = (await points(o.reader, MetricName.apiCalls)).reduce((n, p) => n + (p.value as number), 0);
    const answers = await sync.read('contact', ['ext-7f3a-1', 'ext-7f3a-2', 'ext-7f3a-404']);
    expect(answers.map((a) => a.found)).toEqual([true, true, false]);
    const spans = o.exporter.getFinishedSpans().filter((s) => s.name === SpanName.batch);
    expect(spans.map((s) => s.attributes)).toEqual([expect.objectContaining({
      'crm_upsert.op': 'read', 'crm_upsert.object': 'contact', 'crm_upsert.batch.size': 3, 'crm_upsert.result.found': 2, 'crm_upsert.result.not_found': 1,
    })]);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('ext-7f3a');
    expect((await points(o.reader, MetricName.apiCalls)).reduce((n, p) => n + (p.value as number), 0)).toBe(calls + 1);
    expect(sumBy(await points(o.reader, MetricName.ledgerRoundTrips), 'crm_upsert.ledger.method')).toEqual(roundTrips);
    await sync.close();
  });

  it('emits spans for applyMany, handle and each batch, and counts outcomes, calls, round trips and waits', async () => {
    const o = otel();
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects, rateBudget: virtualBudget() });
    const { ledger, calls } = countingLedger(memoryLedger());
    const slept: number[] = [];
    const sync = createSync({
      adapter, ledger, verifyCreates: 'after-failure', retry: { minTimeoutMs: 1, maxTimeoutMs: 5 },
      sleep: async (ms) => void slept.push(ms),
      telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider },
    });
    fake.failNext('rate_limit', { endpoint: 'batch/upsert' });

    const first = await sync.applyMany(actions);
    expect(statuses(first)).toEqual({ created: 4, failed: 1, rejected: 1 });
    const second = await sync.applyMany(actions);
    expect(statuses(second)).toEqual({ replayed: 4, failed: 1, rejected: 1 });
    const handled = await sync.handle({ source: 'crm-test', eventId: 'evt-9b2c-h1' }, () => [contact(5)]);
    expect(handled.status).toBe('completed');
    await sync.close();

    expect(slept).toEqual([2_000]);
    expect(fake.records('contacts')).toHaveLength(4);

    const spans = o.exporter.getFinishedSpans();
    const named = (name: string) => spans.filter((s) => s.name === name);
    const applies = named(SpanName.applyMany);
    expect(applies).toHaveLength(3);
    expect(applies[0]!.attributes).toMatchObject({
      'crm_upsert.crm': 'hubspot', 'crm_upsert.ledger': 'memory', 'crm_upsert.actions': 6,
      'crm_upsert.outcome.created': 4, 'crm_upsert.outcome.failed': 1, 'crm_upsert.outcome.rejected': 1,
    });
    expect(applies[1]!.attributes).toMatchObject({ 'crm_upsert.outcome.replayed': 4, 'crm_upsert.outcome.failed': 1, 'crm_upsert.outcome.rejected': 1 });
    expect(applies[0]!.events.map((e) => e.attributes)).toEqual([{ 'crm_upsert.wait.kind': 'retry_after', 'crm_upsert.wait.reason': 'Retry-After from hubspot', 'crm_upsert.wait.ms': 2_000 }]);

    const [handleSpan] = named(SpanName.handle);
    expect(handleSpan!.attributes).toMatchObject({ 'crm_upsert.source': 'crm-test', 'crm_upsert.handle.status': 'completed', 'crm_upsert.outcome.created': 1 });
    expect(applies[2]!.parentSpanContext?.spanId).toBe(handleSpan!.spanContext().spanId);

    const batches = named(SpanName.batch);
    const firstRun = batches.filter((b) => b.parentSpanContext?.spanId === applies[0]!.spanContext().spanId);
    const upserts = firstRun.filter((b) => b.attributes['crm_upsert.op'] === 'upsert');
    expect(upserts.map((b) => [b.status.code, b.attributes['http.response.status_code'], b.attributes['error.type']])).toEqual([[2, 429, 'rate_limited'], [0, undefined, undefined]]);
    expect(upserts[1]!.attributes).toMatchObject({ 'crm_upsert.object': 'contact', 'crm_upsert.batch.size': 3, 'crm_upsert.result.created': 3 });
    const creates = firstRun.filter((b) => b.attributes['crm_upsert.op'] === 'create');
    expect(creates.map((b) => b.attributes)).toEqual([expect.objectContaining({ 'crm_upsert.object': 'note', 'crm_upsert.batch.size': 2, 'crm_upsert.result.created': 1, 'crm_upsert.result.failed': 1 })]);
    // The budget allows 4 requests, the 5th waited: that wait is an event on the batch span that made it.
    const budgetWaits = batches.flatMap((b) => b.events).filter((e) => e.attributes?.['crm_upsert.wait.kind'] === 'budget');
    expect(budgetWaits.length).toBeGreaterThan(0);
    expect(budgetWaits[0]!.attributes).toMatchObject({ 'crm_upsert.wait.reason': 'test budget' });

    const outcomes = await points(o.reader, MetricName.outcomes);
    expect(sumBy(outcomes, 'crm_upsert.status')).toEqual({ created: 5, replayed: 4, failed: 2, rejected: 2 });
    const apiCalls = await points(o.reader, MetricName.apiCalls);
    expect(apiCalls.map((p) => p.value)).toEqual([fake.count()]);
    expect(adapter.apiCalls()).toBe(fake.count());
    const trips = sumBy(await points(o.reader, MetricName.ledgerRoundTrips), 'crm_upsert.ledger.method');
    expect(trips).toEqual(calls);
    expect(trips.claim).toBeGreaterThanOrEqual(3);
    const waits = await points(o.reader, MetricName.waits);
    const byKind = Object.fromEntries(waits.map((p) => [p.attributes['crm_upsert.wait.kind'], p.value as Histogram]));
    expect(byKind.retry_after).toMatchObject({ count: 1, sum: 2 });
    expect(byKind.budget!.count).toBe(budgetWaits.length);
  });

  it('counts records deleted in the CRM and created again: created outcomes marked recreated, and a span count', async () => {
    const o = otel();
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects, rateBudget: virtualBudget() });
    const sync = createSync({ adapter, ledger: memoryLedger(), sleep: async () => undefined, telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } });
    const written = await sync.applyMany([contact(11), contact(12)]);
    expect(fake.delete('contacts', written[0]!.recordId!)).toBe(true);
    const again = (n: number) => ({ ...contact(n), eventId: `evt-9b2c-${n}-again`, fields: { ...contact(n).fields, firstname: 'Zelda again' } });
    const outcomes = await sync.applyMany([again(11), again(12), contact(13)]);
    expect(outcomes.map((x) => [x.status, x.recreated?.previousId])).toEqual([['created', written[0]!.recordId], ['updated', undefined], ['created', undefined]]);
    await sync.close();

    const applies = o.exporter.getFinishedSpans().filter((s) => s.name === SpanName.applyMany);
    expect(applies.map((s) => s.attributes['crm_upsert.recreated'])).toEqual([undefined, 1]);
    expect(applies[1]!.attributes).toMatchObject({ 'crm_upsert.outcome.created': 2, 'crm_upsert.outcome.updated': 1 });
    const counted = (await points(o.reader, MetricName.outcomes)).map((p) => [p.attributes['crm_upsert.status'], p.attributes['crm_upsert.recreated'], p.value]);
    expect(counted).toEqual(expect.arrayContaining([['created', undefined, 3], ['created', true, 1], ['updated', undefined, 1]]));
    expect(counted).toHaveLength(3);
  });

  it('puts no field value, email, external id, event id or key in any span, event or metric attribute', async () => {
    const o = otel();
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects, rateBudget: virtualBudget() });
    const sync = createSync({ adapter, ledger: memoryLedger(), sleep: async () => undefined, telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } });
    fake.failNext('rate_limit', { endpoint: 'batch/upsert' });
    const outcomes = await sync.applyMany(actions);
    await sync.handle({ source: 'crm-test', eventId: 'evt-9b2c-h2' }, () => [contact(6)]);
    await sync.close();
    const spans: ReadableSpan[] = o.exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(4);
    const { resourceMetrics } = await o.reader.collect();
    const seen = JSON.stringify([
      spans.map((s) => [s.name, s.attributes, s.events, s.status]),
      resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => [m.descriptor.name, m.dataPoints.map((p) => p.attributes)])),
    ]);
    for (const secret of [...PRIVATE, ...outcomes.map((x) => x.key).filter(Boolean), TOKEN]) expect(seen).not.toContain(secret);
  });

  describe('global providers', () => {
    afterEach(() => {
      trace.disable();
      metrics.disable();
    });

    it('uses the global providers an SDK registers, even after createSync, and flushes them on close', async () => {
      const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects, rateBudget: virtualBudget() });
      const sync = createSync({ adapter, ledger: memoryLedger() });
      await sync.apply(contact(7));
      // Exporters that would export only a minute from now: what arrives, close() flushed.
      const spans = new InMemorySpanExporter();
      const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 })] });
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans, { scheduledDelayMillis: 60_000 })] }));
      metrics.setGlobalMeterProvider(meterProvider);
      await sync.apply(contact(8));
      expect(spans.getFinishedSpans()).toEqual([]);
      await sync.close();
      expect(spans.getFinishedSpans().map((s) => s.name).sort()).toEqual([SpanName.applyMany, SpanName.batch]);
      const exported = metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((m) => m.metrics));
      const outcomes = exported.filter((m) => m.descriptor.name === MetricName.outcomes).flatMap((m) => m.dataPoints as Point[]);
      expect(sumBy(outcomes, 'crm_upsert.status')).toEqual({ created: 1 });
      expect(exported.filter((m) => m.descriptor.name === MetricName.apiCalls).flatMap((m) => m.dataPoints.map((p) => p.value))).toEqual([1]);
      await meterProvider.shutdown();
    });

    it('emits nothing with telemetry: false, and returns the adapter and ledger it was given', async () => {
      const o = otel();
      trace.setGlobalTracerProvider(o.tracerProvider);
      metrics.setGlobalMeterProvider(o.meterProvider);
      const adapter = hubspotAdapter({ accessToken: TOKEN, basePath, objects, rateBudget: virtualBudget() });
      const ledger = memoryLedger();
      const sync = createSync({ adapter, ledger, telemetry: false });
      expect(statuses([await sync.apply(contact(9))])).toEqual({ created: 1 });
      expect(sync.adapter).toBe(adapter);
      expect(sync.ledger).toBe(ledger);
      await sync.close();
      expect(o.exporter.getFinishedSpans()).toEqual([]);
      expect(await points(o.reader, MetricName.outcomes)).toEqual([]);
    });
  });
});
