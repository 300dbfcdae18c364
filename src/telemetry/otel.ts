/**
 * Loading `@opentelemetry/api`, an optional peer: synchronously through createRequire (createSync
 * is synchronous and the root entry must stay `require()`-able), never by a static import, and
 * only when it can matter: providers were passed in, or an SDK registered global providers.
 */
import { createRequire } from 'node:module';
import type { MeterProviderLike, SpanLike, TracerProviderLike } from './types.js';

/** The parts of the API module used here. */
export interface OtelApi {
  trace: { getTracerProvider(): TracerProviderLike; setSpan(context: unknown, span: SpanLike): unknown };
  metrics: { getMeterProvider(): MeterProviderLike };
  context: { active(): unknown; with<T>(context: unknown, fn: () => T): T };
}

export const OTEL_API = { name: '@opentelemetry/api', range: '>=1.3.0 <1.11.0' } as const;

// Where every copy of the 1.x API keeps the registered providers (one object per process, shared
// by the CommonJS and ESM builds and by copies in different node_modules folders).
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

/** True once something registered a global tracer or meter provider in this process. */
export function globalProvidersRegistered(): boolean {
  const api = (globalThis as Record<symbol, { trace?: unknown; metrics?: unknown } | undefined>)[GLOBAL_KEY];
  return Boolean(api?.trace ?? api?.metrics);
}

let loaded: OtelApi | null | undefined;

/** The API module, or null when it is not installed (or not an API this library can use). */
export function loadOtelApi(require: (id: string) => unknown = createRequire(import.meta.url)): OtelApi | null {
  if (loaded !== undefined) return loaded;
  try {
    const api = require(OTEL_API.name) as Partial<OtelApi>;
    loaded = api.trace && api.metrics && api.context ? (api as OtelApi) : null;
  } catch {
    loaded = null;
  }
  return loaded;
}
