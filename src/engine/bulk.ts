/**
 * Stage 7 for large upserts: the adapter's bulk lane (a Salesforce Bulk API 2.0 ingest job).
 *
 * A call's upserts of one object go through the lane when they reach its `minRecords` (`bulk:
 * 'auto'`) or whenever it accepts the object (`always`). The job is part of the keyed work: every
 * row's claim is held before the job is created (as for a batch call), and the job is noted on the
 * claims of its rows (ledger `note`) before its data is uploaded, and again once the upload was
 * answered. A process that dies anywhere after that leaves the job on the claims; whoever takes
 * them over follows the job (closes it if its upload was answered and it is still Open, aborts it
 * if not), reads its results and settles the claims. The same rows are never uploaded into a
 * second job while the first may still write them.
 *
 * Each row ends as Salesforce's result says, matched by external id: created or updated
 * (completed, with the record's mark), refused (failed, nothing written), or unprocessed (the job
 * ended before it: failed as surely unwritten, so the same action next time sends it again).
 * A job that could not be followed to its end (a timeout while Salesforce goes on processing it,
 * the CRM unreachable) reports its rows failed and leaves their claims, note and all, to run out
 * their lease (neither renewed nor given back): while the job may still write those records, a
 * new event of one of them waits for the claim (record-hold.ts) instead of racing the job, and the
 * next holder (at once, when this process has ended on the same host) follows the same job. A job that can no longer be read (deleted) is reported and
 * recorded as a failure that may have written: only a retry of that failure sends the rows again.
 */
import type { ActivityWrite, BulkHooks, BulkJobRef, BulkLane, BulkRowResult, RecordWrite } from '../adapter.js';
import { planBatches, type Batch } from '../batcher.js';
import { CrmError, CrmErrorKind } from '../errors.js';
import { bulkNote } from './bulk-note.js';
import { ClaimLostError } from './lease-keeper.js';
import { heldParents } from './parent-held.js';
import { openRound } from './round.js';
import { completeEntries, failEntries, giveBack, releaseEntries } from './settle.js';
import type { Call, Decided, EngineContext, Held } from './types.js';
import { writtenGroup } from './written.js';

/** What the lane settled, and the items it left to the batch calls. */
export interface BulkStage {
  decided: Decided[];
  rest: Held[];
}

/** Items of one object's upserts, one group per record (writes to one record coalesced). */
type Groups = Held[][];

/** How the groups of one job (or one fresh upload) ended, before they are settled. */
interface Sorted {
  done: Decided[];
  /** Refused by the CRM, or never processed: nothing written. */
  unsent: Decided[];
  /** No answer for the row, or the job can no longer be read: it may have been written. */
  failed: Decided[];
  /** Not settled, nothing of them sent or their job over: reported, claims given back. */
  back: Decided[];
  /** Not settled, their job may still be writing them: reported failed, claims left to their lease. */
  running: Decided[];
  lost: Decided[];
}

const sorted = (): Sorted => ({ done: [], unsent: [], failed: [], back: [], running: [], lost: [] });

/** A group given back because another worker holds (part of) it now. */
const inFlight = (group: readonly Held[], attempts: number): Decided[] => group.map((item) => ({ item, outcome: { key: item.key, status: 'in_flight', attempts } }));

const failedWith = (group: readonly Held[], error: CrmError): Decided[] => group.map((item) => ({ item, outcome: { key: item.key, status: 'failed', error: error.toJSON(), attempts: 1 } }));

const laneError = (ctx: EngineContext, message: string, vendorCode: string, kind: CrmError['kind'] = CrmErrorKind.transient) => new CrmError(message, { vendor: ctx.adapter.name, kind, vendorCode });

/**
 * A row the job ended before (an aborted job, one failed whole): nothing of it was written. The
 * job's own error says why, and the lane says whether sending the row again can help (a job whose
 * data or header the CRM refused fails the same way again).
 */
function unprocessed(ctx: EngineContext, why: { reason: string; retryable: boolean } | undefined): CrmError {
  const said = why?.reason ? ` (the job: ${why.reason})` : '';
  const again = why?.retryable !== false;
  return laneError(ctx, `the Bulk job ended before this row was processed${said}; nothing of it was written${again ? ', and the same action sends it again' : ''}`, 'BULK_ROW_UNPROCESSED', again ? CrmErrorKind.transient : CrmErrorKind.permanent);
}

/** The one write each group sends (values merged in event order, links, the record's known id). */
function writesOf(op: Batch<Held>['op'], object: string, groups: Groups): (RecordWrite | ActivityWrite)[] {
  const batch: Batch<Held> = { op, object, groups };
  return openRound(batch, groups, { memo: new Map() }, { suspect: new Set(), inherited: new Set(), heldAbsent: new Set() }).writes;
}

/** What a group's row is matched by in the job's results: a record's external id, an activity's key. */
const rowId = (group: readonly Held[]): string => (group[0]!.op === 'upsert' ? group[0]!.action.externalId! : group[0]!.key);
const writeId = (w: RecordWrite | ActivityWrite): string => ('externalId' in w ? w.externalId : w.key);

/** The lane's upsert for this op: records by external id, activities by key. */
function laneUpsert(lane: BulkLane, op: Batch<Held>['op'], object: string, writes: (RecordWrite | ActivityWrite)[], hooks: BulkHooks): Promise<Map<string, BulkRowResult>> {
  return op === 'upsert' ? lane.upsert(object, writes as RecordWrite[], hooks) : lane.upsertActivities!(object, writes as ActivityWrite[], hooks);
}

/** Sort each group by its row's end. `absent`: what a row with no end in the results means. */
function sortRows(ctx: EngineContext, groups: Groups, results: ReadonlyMap<string, BulkRowResult>, absent: 'unprocessed' | 'unknown', out: Sorted, again: Groups, why?: Map<Held[], { reason: string; retryable: boolean }>): void {
  for (const group of groups) {
    const r = results.get(rowId(group));
    if (r?.ok) out.done.push(...writtenGroup(group[0]!.op, group, r, 1));
    else if (r && !('unprocessed' in r)) out.unsent.push(...failedWith(group, r.error));
    else if (r || absent === 'unprocessed') {
      again.push(group);
      if (r) why?.set(group, { reason: r.reason, retryable: r.retryable });
    }
    else out.failed.push(...failedWith(group, laneError(ctx, 'the Bulk job ended without a result for this row; it may or may not have been written', 'BULK_ROW_NO_RESULT')));
  }
}

/** While the Sync is paused on a spent quota nothing is sent: the groups are reported with the pause's error and given back (a noted job kept). */
function paused(ctx: EngineContext, groups: Groups, out: Sorted): boolean {
  try {
    ctx.quota.check();
    return false;
  } catch (err) {
    const crm = err instanceof CrmError ? err : ctx.adapter.classifyError(err);
    for (const group of groups) out.back.push(...failedWith(group, crm));
    return true;
  }
}

/** Follow the jobs earlier holders recorded; groups whose rows were never processed come back in `again`. */
async function followJobs(ctx: EngineContext, lane: BulkLane, object: string, groups: Groups, out: Sorted, again: Groups): Promise<void> {
  const jobs = new Map<string, { job: BulkJobRef; groups: Groups }>();
  for (const group of groups) {
    const job = group.find((i) => i.bulkJob)!.bulkJob!;
    const entry = jobs.get(job.id) ?? { job, groups: [] };
    // One claim of the group may have recorded the upload; any says the rows were sent whole.
    entry.job = { id: job.id, uploaded: entry.job.uploaded || job.uploaded };
    entry.groups.push(group);
    jobs.set(job.id, entry);
  }
  for (const { job, groups: mine } of jobs.values()) {
    if (paused(ctx, mine, out)) continue;
    let results: Map<string, BulkRowResult>;
    try {
      results = await lane.follow(object, job, writesOf(mine[0]![0]!.op, object, mine));
    } catch (err) {
      const crm = err instanceof CrmError ? err : ctx.adapter.classifyError(err);
      ctx.quota.note(crm);
      // A job that can still be read is followed next time; one that cannot is reported, and sent again only by a retry.
      for (const group of mine) (crm.kind === 'quota' ? out.back : crm.retryable ? out.running : out.failed).push(...failedWith(group, crm));
      continue;
    }
    // An upload never answered was never closed: the lane aborted the job, and none of its rows was processed.
    sortRows(ctx, mine, results, job.uploaded ? 'unknown' : 'unprocessed', out, again);
  }
}

/** Upload these groups in new jobs, each noted on its rows' claims before its data leaves. */
async function uploadJobs(ctx: EngineContext, call: Call, lane: BulkLane, op: Batch<Held>['op'], object: string, groups: Groups, out: Sorted): Promise<void> {
  if (paused(ctx, groups, out)) return;
  const lostAtStart = await call.keeper.confirm(groups.flat().map((i) => i.key));
  const live: Groups = [];
  for (const group of groups) {
    if (!group.some((i) => lostAtStart.has(i.key))) live.push(group);
    else out.lost.push(...inFlight(group, 0));
  }
  if (live.length === 0) return;
  const writes = writesOf(op, object, live);
  const byId = new Map(writes.map((w, i) => [writeId(w), live[i]!]));
  const noted = new Set<Held[]>();
  let lost = new Set<string>();
  const note = async (job: BulkJobRef, ids: readonly string[]) => {
    const mine = ids.map((id) => byId.get(id)!);
    const items = mine.flat();
    const ok = await ctx.ledger.note!(items.map((i) => ({ key: i.key, token: i.token, note: bulkNote(job, i.entryAttempts) })), await ctx.clock.now());
    mine.forEach((g) => noted.add(g));
    const refused = items.filter((_, j) => !ok[j]).map((i) => i.key);
    if (refused.length > 0) {
      lost = new Set(refused);
      throw new ClaimLostError(refused);
    }
  };
  let results: Map<string, BulkRowResult>;
  try {
    results = await laneUpsert(lane, op, object, writes, { onJob: note, onUploaded: note });
  } catch (err) {
    if (!(err instanceof ClaimLostError) && !(err instanceof CrmError)) {
      // Not the CRM's answer (the ledger failed, the process is stopping): the error stands. Rows of a
      // job that may run on keep their claims to the lease; the others go back, best effort.
      const mayRun = live.filter((g) => noted.has(g)).flat();
      call.keeper.drop(mayRun.map((i) => i.key));
      await giveBack(ctx, call, live.filter((g) => !noted.has(g)).flat());
      throw err;
    }
    if (err instanceof CrmError) ctx.quota.note(err);
    for (const group of live) {
      const gone = group.some((i) => lost.has(i.key));
      // Another worker holds part of the job now: the lane aborted it before its upload, and the rest is given back.
      if (gone || err instanceof ClaimLostError) (gone ? out.lost : out.back).push(...inFlight(group, 1));
      // A quota refusal ends the job (refused at its creation, or failed on the allowance): nothing of it runs on.
      else (noted.has(group) && err.kind !== 'quota' ? out.running : out.back).push(...failedWith(group, err));
    }
    return;
  }
  const again: Groups = [];
  const why = new Map<Held[], { reason: string; retryable: boolean }>();
  sortRows(ctx, live, results, 'unknown', out, again, why);
  for (const group of again) out.unsent.push(...failedWith(group, unprocessed(ctx, why.get(group))));
}

/**
 * Settle what the lane decided. A Task refused because its parent is missing while another live
 * worker is writing that parent (or wrote it after `lookedAt`, ledger time before the job's rows
 * could be matched to parents) waits for it, `in_flight`, as through batch calls (parent-held.ts).
 */
async function settle(ctx: EngineContext, call: Call, out: Sorted, lookedAt: number): Promise<Decided[]> {
  const held = await heldParents(ctx, out.unsent, () => lookedAt);
  if (held.size > 0) {
    out.unsent = out.unsent.filter((d) => !held.has(d));
    out.back.push(...held.values());
    // Their job is over and judged: the claims go back without it, so the next holder sends them again.
    const items = [...held.keys()].map((d) => d.item as Held);
    await ctx.ledger.note!(items.map((i) => ({ key: i.key, token: i.token, note: null })), await ctx.clock.now());
  }
  await completeEntries(ctx, call, out.done);
  await failEntries(ctx, call, out.unsent, false);
  await failEntries(ctx, call, out.failed, true);
  call.keeper.drop(out.running.map((d) => d.item.key));
  const stillHeld = [...out.back, ...out.lost].filter((d) => !call.keeper.lost(d.item.key));
  await releaseEntries(ctx, call, stillHeld.map((d) => d.item as Held));
  call.keeper.drop(out.lost.map((d) => d.item.key));
  return [...out.done, ...out.unsent, ...out.failed, ...out.back, ...out.running, ...out.lost];
}

/** Whether this call sends `count` records of an object through the lane. */
const takes = (call: Call, lane: BulkLane, count: number) => count > 0 && (call.bulk === 'always' || ((call.bulk ?? 'auto') === 'auto' && count >= lane.minRecords));

/**
 * The lane for one object's upserts: jobs recorded by earlier holders are followed first (their
 * unprocessed rows join the rest), then the rest is uploaded when the call's choice takes it.
 */
async function objectLane(ctx: EngineContext, call: Call, lane: BulkLane, op: Batch<Held>['op'], object: string, items: readonly Held[]): Promise<BulkStage> {
  const groups = planBatches(items, Number.MAX_SAFE_INTEGER)[0]!.groups;
  const inherited = groups.filter((g) => g.some((i) => i.bulkJob));
  const fresh = groups.filter((g) => !g.some((i) => i.bulkJob));
  if (inherited.length === 0 && !takes(call, lane, fresh.length)) return { decided: [], rest: [...items] };
  const out = sorted();
  const again: Groups = [];
  // A job an earlier holder ran matched its rows to parents at a time this one cannot know.
  const lookedAt = inherited.length > 0 ? -Infinity : ctx.clock.peek();
  if (inherited.length > 0) await followJobs(ctx, lane, object, inherited, out, again);
  const next = [...again, ...fresh];
  const rest = takes(call, lane, next.length) ? [] : next.flat();
  if (rest.length === 0 && next.length > 0) await uploadJobs(ctx, call, lane, op, object, next, out);
  return { decided: await settle(ctx, call, out, lookedAt), rest };
}

/**
 * Whether the lane takes this item: a record upsert of an object it accepts, or an activity create
 * upserted on its key (never a keyless create: its dedupe-window slot belongs to the batch calls).
 */
function laneTakes(ctx: EngineContext, lane: BulkLane, item: Held): boolean {
  if (item.op === 'upsert') return lane.accepts(item.object);
  return ctx.adapter.capabilities.nativeActivityUpsert && lane.upsertActivities !== undefined && lane.acceptsActivities?.(item.object) === true && !item.keyless && item.slot === undefined;
}

/**
 * Of these items (one link level's upserts, or the creates), send those the bulk lane takes; the
 * rest is left to the batch calls. Objects go one after another, each in its own jobs.
 */
export async function bulkStage(ctx: EngineContext, call: Call, items: readonly Held[]): Promise<BulkStage> {
  const lane = ctx.adapter.bulkLane;
  if (!lane || !ctx.ledger.note || items.length === 0) return { decided: [], rest: [...items] };
  const byObject = new Map<string, Held[]>();
  const rest: Held[] = [];
  for (const item of items) {
    const id = `${item.op}\u0000${item.object}`;
    if (!laneTakes(ctx, lane, item)) rest.push(item);
    else if (byObject.has(id)) byObject.get(id)!.push(item);
    else byObject.set(id, [item]);
  }
  const decided: Decided[] = [];
  for (const mine of byObject.values()) {
    const done = await objectLane(ctx, call, lane, mine[0]!.op, mine[0]!.object, mine);
    decided.push(...done.decided);
    rest.push(...done.rest);
  }
  return { decided, rest };
}
