/**
 * Small pure helpers the verifiers share: header lookup, constant-time comparison, JSON parsing
 * of the raw body, JSON pointers and event time normalization.
 */
import { timingSafeEqual } from 'node:crypto';
import type { HeaderBag } from './types.js';

/** The first value of header `name` (case-insensitive), or undefined. */
export function headerOf(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const lower = name.toLowerCase();
  const key = lower in bag ? lower : Object.keys(bag).find((k) => k.toLowerCase() === lower);
  const value = key === undefined ? undefined : bag[key];
  return typeof value === 'string' ? value : value?.[0];
}

/** Constant-time equality of two byte strings; false (without comparing) when the lengths differ. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The body parsed as JSON, or undefined when it is not UTF-8 JSON. */
export function parseJson(body: Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(decoder.decode(body)) as unknown };
  } catch {
    return undefined;
  }
}

/** The value at an RFC 6901 JSON pointer (`/data/id`), or undefined. */
export function atPointer(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) node = /^(0|[1-9]\d*)$/.test(token) ? node[Number(token)] : undefined;
    else if (node !== null && typeof node === 'object' && Object.hasOwn(node, token)) node = (node as Record<string, unknown>)[token];
    else return undefined;
  }
  return node;
}

/** An event id from a JSON value: a non-empty string or a finite number, else undefined. */
export function idOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '' && value.length <= 256) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** An event time as ISO 8601 from epoch ms or a date string; undefined when absent or unparseable. */
export function isoOf(value: unknown): string | undefined {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : undefined;
}
