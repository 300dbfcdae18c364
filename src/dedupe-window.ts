/**
 * The dedupe window: an action with no event id is suppressed when an identical action on the
 * same record was written inside `windowMs`. Identity is (crm, object, target record, op,
 * intent), never the model text. A slot is taken (pending, for the claim's lease) before the
 * write and confirmed for `windowMs` only once the CRM confirmed it; a failed write releases
 * it, so the retry is not suppressed.
 */
import { createHash } from 'node:crypto';
import type { LedgerBackend, WindowSlot } from './ledger/types.js';
import type { KeyedAction } from './key.js';

export function windowId(crm: string, action: KeyedAction): string {
  const record = action.op === 'upsert' ? `${action.object}:${action.externalId ?? ''}` : `${action.target?.object}:${action.target?.externalId}`;
  const identity = JSON.stringify([crm, action.object, record, action.op, action.intent ?? '']);
  return `w1:${createHash('sha256').update(identity).digest('base64url').slice(0, 40)}`;
}

export type WindowVerdict = 'go' | 'suppressed' | 'in_flight';

export interface DedupeWindow {
  /** One round trip: take a pending slot for each owner key, or learn who has it. */
  acquire(items: { id: string; owner: string }[], now: number): Promise<WindowVerdict[]>;
  /** One round trip: confirm the slots of written actions, release the failed ones. */
  settle(items: { id: string; owner: string; written: boolean }[], now: number): Promise<void>;
}

export function dedupeWindow(ledger: LedgerBackend, options: { windowMs: number; pendingMs: number }): DedupeWindow {
  const verdict = (slot: WindowSlot): WindowVerdict => (slot.acquired ? 'go' : slot.confirmed ? 'suppressed' : 'in_flight');
  return {
    async acquire(items, now) {
      if (items.length === 0) return [];
      const slots = await ledger.windowAcquire(
        items.map((i) => ({ id: i.id, owner: i.owner, ttlMs: options.pendingMs })),
        now,
      );
      return slots.map(verdict);
    },
    async settle(items, now) {
      if (items.length === 0) return;
      await ledger.windowSettle(
        items.map((i) => ({ id: i.id, owner: i.owner, ttlMs: i.written ? options.windowMs : null })),
        now,
      );
    },
  };
}
