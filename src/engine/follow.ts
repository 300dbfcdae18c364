/**
 * Stage 9, follow: window followers (identical keyless creates of this call within the window of
 * their leader) take their leader's outcome: `suppressed` once it was written or found, else the
 * same `failed` (recorded) or `in_flight` (released) as the leader.
 */
import { completeEntries, failEntries, releaseEntries } from './settle.js';
import { WRITTEN, type Call, type Decided, type EngineContext, type Held } from './types.js';

export async function followStage(ctx: EngineContext, call: Call, followers: readonly { item: Held; leader: Held }[], outcomeOf: (item: Held) => Decided['outcome']): Promise<Decided[]> {
  const done: Decided[] = [];
  const failed: Decided[] = [];
  const yielded: Decided[] = [];
  for (const { item, leader } of followers) {
    const o = outcomeOf(leader);
    if (WRITTEN.has(o.status) || o.status === 'suppressed' || o.status === 'replayed') {
      done.push({ item, outcome: { key: item.key, status: 'suppressed', ...(o.recordId ? { recordId: o.recordId } : {}), attempts: 0 } });
    } else {
      (o.status === 'failed' ? failed : yielded).push({ item, outcome: { ...o, key: item.key, attempts: 0 } });
    }
  }
  await completeEntries(ctx, call, done);
  await failEntries(ctx, call, failed, false);
  await releaseEntries(ctx, call, yielded.map((d) => d.item as Held));
  return [...done, ...failed, ...yielded];
}
