/**
 * The two shared ledgers the scaling tests run on: the first Postgres URL that answers and the
 * Redis at REDIS_URL. Each resolves to undefined (skip, with a message) when unreachable, and
 * fails its test file in CI.
 */
export { postgresUrl, redisUrl } from '../helpers/services.js';

/** Write outcomes (the worker that did the work for a key) summed over every worker's final report. */
export function writes(outcomes: unknown): number {
  let n = 0;
  for (const o of outcomes as { counts: Record<string, number> }[]) {
    n += (o.counts.created ?? 0) + (o.counts.updated ?? 0) + (o.counts.unchanged ?? 0);
  }
  return n;
}
