/**
 * Read an input exactly once into plain data before it is parsed, so that what is validated is
 * what is written: a getter that answers differently on each read, or a Proxy, cannot show the
 * schema one action and the CRM another. An input that cannot be read as data (a getter or a
 * Proxy trap that throws, a revoked Proxy, a cycle, a BigInt, a function, a symbol) becomes
 * issues with a path and a reason instead of an exception, so it is rejected on its own.
 */
import { types } from 'node:util';
import type { ValidationIssue } from './issues.js';

const { isProxy } = types;
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

/** A path built only when an issue needs it: each level links to its parent. */
interface PathLink {
  parent: PathLink | undefined;
  key: string;
}
const pathOf = (link: PathLink | undefined): string[] => {
  const out: string[] = [];
  for (let l = link; l; l = l.parent) out.unshift(l.key);
  return out;
};

/** What one snapshot collects: its issues, and the objects being copied (to find cycles). */
interface Walk {
  issues: ValidationIssue[];
  ancestors: Set<object>;
}

function fail(walk: Walk, link: PathLink | undefined, message: string): undefined {
  if (walk.issues.length < MAX_ISSUES) walk.issues.push({ path: pathOf(link).map(escapeLoneSurrogates).join('.'), message });
  return undefined;
}

function copyObject(walk: Walk, obj: object, link: PathLink | undefined, depth: number): unknown {
  const isArray = Array.isArray(obj);
  const proto = Reflect.getPrototypeOf(obj);
  if (!isArray && !isPlainPrototype(proto)) {
    const kind = kindOf(proto!);
    return fail(walk, link, `is a ${kind} object, not plain data${kind === 'Date' ? ' (send an ISO 8601 string)' : ''}`);
  }
  const out: Record<string, unknown> | unknown[] = isArray ? [] : {};
  // Own enumerable string keys, each read once: the stored value, or the getter called once. A
  // Proxy is read through its descriptors (its get trap could answer otherwise); anything else
  // reads the same either way, and the plain read is several times faster.
  const proxy = isProxy(obj);
  for (const key of proxy ? Reflect.ownKeys(obj) : Object.keys(obj)) {
    if (typeof key !== 'string') continue;
    const at: PathLink = { parent: link, key };
    let read: unknown;
    try {
      if (proxy) {
        const desc = Reflect.getOwnPropertyDescriptor(obj, key);
        if (!desc?.enumerable || (isArray && key === 'length')) continue;
        read = 'value' in desc ? desc.value : desc.get?.call(obj);
      } else read = (obj as Record<string, unknown>)[key];
    } catch (err) {
      fail(walk, at, `cannot be read: ${describeThrown(err)}`);
      continue;
    }
    const copied = copy(walk, read, at, depth + 1);
    // An own "__proto__" stays an own property (plain assignment would set the prototype).
    if (key === '__proto__') Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
    else (out as Record<string, unknown>)[key] = copied;
  }
  return out;
}

function copy(walk: Walk, value: unknown, link: PathLink | undefined, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'undefined':
      return value;
    case 'bigint':
      return fail(walk, link, 'is a BigInt, which JSON cannot carry; send a number or a string');
    case 'function':
      return fail(walk, link, 'is a function, not data');
    case 'symbol':
      return fail(walk, link, 'is a symbol, not data');
  }
  if (value === null) return null;
  const obj = value as object;
  if (walk.ancestors.has(obj)) return fail(walk, link, 'refers back to an enclosing object (a cycle)');
  if (depth >= MAX_INPUT_DEPTH) return fail(walk, link, `nests deeper than ${MAX_INPUT_DEPTH} levels`);
  walk.ancestors.add(obj);
  try {
    return copyObject(walk, obj, link, depth);
  } catch (err) {
    // A revoked Proxy (or a throwing ownKeys trap): nothing of it can be read.
    return fail(walk, link, `cannot be read: ${describeThrown(err)}`);
  } finally {
    walk.ancestors.delete(obj);
  }
}

export function snapshotInput(input: unknown): Snapshot {
  const walk: Walk = { issues: [], ancestors: new Set() };
  const value = copy(walk, input, undefined, 0);
  return walk.issues.length > 0 ? { ok: false, issues: walk.issues } : { ok: true, value };
}
