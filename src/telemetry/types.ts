/**
 * The few OpenTelemetry API shapes this library calls, described structurally (as the vendor
 * clients are): the types of the root entry never name `@opentelemetry/api`, so a project without
 * it type-checks, and a project with it passes its SDK's providers as they are.
 */

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

export interface SpanLike {
  setAttribute(key: string, value: AttributeValue): unknown;
  setAttributes(attributes: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  addEvent(name: string, attributes?: Attributes): unknown;
  end(): void;
}

export interface TracerLike {
  startSpan(name: string, options?: { kind?: number; attributes?: Attributes }, context?: unknown): SpanLike;
}

/** An OpenTelemetry `TracerProvider` (e.g. the SDK's `BasicTracerProvider` or `NodeTracerProvider`). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): TracerLike;
}

export interface CounterLike {
  add(value: number, attributes?: Attributes): void;
}

export interface HistogramLike {
  record(value: number, attributes?: Attributes): void;
}

export interface MeterLike {
  createCounter(name: string, options?: { description?: string; unit?: string }): CounterLike;
  createHistogram(name: string, options?: { description?: string; unit?: string }): HistogramLike;
}

/** An OpenTelemetry `MeterProvider` (e.g. the SDK's `MeterProvider`). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): MeterLike;
}

/**
 * `createSync({ telemetry })`. Spans and metrics need `@opentelemetry/api` (an optional peer,
 * `>=1.3.0 <1.11.0`); it is loaded only when providers are given here, or once an OpenTelemetry
 * SDK registered global providers in this process.
 */
export type TelemetryOption =
  | {
      /** Where spans go. Default: the global tracer provider (`trace.setGlobalTracerProvider`, NodeSDK). */
      tracerProvider?: TracerProviderLike;
      /** Where metrics go. Default: the global meter provider (`metrics.setGlobalMeterProvider`, NodeSDK). */
      meterProvider?: MeterProviderLike;
    }
  /** No spans, no metrics, nothing wrapped and nothing loaded. */
  | false;
