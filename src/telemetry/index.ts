/**
 * crm-upsert-sync/telemetry: the names of the spans, metrics and attributes `createSync`'s
 * telemetry emits (docs/operations.md), and the wait hook the CLI's progress bar and the wait
 * histogram listen to. Importing it loads no `@opentelemetry/api`.
 */
export { SpanName, MetricName, Attr, OUTCOME_PREFIX, RESULT_PREFIX, WAIT_EVENT } from './instruments.js';
export { observeWaits, announceWait, WaitKind, type RateWait, type WaitListener } from './waits.js';
export type { TelemetryOption, TracerProviderLike, MeterProviderLike, TracerLike, MeterLike, SpanLike, CounterLike, HistogramLike, Attributes, AttributeValue } from './types.js';
