/**
 * What the engine stores in a ledger entry's `result` and `error`: one typed encode and decode
 * per payload. Decoders read what any version wrote (an action failure used to keep its retry
 * fields beside the error's own) and never trust a field's type.
 *
 *   ActionResult   completed action: its status and record id
 *   ActionFailure  failed action: the error, and how to retry it (the action, its event time,
 *                  the attempt it failed on, whether the write may have reached the CRM)
 *   StepResult     completed `once` step: its JSON value
 *   EventResult    completed `handle` event: its actions' outcomes
 *   the error of a failed step or event is a plain SerializedError
 */
import type { Action } from '../../schemas/action.js';
import { ErrorCode, type SerializedError } from '../errors.js';
import type { Json } from '../ledger/types.js';
import type { Outcome, OutcomeStatus } from '../outcome.js';

export interface ActionResult {
  status: OutcomeStatus;
  recordId?: string;
}

export interface RetryInfo {
  action: Action;
  /** Event time, epoch ms. */
  at: number;
  /** The entry's attempts when it failed: the next claim follows directly when it has one more. */
  attempts: number;
  possiblyWritten: boolean;
}

export interface ActionFailure {
  error: SerializedError;
  retry?: RetryInfo;
}

export interface EventResult {
  outcomes: Pick<Outcome, 'key' | 'status' | 'recordId'>[];
}

type JsonObject = { [k: string]: Json };
const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/**
 * Plain data to Json: what a ledger column holds. Everything stored here is plain data already
 * (validated actions, serialized errors, step values JSON round-trips as the backends store them),
 * so only `undefined` members are dropped, as the backends' JSON does.
 */
function toJson(value: unknown): Json {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value.map((v) => toJson(v));
  if (typeof value !== 'object') return value as Json;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toJson(v);
  return out;
}

export function encodeError(error: SerializedError): JsonObject {
  return toJson(error) as JsonObject;
}

export function decodeError(value: Json | null | undefined): SerializedError | undefined {
  if (!isObject(value)) return undefined;
  return {
    name: str(value.name) ?? 'Error',
    code: CODES.has(str(value.code) ?? '') ? (value.code as ErrorCode) : ErrorCode.unknown,
    message: str(value.message) ?? '',
    ...(typeof value.retryable === 'boolean' ? { retryable: value.retryable } : {}),
    ...(typeof value.status === 'number' ? { status: value.status } : {}),
    ...(typeof value.path === 'string' ? { path: value.path } : {}),
  };
}

export const encodeActionResult = (r: ActionResult): Json => toJson(r);

export function decodeActionResult(value: Json | null): ActionResult | undefined {
  if (!isObject(value) || typeof value.status !== 'string') return undefined;
  return { status: value.status as OutcomeStatus, ...(str(value.recordId) ? { recordId: str(value.recordId)! } : {}) };
}

export const encodeActionFailure = (f: ActionFailure): Json => toJson(f);

export function decodeActionFailure(value: Json | null): ActionFailure | undefined {
  if (!isObject(value)) return undefined;
  // The earlier form kept the retry fields beside the error's own.
  const nested = isObject(value.error);
  const error = decodeError((nested ? value.error : value) as Json);
  const source = nested ? value.retry : value;
  if (!error) return undefined;
  if (!isObject(source) || !isObject(source.action)) return { error };
  const retry: RetryInfo = {
    action: source.action as Action,
    at: typeof source.at === 'number' ? source.at : NaN,
    attempts: typeof source.attempts === 'number' ? source.attempts : 0,
    possiblyWritten: source.possiblyWritten !== false,
  };
  return { error, retry };
}

// A step's value is whatever the step returned: round-trip it, so a replay sees what the ledger keeps.
export const encodeStepResult = (value: unknown): Json => ({ v: value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json) });
export const decodeStepResult = (value: Json | null): unknown => (isObject(value) ? (value.v ?? undefined) : undefined);

export const encodeEventResult = (r: EventResult): Json => toJson(r);
export function decodeEventResult(value: Json | null): EventResult {
  const outcomes: unknown[] = isObject(value) && Array.isArray(value.outcomes) ? value.outcomes : [];
  return { outcomes: outcomes.filter(isObject).map((o) => ({ key: str(o.key) ?? '', status: (str(o.status) ?? 'failed') as OutcomeStatus, ...(str(o.recordId) ? { recordId: str(o.recordId)! } : {}) })) };
}

/**
 * A record's "last written" mark: the hash of the fields this ledger last confirmed written to it
 * and the record's CRM id; both null in the unknown mark a possibly written upsert leaves. `t`:
 * per field, the event time (epoch ms) of the newest value written (or possibly written) to it
 * through this ledger; a field it does not name, or a mark without `t` (written before field times
 * were kept), is of unknown time and is written as it comes.
 */
export interface RecordMark {
  h: string | null;
  id: string | null;
  t?: Readonly<Record<string, number>>;
}

export const encodeMark = (m: RecordMark): string => JSON.stringify(m.t === undefined ? { h: m.h, id: m.id } : { h: m.h, id: m.id, t: m.t });

/** Field times as stored: only finite numbers count. */
function fieldTimes(v: unknown): Record<string, number> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, number> = {};
  for (const [field, at] of Object.entries(v)) if (typeof at === 'number' && Number.isFinite(at)) out[field] = at;
  return out;
}

/** A stored mark; text that is not one reads as the unknown mark. */
export function decodeMark(text: string): RecordMark {
  try {
    const v = JSON.parse(text) as unknown;
    if (!isObject(v)) return { h: null, id: null };
    const t = fieldTimes(v.t);
    return { h: str(v.h) ?? null, id: str(v.id) || null, ...(t ? { t } : {}) };
  } catch {
    return { h: null, id: null };
  }
}

/** The action a stored failed entry can be retried with, if it has one. */
export const storedAction = (error: Json | null): Action | undefined => decodeActionFailure(error)?.retry?.action;
