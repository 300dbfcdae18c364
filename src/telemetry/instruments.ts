/**
 * The names a dashboard relies on (docs/operations.md lists them) and the instruments built from
 * one pair of providers. Attributes carry counts and names of configured things only: never a
 * field value, an email, an external id, an event id or a key.
 */
import { CrmError } from '../errors.js';
import type { OtelApi } from './otel.js';
import type { CounterLike, HistogramLike, MeterProviderLike, TracerLike, TracerProviderLike } from './types.js';

export const SpanName = {
  applyMany: 'crm_upsert.apply_many',
  handle: 'crm_upsert.handle',
  retryStored: 'crm_upsert.retry_stored',
  /** One adapter call: a batch write (`op` upsert or create) or a lookup of activity keys (`find`). */
  batch: 'crm_upsert.batch',
} as const;

export const MetricName = {
  /**
   * Counter: action outcomes, by `crm_upsert.status`; `created` outcomes that re-created a record
   * deleted in the CRM also carry `crm_upsert.recreated: true`.
   */
  outcomes: 'crm_upsert.outcomes',
  /** Counter: HTTP requests sent to the CRM. */
  apiCalls: 'crm_upsert.api.calls',
  /** Counter: ledger backend calls (each one round trip), by `crm_upsert.ledger.method`. */
  ledgerRoundTrips: 'crm_upsert.ledger.round_trips',
  /** Histogram, seconds: rate-budget and Retry-After waits, by `crm_upsert.wait.kind`. */
  waits: 'crm_upsert.rate.wait',
} as const;

export const Attr = {
  crm: 'crm_upsert.crm',
  ledger: 'crm_upsert.ledger',
  object: 'crm_upsert.object',
  op: 'crm_upsert.op',
  batchSize: 'crm_upsert.batch.size',
  actions: 'crm_upsert.actions',
  source: 'crm_upsert.source',
  status: 'crm_upsert.status',
  /** Metric attribute (true) on re-created records' `created` outcomes; span attribute: how many were re-created. */
  recreated: 'crm_upsert.recreated',
  handleStatus: 'crm_upsert.handle.status',
  method: 'crm_upsert.ledger.method',
  waitKind: 'crm_upsert.wait.kind',
  waitReason: 'crm_upsert.wait.reason',
  waitMs: 'crm_upsert.wait.ms',
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
} as const;

/** Span attribute prefixes for counts: `crm_upsert.outcome.created`, `crm_upsert.result.failed`. */
export const OUTCOME_PREFIX = 'crm_upsert.outcome.';
export const RESULT_PREFIX = 'crm_upsert.result.';
/** The span event of a wait inside a span. */
export const WAIT_EVENT = 'crm_upsert.wait';

export const SpanKind = { internal: 0, client: 2 } as const;
export const SpanStatus = { error: 2 } as const;

const SCOPE = 'crm-upsert-sync';

export interface Instruments {
  readonly api: OtelApi;
  readonly tracer: TracerLike;
  readonly outcomes: CounterLike;
  readonly apiCalls: CounterLike;
  readonly roundTrips: CounterLike;
  readonly waits: HistogramLike;
}

export function buildInstruments(api: OtelApi, tracerProvider: TracerProviderLike, meterProvider: MeterProviderLike): Instruments {
  const meter = meterProvider.getMeter(SCOPE);
  return {
    api,
    tracer: tracerProvider.getTracer(SCOPE),
    outcomes: meter.createCounter(MetricName.outcomes, { description: 'Action outcomes by status', unit: '{action}' }),
    apiCalls: meter.createCounter(MetricName.apiCalls, { description: 'HTTP requests sent to the CRM', unit: '{request}' }),
    roundTrips: meter.createCounter(MetricName.ledgerRoundTrips, { description: 'Ledger backend round trips by method', unit: '{round_trip}' }),
    waits: meter.createHistogram(MetricName.waits, { description: 'Waits for the rate budget or a Retry-After', unit: 's' }),
  };
}

/** A low-cardinality name for what went wrong: a CRM error's kind, else the error's code or class name. */
export function errorType(err: unknown): string {
  if (err instanceof CrmError) return err.kind;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
  return err instanceof Error ? err.name : typeof err;
}

/** `{ prefix + status: n }` for the values in `statuses`. */
export function countsBy(prefix: string, statuses: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of statuses) out[prefix + s] = (out[prefix + s] ?? 0) + 1;
  return out;
}
