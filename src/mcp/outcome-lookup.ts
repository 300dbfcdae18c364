/**
 * get_outcome: what happened to an earlier call, read from its ledger entry (no CRM call). The
 * key is the one a write tool returned, or the idempotencyKey the agent passed (looked up through
 * its binding for this client's source).
 */
import { decodeActionFailure, decodeActionResult } from '../engine/payloads.js';
import type { LedgerBackend, LedgerEntry } from '../ledger/types.js';
import { KEY_VERSION } from '../key.js';
import { BINDING_PREFIX, bindingKey, boundAction } from './key-binding.js';
import { errorInfo } from './tool-results.js';
import type { OutcomeReport } from './tool-schemas.js';

const iso = (ms: number | null | undefined) => (typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined);

export function reportOf(key: string, entry: LedgerEntry | null): OutcomeReport {
  if (!entry) return { key, status: 'not_found' };
  const base = { key, attempts: entry.attempts, ...(iso(entry.updatedAt) ? { updatedAt: iso(entry.updatedAt)! } : {}) };
  if (entry.status === 'in_progress') return { ...base, status: 'in_flight', ...(iso(entry.leaseUntil) ? { leaseUntil: iso(entry.leaseUntil)! } : {}) };
  if (entry.status === 'failed') {
    const error = decodeActionFailure(entry.error)?.error;
    return { ...base, status: 'failed', ...(error ? { error: errorInfo(error) } : {}) };
  }
  const result = decodeActionResult(entry.result);
  return { ...base, status: result?.status ?? 'created', ...(result?.recordId ? { recordId: result.recordId } : {}) };
}

/** The outcome under `key` (a ledger key, or an idempotencyKey of `source`). */
export async function lookupOutcome(ledger: LedgerBackend, source: string, key: string): Promise<OutcomeReport> {
  if (key.startsWith(`${KEY_VERSION}:`) && !key.startsWith(BINDING_PREFIX)) {
    const entry = await ledger.get(key);
    // An idempotencyKey may look like a ledger key: when no entry has it, it is looked up as one.
    if (entry) return reportOf(key, entry);
  }
  const actionKey = boundAction(await ledger.get(key.startsWith(BINDING_PREFIX) ? key : bindingKey(source, key)));
  if (!actionKey) return { key, status: 'not_found' };
  return reportOf(actionKey, await ledger.get(actionKey));
}
