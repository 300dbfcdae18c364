/**
 * The job lock (`sync --job NAME`): one run of a job at a time, across hosts, using nothing but
 * the ledger the job already writes to.
 *
 *   lock    key `job:<name>`                 claimed in_progress with a lease (default 30 s),
 *                                            renewed every lease/3, released at the end.
 *   holder  key `job:<name>:holder:<token>`  written once right after the lock is won and
 *                                            completed with { host, pid, startedAt }; the lock's
 *                                            fencing token names the run that holds it.
 *
 * A second run finds the lock in progress, reads the holder entry of the lock's current token
 * and reports who holds it. A holder killed on this host is taken over at once (its pid is gone);
 * a crashed holder elsewhere stops renewing: its lease runs out and the next run takes the lock
 * over (a higher token). Holder entries expire after a week; `ledger prune` removes them.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { claimKeys } from '../engine/claim-keys.js';
import type { LedgerBackend } from '../ledger/types.js';

export interface JobHolder {
  job: string;
  host: string;
  pid: number;
  startedAt: string;
}

export interface JobLock {
  readonly job: string;
  readonly token: number;
  /** False once a renewal was refused (the lease ran out and someone else may hold it). */
  held(): boolean;
  release(): Promise<void>;
}

export type AcquireResult =
  | { ok: true; lock: JobLock }
  | { ok: false; holder: JobHolder | null; leaseUntil: number | null; token: number };

export interface JobLockOptions {
  /** Lease of the lock, ms; renewed every lease/3. Default 30,000. */
  leaseMs?: number;
  /** How long holder entries are kept, ms. Default 7 days. */
  holderRetentionMs?: number;
  /** Called once when a renewal is refused. */
  onLost?: () => void;
  now?: () => number;
}

export const DEFAULT_JOB_LEASE_MS = 30_000;

export const lockKey = (job: string) => `job:${job}`;
export const holderKey = (job: string, token: number) => `job:${job}:holder:${token}`;
const fingerprint = (...parts: string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32);

export async function acquireJobLock(ledger: LedgerBackend, job: string, options: JobLockOptions = {}): Promise<AcquireResult> {
  const leaseMs = options.leaseMs ?? DEFAULT_JOB_LEASE_MS;
  const now = options.now ?? Date.now;
  const key = lockKey(job);
  // A holder that is a dead process on this host is taken over at once (claimKeys), not after its lease.
  const [claim] = await claimKeys(ledger, [{ key, fingerprint: fingerprint('job', job), leaseMs, retryFailed: true }], now());
  if (claim!.outcome !== 'claimed') {
    const holderEntry = await ledger.get(holderKey(job, claim!.entry.token));
    const holder = (holderEntry?.result as JobHolder | null | undefined) ?? null;
    return { ok: false, holder, leaseUntil: claim!.entry.leaseUntil, token: claim!.entry.token };
  }
  const token = claim!.token!;
  const holder: JobHolder = { job, host: hostname(), pid: process.pid, startedAt: new Date(now()).toISOString() };
  const hKey = holderKey(job, token);
  const [h] = await ledger.claim([{ key: hKey, fingerprint: fingerprint('job-holder', job), leaseMs, retryFailed: true }], now());
  if (h!.outcome === 'claimed') {
    await ledger.complete([{ key: hKey, token: h!.token!, result: { ...holder }, retentionMs: options.holderRetentionMs ?? 7 * 24 * 3_600_000 }], now());
  }

  let held = true;
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = ledger.renew([{ key, token }], leaseMs, now()).then(
      ([ok]) => {
        if (!ok && held) {
          held = false;
          options.onLost?.();
        }
      },
      () => undefined, // a failed renewal is retried on the next tick; the lease still has 2/3 left
    );
  }, Math.max(10, Math.floor(leaseMs / 3)));
  timer.unref();

  return {
    ok: true,
    lock: {
      job,
      token,
      held: () => held,
      async release() {
        clearInterval(timer);
        await renewing;
        if (held) await ledger.release([{ key, token }], now());
        held = false;
      },
    },
  };
}

export function describeHolder(job: string, result: Extract<AcquireResult, { ok: false }>): string {
  const h = result.holder;
  const who = h ? `host ${h.host}, pid ${h.pid}, since ${h.startedAt}` : `an unidentified run (lock token ${result.token})`;
  const until = result.leaseUntil ? `; its lease runs until ${new Date(result.leaseUntil).toISOString()} unless renewed` : '';
  return `job "${job}" is already running: held by ${who}${until}`;
}
