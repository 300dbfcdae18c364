/**
 * The telemetry of one Sync: which instruments are active (resolved on every call, so an SDK
 * registered after createSync is still used), the decorated adapter and ledger the engine works
 * through, and the spans around the entry points. With `telemetry: false` nothing is wrapped.
 */
import type { CrmAdapter } from '../adapter.js';
import { ConfigError } from '../errors.js';
import type { LedgerBackend } from '../ledger/types.js';
import type { Outcome } from '../outcome.js';
import { instrumentAdapter, instrumentLedger } from './decorators.js';
import { Attr, buildInstruments, countsBy, errorType, OUTCOME_PREFIX, SpanKind, SpanName, SpanStatus, WAIT_EVENT, type Instruments } from './instruments.js';
import { globalProvidersRegistered, loadOtelApi, OTEL_API, type OtelApi } from './otel.js';
import { spanScope } from './scope.js';
import type { Attributes, MeterProviderLike, TelemetryOption, TracerProviderLike } from './types.js';
import { observeWaits, type WaitListener } from './waits.js';

type Entry<A extends unknown[], R> = (...args: A) => Promise<R>;

export interface SyncTelemetry {
  /** The adapter the engine writes through. */
  readonly adapter: CrmAdapter;
  /** The ledger the engine claims and settles through. */
  readonly ledger: LedgerBackend;
  applyMany<A extends [readonly unknown[], ...unknown[]]>(fn: Entry<A, Outcome[]>): Entry<A, Outcome[]>;
  /** One step of `applyEach`, an `apply_many` span whose `actions` are the outcomes it settled. */
  applyStep(fn: Entry<[], Outcome[]>): Entry<[], Outcome[]>;
  retryStored<T>(fn: Entry<[readonly T[]], Outcome[]>): Entry<[readonly T[]], Outcome[]>;
  handle<E extends { source?: unknown }, H, R extends { status: string; outcomes: readonly Outcome[] }>(fn: Entry<[E, H], R>): Entry<[E, H], R>;
  /** Export what is buffered (forceFlush of the providers in use), for at most `timeoutMs`. */
  flush(timeoutMs?: number): Promise<void>;
}

interface Resolved {
  tracerProvider: TracerProviderLike;
  meterProvider: MeterProviderLike;
  instruments: Instruments;
}

function resolver(option: TelemetryOption | undefined): { current: () => Instruments | null; last: () => Resolved | undefined } {
  if (option === false) return { current: () => null, last: () => undefined };
  const given = option ?? {};
  const passed = Boolean(given.tracerProvider ?? given.meterProvider);
  let api: OtelApi | null = passed ? loadOtelApi() : null;
  if (passed && !api) throw new ConfigError(`telemetry providers need ${OTEL_API.name} (${OTEL_API.range}): npm install ${OTEL_API.name}`);
  let resolved: Resolved | undefined;
  const current = () => {
    if (!passed && !globalProvidersRegistered()) return null;
    api ??= loadOtelApi();
    if (!api) return null;
    const tracerProvider = given.tracerProvider ?? api.trace.getTracerProvider();
    const meterProvider = given.meterProvider ?? api.metrics.getMeterProvider();
    // The global meter provider has no proxy: a provider registered later needs new instruments.
    if (resolved?.tracerProvider !== tracerProvider || resolved.meterProvider !== meterProvider) {
      resolved = { tracerProvider, meterProvider, instruments: buildInstruments(api, tracerProvider, meterProvider) };
    }
    return resolved.instruments;
  };
  return { current, last: () => resolved };
}

/** Counts by status, and how many created records were re-created (when any). */
const outcomeCounts = (outcomes: readonly Outcome[]): Record<string, number> => {
  const recreated = outcomes.filter((o) => o.recreated).length;
  return { ...countsBy(OUTCOME_PREFIX, outcomes.map((o) => o.status)), ...(recreated > 0 ? { [Attr.recreated]: recreated } : {}) };
};

async function flushProviders(r: Resolved | undefined, timeoutMs: number): Promise<void> {
  if (!r) return;
  const flushes = [r.tracerProvider, r.meterProvider].map((p) => {
    const target = (p as { getDelegate?: () => unknown }).getDelegate?.() ?? p;
    const flush = (target as { forceFlush?: () => Promise<unknown> }).forceFlush;
    return typeof flush === 'function' ? Promise.resolve(flush.call(target)).catch(() => undefined) : undefined;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(flushes), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

export function syncTelemetry(options: { telemetry?: TelemetryOption; adapter: CrmAdapter; ledger: LedgerBackend }): SyncTelemetry {
  const { adapter, ledger } = options;
  if (options.telemetry === false) {
    return { adapter, ledger, applyMany: (fn) => fn, applyStep: (fn) => fn, retryStored: (fn) => fn, handle: (fn) => fn, flush: async () => undefined };
  }
  const { current, last } = resolver(options.telemetry);
  const spans = spanScope();
  const base = { [Attr.crm]: adapter.name, [Attr.ledger]: ledger.name };
  const onWait: WaitListener = (wait) => {
    const inst = current();
    if (!inst) return;
    inst.waits.record(wait.ms / 1000, { [Attr.crm]: adapter.name, [Attr.waitKind]: wait.kind, [Attr.waitReason]: wait.reason });
    spans.current()?.addEvent(WAIT_EVENT, { [Attr.waitKind]: wait.kind, [Attr.waitReason]: wait.reason, [Attr.waitMs]: wait.ms });
  };
  const entry = <A extends unknown[], R>(name: string, fn: Entry<A, R>, start: (...args: A) => Attributes, end: (result: R, inst: Instruments) => Attributes): Entry<A, R> =>
    async (...args) => {
      const inst = current();
      if (!inst) return fn(...args);
      const { span, run } = spans.open(inst, name, SpanKind.internal, { ...base, ...start(...args) });
      try {
        const result = await observeWaits(onWait, () => run(() => fn(...args)));
        span.setAttributes(end(result, inst));
        return result;
      } catch (err) {
        span.setAttribute(Attr.errorType, errorType(err));
        span.setStatus({ code: SpanStatus.error, message: errorType(err) });
        throw err;
      } finally {
        span.end();
      }
    };
  const counted = (outcomes: readonly Outcome[], inst: Instruments) => {
    const counts = outcomeCounts(outcomes);
    const recreated = counts[Attr.recreated] ?? 0;
    for (const [attr, n] of Object.entries(counts)) {
      if (!attr.startsWith(OUTCOME_PREFIX)) continue;
      const status = attr.slice(OUTCOME_PREFIX.length);
      const plain = status === 'created' ? n - recreated : n;
      if (plain > 0) inst.outcomes.add(plain, { [Attr.crm]: adapter.name, [Attr.status]: status });
    }
    if (recreated > 0) inst.outcomes.add(recreated, { [Attr.crm]: adapter.name, [Attr.status]: 'created', [Attr.recreated]: true });
    return counts;
  };
  return {
    adapter: instrumentAdapter(adapter, current, spans),
    ledger: instrumentLedger(ledger, current),
    applyMany: (fn) => entry(SpanName.applyMany, fn, (...args) => ({ [Attr.actions]: args[0].length }), counted),
    // A step's inputs are known only once it ran: its lookup answers some, its call sends the rest.
    applyStep: (fn) => entry(SpanName.applyMany, fn, () => ({}), (outcomes, inst) => ({ [Attr.actions]: outcomes.length, ...counted(outcomes, inst) })),
    retryStored: (fn) => entry(SpanName.retryStored, fn, (entries) => ({ [Attr.actions]: entries.length }), counted),
    handle: (fn) => entry(SpanName.handle, fn, (event): Attributes => (typeof event?.source === 'string' ? { [Attr.source]: event.source.slice(0, 64) } : {}), (r) => ({ [Attr.handleStatus]: r.status, ...outcomeCounts(r.outcomes) })),
    flush: (timeoutMs = 3_000) => flushProviders(last(), timeoutMs),
  };
}
