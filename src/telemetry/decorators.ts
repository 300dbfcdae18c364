/**
 * Decorators that observe without changing behaviour: the adapter (each batch call is one span,
 * requests sent are counted) and the ledger backend (each method call is one round trip). Both
 * are Proxies, so every member passes through as it is, including ones added to the contracts
 * later; when no instruments are active a call goes straight through.
 */
import type { CrmAdapter, ReadResult, WriteResult } from '../adapter.js';
import type { LedgerBackend } from '../ledger/types.js';
import { Attr, countsBy, errorType, RESULT_PREFIX, SpanKind, SpanName, SpanStatus, type Instruments } from './instruments.js';
import type { SpanScope } from './scope.js';

const BATCH_OPS: Readonly<Record<string, string>> = { upsertRecords: 'upsert', createActivities: 'create', findActivities: 'find', readRecords: 'read' };

type Current = () => Instruments | null;
type AnyFn = (...args: unknown[]) => unknown;

function resultAttributes(op: string, result: unknown): Record<string, number> {
  if (op === 'find') return { [`${RESULT_PREFIX}found`]: (result as Map<string, string>).size };
  if (op === 'read') return countsBy(RESULT_PREFIX, (result as ReadResult[]).map((r) => (r.found ? 'found' : 'not_found')));
  const results = result as WriteResult[];
  return countsBy(RESULT_PREFIX, results.map((r) => (!r.ok ? 'failed' : r.created ? 'created' : 'updated')));
}

export function instrumentAdapter(adapter: CrmAdapter, current: Current, spans: SpanScope): CrmAdapter {
  let seen: number | undefined;
  const countCalls = (inst: Instruments) => {
    const now = adapter.apiCalls();
    if (seen !== undefined && now > seen) inst.apiCalls.add(now - seen, { [Attr.crm]: adapter.name });
    seen = now;
  };
  const batch = (op: string, fn: AnyFn): AnyFn => async (...args) => {
    const inst = current();
    if (!inst) {
      seen = undefined;
      return fn.apply(adapter, args);
    }
    seen ??= adapter.apiCalls();
    const [object, writes] = args as [string, unknown[]];
    const { span, run } = spans.open(inst, SpanName.batch, SpanKind.client, { [Attr.crm]: adapter.name, [Attr.object]: object, [Attr.op]: op, [Attr.batchSize]: writes.length });
    try {
      const result = await run(() => fn.apply(adapter, args));
      span.setAttributes(resultAttributes(op, result));
      return result;
    } catch (err) {
      const type = errorType(err);
      span.setAttribute(Attr.errorType, type);
      const status = (err as { status?: unknown } | null)?.status;
      if (typeof status === 'number') span.setAttribute(Attr.httpStatus, status);
      span.setStatus({ code: SpanStatus.error, message: type });
      throw err;
    } finally {
      countCalls(inst);
      span.end();
    }
  };
  const wrapped = new Map<string, AnyFn>();
  return new Proxy(adapter, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && BATCH_OPS[prop]) {
        if (!wrapped.has(prop)) wrapped.set(prop, batch(BATCH_OPS[prop]!, value as AnyFn));
        return wrapped.get(prop);
      }
      return (value as AnyFn).bind(target);
    },
  });
}

export function instrumentLedger(ledger: LedgerBackend, current: Current): LedgerBackend {
  const wrapped = new Map<string, AnyFn>();
  const counted = (method: string, fn: AnyFn): AnyFn => (...args) => {
    current()?.roundTrips.add(1, { [Attr.ledger]: ledger.name, [Attr.method]: method });
    return fn.apply(ledger, args);
  };
  return new Proxy(ledger, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (typeof prop !== 'string' || prop === 'close') return (value as AnyFn).bind(target);
      if (!wrapped.has(prop)) wrapped.set(prop, counted(prop, value as AnyFn));
      return wrapped.get(prop);
    },
  });
}
