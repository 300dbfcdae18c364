/**
 * Read an input exactly once into plain data before it is parsed, so that what is validated is
 * what is written: a getter that answers differently on each read, or a Proxy, cannot show the
 * schema one action and the CRM another. An input that cannot be read as data (a getter or a
 * Proxy trap that throws, a revoked Proxy, a cycle, a BigInt, a function, a symbol) becomes
 * issues with a path and a reason instead of an exception, so it is rejected on its own.
 */
import type { ValidationIssue } from './issues.js';
import { escapeLoneSurrogates } from './unicode.js';

/** An action is three levels deep; anything past this is not an action (and would exhaust the stack). */
export const MAX_INPUT_DEPTH = 32;
const MAX_ISSUES = 20;
const MAX_REASON = 200;

export type Snapshot = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] };

/** What a thrown value says, without trusting it (its `message` may be a throwing getter too). */
function describeThrown(err: unknown): string {
  try {
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    // ValidationError redacts issue messages: secrets a thrown message may quote never leave.
    return escapeLoneSurrogates(text).slice(0, MAX_REASON);
  } catch {
    return 'an unprintable value';
  }
}

/** An object literal's prototype (also another realm's) or none: the only objects taken as data. */
function isPlainPrototype(proto: object | null): boolean {
  if (proto === null || proto === Object.prototype) return true;
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value as unknown;
  return Object.getPrototypeOf(proto) === null && typeof ctor === 'function' && ctor.name === 'Object';
}

function kindOf(proto: object): string {
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value as unknown;
  return typeof ctor === 'function' && ctor.name ? ctor.name : 'non-plain';
}

export function snapshotInput(input: unknown): Snapshot {
  const issues: ValidationIssue[] = [];
  const ancestors = new Set<object>();
  const fail = (path: string[], message: string): undefined => {
    if (issues.length < MAX_ISSUES) issues.push({ path: path.map(escapeLoneSurrogates).join('.'), message });
    return undefined;
  };

  const copy = (value: unknown, path: string[]): unknown => {
    switch (typeof value) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'undefined':
        return value;
      case 'bigint':
        return fail(path, 'is a BigInt, which JSON cannot carry; send a number or a string');
      case 'function':
        return fail(path, 'is a function, not data');
      case 'symbol':
        return fail(path, 'is a symbol, not data');
    }
    if (value === null) return null;
    const obj = value as object;
    if (ancestors.has(obj)) return fail(path, 'refers back to an enclosing object (a cycle)');
    if (path.length >= MAX_INPUT_DEPTH) return fail(path, `nests deeper than ${MAX_INPUT_DEPTH} levels`);
    ancestors.add(obj);
    try {
      const isArray = Array.isArray(obj);
      const proto = Reflect.getPrototypeOf(obj);
      if (!isArray && !isPlainPrototype(proto)) {
        const kind = kindOf(proto!);
        return fail(path, `is a ${kind} object, not plain data${kind === 'Date' ? ' (send an ISO 8601 string)' : ''}`);
      }
      const out: Record<string, unknown> | unknown[] = isArray ? [] : {};
      for (const key of Reflect.ownKeys(obj)) {
        if (typeof key !== 'string' || (isArray && key === 'length')) continue;
        const at = [...path, key];
        let desc: PropertyDescriptor | undefined;
        let read: unknown;
        try {
          desc = Reflect.getOwnPropertyDescriptor(obj, key);
          if (!desc?.enumerable) continue;
          // One read: the stored value, or the getter called once.
          read = 'value' in desc ? desc.value : desc.get?.call(obj);
        } catch (err) {
          fail(at, `cannot be read: ${describeThrown(err)}`);
          continue;
        }
        const copied = copy(read, at);
        // An own "__proto__" stays an own property (plain assignment would set the prototype).
        Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
      }
      return out;
    } catch (err) {
      // A revoked Proxy (or a throwing ownKeys trap): nothing of it can be read.
      return fail(path, `cannot be read: ${describeThrown(err)}`);
    } finally {
      ancestors.delete(obj);
    }
  };

  const value = copy(input, []);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
}
