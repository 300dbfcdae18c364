/**
 * Which span the code running now belongs to. Kept in an AsyncLocalStorage of its own as well as
 * in the OpenTelemetry context: without a registered context manager (a bare BasicTracerProvider)
 * the API's context never changes, and batch spans would lose their `apply_many` parent.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Instruments } from './instruments.js';
import type { Attributes, SpanLike } from './types.js';

export interface OpenSpan {
  readonly span: SpanLike;
  /** Run `fn` as this span's child work (nested spans, the CRM client's own instrumentation). */
  run<T>(fn: () => T): T;
}

export interface SpanScope {
  /** Start a span under the current one (else under the active OpenTelemetry context). */
  open(inst: Instruments, name: string, kind: number, attributes: Attributes): OpenSpan;
  /** The innermost span of the current async scope. */
  current(): SpanLike | undefined;
}

export function spanScope(): SpanScope {
  const store = new AsyncLocalStorage<{ context: unknown; span: SpanLike }>();
  return {
    open(inst, name, kind, attributes) {
      const parent = store.getStore()?.context ?? inst.api.context.active();
      const span = inst.tracer.startSpan(name, { kind, attributes }, parent);
      const context = inst.api.trace.setSpan(parent, span);
      return { span, run: (fn) => store.run({ context, span }, () => inst.api.context.with(context, fn)) };
    },
    current: () => store.getStore()?.span,
  };
}
