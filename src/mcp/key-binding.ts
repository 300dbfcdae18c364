/**
 * An agent's idempotencyKey, bound to the one action it was first used for.
 *
 * The engine's key of a keyed action hashes the event id together with the action's identity
 * (object, record or target, intent), so on its own the same idempotencyKey on another target
 * would simply be another key and write again. An agent means "this call", so the first use of a
 * key records its identity under `v1:m:<hash(source, idempotencyKey)>` (one atomic claim: of two
 * concurrent first uses exactly one wins), and a later use with another identity is a
 * KeyConflictError naming the key. The binding is completed at once, before the write: the
 * write itself is guarded by the action's own ledger entry, which the binding points to.
 */
import { createHash } from 'node:crypto';
import { KEY_VERSION } from '../key.js';
import { claimKeys } from '../engine/claim-keys.js';
import type { Json, LedgerBackend, LedgerEntry } from '../ledger/types.js';

/** The binding claim's lease: it is completed right after it is claimed. */
const BINDING_LEASE_MS = 30_000;

export const BINDING_PREFIX = `${KEY_VERSION}:m:`;

/** The ledger key binding `idempotencyKey` for the calls recorded under `source`. */
export function bindingKey(source: string, idempotencyKey: string): string {
  return `${BINDING_PREFIX}${createHash('sha256').update(JSON.stringify(['mcp-key', source, idempotencyKey])).digest('base64url').slice(0, 40)}`;
}

/** The action key a binding entry points to. */
export function boundAction(entry: LedgerEntry | null): string | undefined {
  const result = entry?.result;
  if (!result || typeof result !== 'object' || Array.isArray(result)) return undefined;
  const action = (result as Record<string, Json>).action;
  return typeof action === 'string' ? action : undefined;
}

export interface BindRequest {
  source: string;
  idempotencyKey: string;
  /** The engine's key of the action (`sync.prepare`). */
  actionKey: string;
  /** The action's identity fingerprint. */
  fingerprint: string;
}

export type BindResult = { ok: true } | { ok: false; existing: LedgerEntry; actionKey?: string };

export interface BindOptions {
  /** Keep bindings this long, ms; null keeps them (until pruned by age). */
  retentionMs: number | null;
  now(): Promise<number>;
}

/** Bind the key to this action, or report the action it is bound to when that is another one. */
export async function bindKey(ledger: LedgerBackend, request: BindRequest, options: BindOptions): Promise<BindResult> {
  const key = bindingKey(request.source, request.idempotencyKey);
  const [claim] = await claimKeys(ledger, [{ key, fingerprint: request.fingerprint, leaseMs: BINDING_LEASE_MS, retryFailed: true }], await options.now());
  if (claim!.outcome === 'conflict') {
    const actionKey = boundAction(claim!.entry);
    return { ok: false, existing: claim!.entry, ...(actionKey ? { actionKey } : {}) };
  }
  if (claim!.outcome === 'claimed') {
    await ledger.complete([{ key, token: claim!.token!, result: { action: request.actionKey }, retentionMs: options.retentionMs }], await options.now());
  }
  // Completed or in progress with the same identity: the same action, which its own entry guards.
  return { ok: true };
}
