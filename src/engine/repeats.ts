/**
 * Stage 2, in-call repeats: the same key twice in one call is one action. The first occurrence
 * leads and goes to the ledger; the others follow its outcome (`replayed`, or `suppressed` for
 * keyless actions, once the leader wrote or found it).
 */
import type { Outcome, OutcomeStatus } from '../outcome.js';
import { WRITTEN, type Planned } from './types.js';

export function splitRepeats(planned: readonly Planned[]): { leaders: Planned[]; repeats: { item: Planned; leader: Planned }[] } {
  const byKey = new Map<string, Planned>();
  const leaders: Planned[] = [];
  const repeats: { item: Planned; leader: Planned }[] = [];
  for (const item of planned) {
    const leader = byKey.get(item.key);
    if (leader) repeats.push({ item, leader });
    else {
      byKey.set(item.key, item);
      leaders.push(item);
    }
  }
  return { leaders, repeats };
}

export function repeatOutcome(item: Planned, lead: Outcome): Outcome {
  const done = WRITTEN.has(lead.status) || lead.status === 'replayed' || lead.status === 'suppressed';
  const status: OutcomeStatus = done ? (item.keyless ? 'suppressed' : 'replayed') : lead.status;
  return { ...lead, status, attempts: 0 };
}
