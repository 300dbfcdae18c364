/**
 * Stage 5, unchanged: a new key whose fields equal what this ledger last wrote to the record
 * (its mark) is `unchanged`, with the stored record id and no API call. Two writes to one record
 * in this call are coalesced instead (the later fields win), and an unknown mark (left by a write
 * that may have reached the CRM) never matches.
 */
import { decodeMark } from './payloads.js';
import type { Decided, Held } from './types.js';

export function unchangedStage(held: readonly Held[]): { pass: Held[]; unchanged: Decided[] } {
  const recordOf = (i: Held) => `${i.object}\u0000${i.coalesceId}`;
  const writesPerRecord = new Map<string, number>();
  for (const item of held) if (item.coalesceId !== undefined) writesPerRecord.set(recordOf(item), (writesPerRecord.get(recordOf(item)) ?? 0) + 1);
  const pass: Held[] = [];
  const unchanged: Decided[] = [];
  for (const item of held) {
    const last = item.mark && item.fieldHash !== undefined ? decodeMark(item.mark) : undefined;
    const same = last && last.h !== null && last.id !== null && last.h === item.fieldHash && writesPerRecord.get(recordOf(item)) === 1;
    if (same) unchanged.push({ item, outcome: { key: item.key, status: 'unchanged', recordId: last.id!, attempts: 0 } });
    else pass.push(item);
  }
  return { pass, unchanged };
}
