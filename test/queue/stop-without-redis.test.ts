/**
 * A stop signal stops, even when the queue's Redis is gone: `crm-upsert worker` and `crm-upsert
 * sync --queue --wait` reach Redis (queue and ledger) through a proxy that is cut, then get
 * SIGTERM. The worker drains, the sync takes its last look, each for at most queue.drainSeconds;
 * each exits 143 with its summary and leaves its jobs on the queue; a fresh worker, Redis
 * restored, finishes them and the CRM holds each record and note once. A second signal exits at
 * once.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { queueConfigSchema } from '../../schemas/queue.js';
import { contactLine, duplicates, ensureBuilt, noteLine, pairsFile, runCli, spawnCli, startFakeHubSpot, tempDir, waitFor, writeHubSpotConfig, type SpawnedCli } from '../cli/helpers.js';
import { redisUrl } from '../helpers/services.js';
import { tcpProxy, type CutMode, type TcpProxy } from '../helpers/tcp-proxy.js';
import { addEvents, drained, modelCalls, queueConfigExtra, spawnWorker, testQueue, ticketEvent, type TestQueue, type WorkerProcess } from './helpers.js';

const redis = await redisUrl();
const DRAIN_SECONDS = 1;
/** What the brief allows past the drain: closing the connections and ending the process. */
const EXIT_WITHIN_MS = (DRAIN_SECONDS + 5) * 1_000;
const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-stop' };

const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;

/** Time from `signal` to the process's exit. */
async function stopTimed(child: import('node:child_process').ChildProcess, done: Promise<{ code: number | null }>, signal: NodeJS.Signals = 'SIGTERM') {
  const started = performance.now();
  child.kill(signal);
  const { code } = await done;
  return { code, ms: Math.round(performance.now() - started) };
}

describe('queue.drainSeconds in the config', () => {
  const url = 'redis://127.0.0.1:6379';
  it('defaults to 10 and takes 0 to 3600 seconds', () => {
    expect(queueConfigSchema.parse({ url }).drainSeconds).toBe(10);
    expect(queueConfigSchema.parse({ url, drainSeconds: 0 }).drainSeconds).toBe(0);
    expect(queueConfigSchema.parse({ url, drainSeconds: 2.5 }).drainSeconds).toBe(2.5);
  });

  it.each([
    [-1, 'must be 0 or more seconds'],
    [3_601, 'must be at most 3600 seconds'],
    ['10', 'must be a number of seconds from 0 to 3600'],
  ])('refuses %j: %s', (drainSeconds, message) => {
    const bad = queueConfigSchema.safeParse({ url, drainSeconds });
    expect(bad.error!.issues[0]).toMatchObject({ path: ['drainSeconds'], message: expect.stringContaining(message) });
  });

  it('makes crm-upsert worker exit 2 naming the field, before it connects', async () => {
    ensureBuilt();
    const dir = tempDir('crm-upsert-drain-');
    const config = writeHubSpotConfig(dir, 'http://127.0.0.1:1', { queue: { url: 'redis://127.0.0.1:1', drainSeconds: -5 } });
    const run = await runCli(['worker', '--config', config], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('queue.drainSeconds: must be 0 or more seconds');
  });
});

describe.skipIf(redis === undefined)('a stop signal while the queue\'s Redis is gone', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  /** Inputs each CRM write endpoint received (batch bodies), counted as the fake dispatches them. */
  const inputs = { contacts: 0, notes: 0 };
  const cleanup: (() => Promise<unknown>)[] = [];
  const processes: { kill(signal: NodeJS.Signals): unknown; exitCode: number | null; signalCode: NodeJS.Signals | null }[] = [];
  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    const dispatch = fake.core.dispatch.bind(fake.core);
    fake.core.dispatch = (req) => {
      const n = (req.body as { inputs?: unknown[] } | undefined)?.inputs?.length ?? 0;
      if (req.path.endsWith('/contacts/batch/upsert')) inputs.contacts += n;
      if (req.path.endsWith('/notes/batch/create')) inputs.notes += n;
      return dispatch(req);
    };
  }, 180_000);
  afterAll(() => server.close());
  afterEach(async () => {
    for (const p of processes.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /** This test's queue and ledger, reached through a proxy that can be cut; drainSeconds small. */
  async function setup(queue: Record<string, unknown> = {}) {
    const tq: TestQueue = testQueue(redis!);
    const proxy: TcpProxy = await tcpProxy({ port: Number(new URL(redis!).port || 6379) });
    cleanup.push(() => tq.drop(), () => proxy.close());
    const dir = tempDir('crm-upsert-stop-');
    const base = queueConfigExtra(tq, { drainSeconds: DRAIN_SECONDS, ...queue });
    const config = writeHubSpotConfig(dir, server.basePath, {
      ...base,
      ledger: proxy.url(tq.ledgerUrl),
      queue: { ...(base.queue as Record<string, unknown>), url: proxy.url(tq.target.url) },
    });
    const calls = join(dir, 'model-calls.txt');
    const worker = async (): Promise<WorkerProcess> => {
      const w = await spawnWorker(config, { ...env, MODEL_CALLS_FILE: calls });
      processes.push(w.child);
      return w;
    };
    const before = { contacts: fake.records('contacts').length, notes: fake.records('notes').length, inputs: { ...inputs } };
    /** What this test added to the CRM: records, and the inputs sent to write them. */
    const written = () => {
      const contacts = fake.records('contacts').slice(before.contacts);
      const notes = fake.records('notes').slice(before.notes);
      return {
        contacts: contacts.length, notes: notes.length,
        duplicates: duplicates(contacts.map((c) => c.properties.ai_external_id)) + duplicates(notes.map((n) => n.properties.crm_upsert_key)),
        inputs: { contacts: inputs.contacts - before.inputs.contacts, notes: inputs.notes - before.inputs.notes },
      };
    };
    return { tq, proxy, dir, config, calls, worker, written };
  }

  /** `sync FILE --queue --wait` through the proxy, resolved once it polls: its stop handler is in place by then. */
  async function syncWaiting(proxy: TcpProxy, tq: TestQueue, dir: string, config: string, pairs: number) {
    const file = join(dir, 'actions.jsonl');
    pairsFile(file, pairs);
    const report = join(dir, 'report.json');
    const run: SpawnedCli = spawnCli(['sync', file, '--config', config, '--queue', proxy.url(tq.target.url), '--wait', '--report', report], { env });
    processes.push(run.child);
    let stderr = '';
    run.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    // Enqueueing closes its connections before the wait opens its own, which then has answers beyond its ready check.
    await waitFor(() => proxy.connections().some((c, i, all) => i > 0 && c.closedAt === undefined && c.answers >= 5 && all.slice(0, i).every((p) => p.closedAt !== undefined)), 20_000);
    return { ...run, report, stderr: () => stderr };
  }

  /** A fresh worker, Redis restored, runs what is left; its own SIGTERM is a normal drained stop. */
  async function finishWithFreshWorker(tq: TestQueue, proxy: TcpProxy, worker: () => Promise<WorkerProcess>) {
    await proxy.restore();
    const fresh = await worker();
    await fresh.ready;
    await drained(tq.queue, 30_000);
    const { code } = await stopTimed(fresh.child, fresh.done);
    expect(code).toBe(143);
    expect(lastLine(fresh.stdout())).toMatchObject({ command: 'worker', stopped: 'SIGTERM', drained: true, exitCode: 143 });
  }

  it.each<CutMode>(['refuse', 'blackhole'])('crm-upsert worker exits 143 within drainSeconds + 5 s with Redis cut (%s), and its jobs are finished once by the next worker', async (mode) => {
    const { tq, proxy, calls, worker, written } = await setup({ concurrency: 4 });
    const EVENTS = 3;
    // Tickets of their own per mode: a contact or note another test wrote would be found, not written.
    const first = mode === 'refuse' ? 41_000 : 41_100;
    await addEvents(tq.queue, Array.from({ length: EVENTS }, (_, i) => ticketEvent(first + i, { modelMs: 1_500 })));
    const w = await worker();
    await w.ready;
    // Every job is in its model call: running, nothing sent to the CRM yet.
    await waitFor(() => modelCalls(calls).size === EVENTS, 20_000);
    await proxy.cut(mode);
    const { code, ms } = await stopTimed(w.child, w.done);

    expect(code).toBe(143);
    expect(ms).toBeLessThan(EXIT_WITHIN_MS);
    expect(w.stderr()).toContain(`SIGTERM: finishing the jobs in progress (at most ${DRAIN_SECONDS} s)`);
    expect(w.stderr()).toMatch(/did not finish within 1 s \(queue\.drainSeconds\)/);
    expect(lastLine(w.stdout())).toMatchObject({ command: 'worker', queue: tq.target.name, completed: 0, stopped: 'SIGTERM', drained: false, exitCode: 143 });
    // Nothing was marked done, nothing reached the CRM, every job is still on the queue.
    expect(written()).toEqual({ contacts: 0, notes: 0, duplicates: 0, inputs: { contacts: 0, notes: 0 } });
    const left = await tq.queue.getJobCounts('completed', 'failed', 'active', 'waiting', 'delayed');
    expect(left.completed + left.failed).toBe(0);
    expect(left.active + left.waiting + left.delayed).toBe(EVENTS);

    await finishWithFreshWorker(tq, proxy, worker);
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: EVENTS, failed: 0 });
    expect(written()).toEqual({ contacts: EVENTS, notes: EVENTS, duplicates: 0, inputs: { contacts: EVENTS, notes: EVENTS } });
    console.log(`[measured] worker, Redis cut (${mode}): SIGTERM to exit ${ms} ms (drainSeconds ${DRAIN_SECONDS})`);
  }, 60_000);

  it('crm-upsert sync --queue --wait exits 143 within drainSeconds + 5 s with Redis cut while it polls, its chunks left for the workers', async () => {
    const { tq, proxy, dir, config, worker, written } = await setup();
    const PAIRS = 5;
    const run = await syncWaiting(proxy, tq, dir, config, PAIRS);
    await proxy.cut('blackhole');
    const { code, ms } = await stopTimed(run.child, run.done);
    const result = await run.done;

    expect(code).toBe(143);
    expect(ms).toBeLessThan(EXIT_WITHIN_MS);
    expect(result.stderr).toContain(`SIGTERM: one last look at the queue (at most ${DRAIN_SECONDS} s)`);
    expect(result.stderr).toContain('stopped waiting; the chunks stay on the queue');
    expect(lastLine(result.stdout)).toMatchObject({ command: 'sync', queue: tq.target.name, added: true, stopped: 'SIGTERM', unsettled: 2 * PAIRS, exitCode: 143 });
    expect(JSON.parse(readFileSync(run.report, 'utf8'))).toMatchObject({ stopped: { reason: 'SIGTERM', unsettledLines: { first: 1, last: 2 * PAIRS, count: 2 * PAIRS } } });
    expect(written()).toEqual({ contacts: 0, notes: 0, duplicates: 0, inputs: { contacts: 0, notes: 0 } });
    // The record chunk waits, the gate waits for it, the activity chunk is held for the gate.
    expect(await tq.queue.getJobCounts('waiting', 'waiting-children', 'delayed', 'completed')).toEqual({ waiting: 1, 'waiting-children': 1, delayed: 1, completed: 0 });

    await finishWithFreshWorker(tq, proxy, worker);
    expect(await tq.queue.getJobCounts('completed', 'failed')).toEqual({ completed: 3, failed: 0 });
    expect(written()).toEqual({ contacts: PAIRS, notes: PAIRS, duplicates: 0, inputs: { contacts: PAIRS, notes: PAIRS } });
    console.log(`[measured] sync --queue --wait, Redis cut: SIGTERM to exit ${ms} ms (drainSeconds ${DRAIN_SECONDS})`);
  }, 60_000);

  it('crm-upsert sync --queue stopped while adding its file to a Redis that is gone: exit 143 with its summary, and adding it again later adds it once', async () => {
    const { tq, proxy, dir, config, worker, written } = await setup();
    const PAIRS = 4;
    const file = join(dir, 'actions.jsonl');
    // Records of its own: one another test wrote would be updated, not added.
    writeFileSync(file, `${Array.from({ length: PAIRS }, (_, k) => [contactLine(900 + k), noteLine(900 + k)].join('\n')).join('\n')}\n`);
    await proxy.cut('blackhole');
    const run: SpawnedCli = spawnCli(['sync', file, '--config', config, '--queue', proxy.url(tq.target.url)], { env });
    processes.push(run.child);
    let stderr = '';
    run.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    // It is adding: its connection to the queue is open and unanswered.
    await waitFor(() => proxy.blackholed() > 0, 20_000);
    const { code, ms } = await stopTimed(run.child, run.done);
    const result = await run.done;

    expect(code).toBe(143);
    expect(ms).toBeLessThan(EXIT_WITHIN_MS);
    expect(stderr).toContain(`SIGTERM: letting the add finish (at most ${DRAIN_SECONDS} s), then stopping`);
    expect(stderr).toContain('part of it may be on the queue; sync it again: its chunks have the same ids');
    expect(lastLine(result.stdout)).toMatchObject({ command: 'sync', queue: tq.target.name, lines: 2 * PAIRS, added: false, stopped: 'SIGTERM', exitCode: 143 });

    await proxy.restore();
    const again = await runCli(['sync', file, '--config', config, '--queue', proxy.url(tq.target.url)], { env });
    expect(again.code).toBe(0);
    expect(lastLine(again.stdout)).toMatchObject({ added: true, chunks: { records: 1, activities: 1 }, exitCode: 0 });
    const fresh = await worker();
    await fresh.ready;
    await drained(tq.queue, 30_000);
    expect(written()).toEqual({ contacts: PAIRS, notes: PAIRS, duplicates: 0, inputs: { contacts: PAIRS, notes: PAIRS } });
    console.log(`[measured] sync --queue, Redis cut while adding: SIGTERM to exit ${ms} ms (drainSeconds ${DRAIN_SECONDS})`);
  }, 60_000);

  it.each(['worker', 'sync --queue --wait'])('%s exits at once on a second SIGTERM while the first waits on a Redis that is gone', async (command) => {
    const { tq, proxy, dir, config, calls, worker } = await setup({ drainSeconds: 60 });
    let run: { child: import('node:child_process').ChildProcess; done: Promise<{ code: number | null }>; stderr(): string };
    if (command === 'worker') {
      await addEvents(tq.queue, [ticketEvent(42_000, { modelMs: 1_500 })]);
      run = await worker();
      await (run as WorkerProcess).ready;
      await waitFor(() => modelCalls(calls).size === 1, 20_000);
    } else run = await syncWaiting(proxy, tq, dir, config, 2);
    await proxy.cut('blackhole');
    run.child.kill('SIGTERM');
    // The first signal is handled (the stop began and waits on Redis) before the second is sent.
    await waitFor(() => run.stderr().includes('send again to exit now'), 10_000);
    const { code, ms } = await stopTimed(run.child, run.done);

    expect(code).toBe(143);
    expect(ms).toBeLessThan(1_000);
    console.log(`[measured] ${command}, Redis cut: second SIGTERM to exit ${ms} ms`);
  }, 60_000);
});
