/**
 * The one codec between an entry and what a backend stores: a row of the same twelve columns
 * in SQLite, Postgres and the Redis scripts' replies, with `result` and `error` as JSON text.
 * Drivers hand numbers back as numbers (SQLite), strings (Postgres bigint, Redis) or null.
 */
import { ValidationError } from '../../errors.js';
import type { EntryStatus, Json, LedgerEntry, NoteRequest } from '../types.js';

/** The stored columns of an entry, in the order `entryFromValues` reads them. */
export const ENTRY_COLUMNS = [
  'key', 'fingerprint', 'status', 'token', 'lease_until', 'attempts', 'result', 'error', 'created_at', 'updated_at', 'expires_at', 'owner',
] as const;
export type EntryColumn = (typeof ENTRY_COLUMNS)[number];

/** An entry as stored: numbers as numbers, `result` and `error` as JSON text (null for none). */
export type EntryRow = {
  [C in EntryColumn]: C extends 'key' | 'fingerprint' ? string
    : C extends 'status' ? EntryStatus
    : C extends 'token' | 'attempts' | 'created_at' | 'updated_at' ? number
    : C extends 'lease_until' | 'expires_at' ? number | null
    : string | null;
};

const missing = (v: unknown): v is null | undefined => v === null || v === undefined;
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (missing(v) ? null : Number(v));

/** JSON text as stored; null and undefined (no value) stay null. */
export const decodeJson = (text: unknown): Json | null => (missing(text) ? null : (JSON.parse(String(text)) as Json));
export const encodeJson = (value: Json): string => JSON.stringify(value);

/**
 * The JSON text of every note of a batch, checked before anything is written: a note JSON cannot
 * encode would otherwise be stored as nothing (undefined), or fail one backend's driver halfway.
 */
export function encodeNotes(requests: readonly NoteRequest[]): string[] {
  return requests.map((r, i) => {
    let text: string | undefined;
    try {
      text = JSON.stringify(r.note) as string | undefined;
    } catch (err) {
      throw new ValidationError([{ path: `[${i}].note`, message: `is not JSON: ${(err as Error).message}` }], { cause: err });
    }
    if (text === undefined) throw new ValidationError([{ path: `[${i}].note`, message: `is not JSON: ${typeof r.note}` }]);
    return text;
  });
}

/** An entry from its stored values in `ENTRY_COLUMNS` order (a missing `owner`: a table from before owners). */
export function entryFromValues(values: readonly unknown[]): LedgerEntry {
  const [key, fingerprint, status, token, leaseUntil, attempts, result, error, createdAt, updatedAt, expiresAt, owner] = values;
  return {
    key: String(key),
    fingerprint: String(fingerprint),
    status: String(status) as EntryStatus,
    token: num(token),
    leaseUntil: numOrNull(leaseUntil),
    attempts: num(attempts),
    result: decodeJson(result),
    error: decodeJson(error),
    createdAt: num(createdAt),
    updatedAt: num(updatedAt),
    owner: missing(owner) ? null : String(owner),
    expiresAt: numOrNull(expiresAt),
  };
}

/** An entry from a row keyed by column name (read field by field: this runs once per claimed key). */
export const entryFromRow = (row: Partial<Record<EntryColumn, unknown>>): LedgerEntry => ({
  key: String(row.key),
  fingerprint: String(row.fingerprint),
  status: String(row.status) as EntryStatus,
  token: num(row.token),
  leaseUntil: numOrNull(row.lease_until),
  attempts: num(row.attempts),
  result: decodeJson(row.result),
  error: decodeJson(row.error),
  createdAt: num(row.created_at),
  updatedAt: num(row.updated_at),
  owner: missing(row.owner) ? null : String(row.owner),
  expiresAt: numOrNull(row.expires_at),
});

/** The row that stores `entry`. */
export const entryToRow = (entry: LedgerEntry): EntryRow => ({
  key: entry.key,
  fingerprint: entry.fingerprint,
  status: entry.status,
  token: entry.token,
  lease_until: entry.leaseUntil,
  attempts: entry.attempts,
  result: entry.result === null ? null : encodeJson(entry.result),
  error: entry.error === null ? null : encodeJson(entry.error),
  created_at: entry.createdAt,
  updated_at: entry.updatedAt,
  expires_at: entry.expiresAt,
  owner: entry.owner ?? null,
});
