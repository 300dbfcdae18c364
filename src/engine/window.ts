/**
 * Stage 4, the dedupe window (keyless creates we hold; see src/dedupe-window.ts for the rule).
 * Identical ones in this call within the window of each other follow one leader: it takes the
 * slot, the rest follow its outcome instead of seeing its pending hold as another worker's. A
 * suppressed leader is completed with the unchanged ones; one another worker is writing is
 * released (`in_flight`); the others go on holding their slot, renewed by the call's keeper. One
 * that passed over a dead holder's slot is a takeover: the dead holder's create may have
 * committed, so it is looked up (by that holder's key too) before this one is created.
 */
import { leadersOf } from '../dedupe-window.js';
import { extend } from '../extend.js';
import { releaseEntries } from './settle.js';
import type { Call, Decided, EngineContext, Held } from './types.js';

export interface WindowResult {
  /** To write: unwindowed items and window leaders that hold their slot. */
  pass: Held[];
  suppressed: Decided[];
  yielded: Decided[];
  followers: { item: Held; leader: Held }[];
}

export async function windowStage(ctx: EngineContext, call: Call, held: readonly Held[]): Promise<WindowResult> {
  const candidates = held.filter((i) => i.windowId);
  const leaderOf = leadersOf(candidates.map((i) => ({ id: i.windowId!, key: i.key, at: i.at })), ctx.windowMs);
  const leaders = candidates.filter((_, j) => leaderOf[j] === j);
  const followers = candidates.flatMap((item, j) => (leaderOf[j] === j ? [] : [{ item, leader: candidates[leaderOf[j]!]! }]));
  const verdicts = await ctx.window.acquire(leaders.map((i) => ({ id: i.windowId!, key: i.key, at: i.at })), await ctx.clock.now());
  const result: WindowResult = { pass: held.filter((i) => !i.windowId), suppressed: [], yielded: [], followers };
  const yielded: Held[] = [];
  leaders.forEach((item, j) => {
    const { verdict, slot, takenOver } = verdicts[j]!;
    if (verdict === 'suppressed') result.suppressed.push({ item, outcome: { key: item.key, status: 'suppressed', attempts: 0 } });
    else if (verdict === 'in_flight') yielded.push(item);
    else result.pass.push(extend(item, { slot, ...(takenOver ? { recovered: true, deadHolderKeys: takenOver.filter((k) => k !== item.key) } : {}) }));
  });
  call.keeper.holdSlots(result.pass.flatMap((i) => (i.slot ? [i.slot] : [])));
  await releaseEntries(ctx, call, yielded);
  result.yielded = yielded.map((item) => ({ item, outcome: { key: item.key, status: 'in_flight', attempts: 0 } }));
  return result;
}
