/**
 * One CHUNK_JOB of a file enqueued by `sync --queue`: a lines chunk is applied with the worker's
 * coalesced applyMany and returns every line's outcome; the gate releases the file's activity
 * chunks (held in the delayed set) once BullMQ ran it, which is after every record chunk, its
 * flow children, completed. Lines another worker holds (`in_flight`) are not reported as such:
 * the settled lines are kept in the job and the job runs again later for the rest.
 */
import { DelayedError, UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { Outcome } from '../outcome.js';
import type { Coalescer } from './coalesce.js';
import type { ChunkJobData, ChunkJobResult, GateChunkData, LinesChunkData } from './jobs.js';

export interface ChunkRunContext {
  coalescer: Coalescer;
  queue: Queue;
  inFlightDelayMs: number;
}

function chunkOf(job: Job): ChunkJobData {
  const data = job.data as Partial<ChunkJobData> | undefined;
  const lines = data?.kind === 'records' || data?.kind === 'activities' ? Array.isArray((data as LinesChunkData).lines) : false;
  const gate = data?.kind === 'gate' && Array.isArray((data as GateChunkData).activities);
  if (data?.v !== 1 || (!lines && !gate)) throw new UnrecoverableError('not a chunk job: data must be { v: 1, kind, file, lines | activities }');
  return data as ChunkJobData;
}

/** Move the activity chunks from the delayed set to wait; ones already released (a gate run twice) are left alone. */
async function release(queue: Queue, gate: GateChunkData): Promise<{ released: number }> {
  let released = 0;
  for (const id of gate.activities) {
    const job = await queue.getJob(id);
    if (!job || !(await job.isDelayed())) continue;
    try {
      await job.promote();
      released += 1;
    } catch (err) {
      // Another run of this gate promoted it between the check and the call.
      if (await job.isDelayed()) throw err;
    }
  }
  return { released };
}

export async function runChunkJob(ctx: ChunkRunContext, job: Job, token: string | undefined): Promise<ChunkJobResult | { released: number }> {
  const data = chunkOf(job);
  if (data.kind === 'gate') return release(ctx.queue, data);
  const settled: Record<string, Outcome> = { ...(data.settled ?? {}) };
  const unsettled = data.lines.filter((l) => !settled[l.line]);
  const { outcomes, apiCalls } = await ctx.coalescer.run(unsettled.map((l) => l.action));
  let held = false;
  unsettled.forEach((l, i) => {
    if (outcomes[i]!.status === 'in_flight') held = true;
    else settled[l.line] = outcomes[i]!;
  });
  const calls = (data.settledCalls ?? 0) + apiCalls;
  if (held) {
    await job.updateData({ ...data, settled, settledCalls: calls });
    await job.moveToDelayed(Date.now() + ctx.inFlightDelayMs, token);
    throw new DelayedError();
  }
  return { outcomes: data.lines.map((l) => ({ line: l.line, outcome: settled[l.line]! })), apiCalls: calls };
}
