/**
 * Pipedrive's limits: the adapter's default budgets keep a run under the search window (10 per
 * 2 s on every plan) and a burst window, with no 429; a 429 is waited out for its Retry-After
 * before anything else is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pipedriveAdapter } from '../../adapters/pipedrive/index.js';
import { fakePipedrive, type FakePipedrive } from '../../adapters/testing/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { objects, TOKEN } from './pipedrive-helpers.js';

const person = (n: number) => ({ source: 'pd-limits', eventId: `l-${n}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `Person ${n}` } });

describe('Pipedrive rate limits (fakePipedrive over loopback)', () => {
  let fake: FakePipedrive | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  async function open(options: Parameters<typeof fakePipedrive>[0]) {
    fake = fakePipedrive(options);
    const front = await fake.open('loopback');
    close = front.close;
    return front.url;
  }

  it('stays inside the search window and a 20-per-2-s burst window with its default budgets: no 429', async () => {
    const url = await open({ searchLagMs: 0, burstLimit: 20, searchLimit: 10 });
    const adapter = pipedriveAdapter({ apiToken: TOKEN, basePath: url, objects });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), concurrency: 4, retry: { retries: 0, maxRateLimitWaits: 0 } });
    const outcomes = await sync.applyMany(Array.from({ length: 24 }, (_, n) => person(n)));
    expect(outcomes.every((o) => o.status === 'created')).toBe(true);
    expect(fake!.core.log.filter((e) => e.status === 429)).toEqual([]);
    expect(fake!.count('itemSearch')).toBe(24);
  }, 30_000);

  it('sends nothing more until the Retry-After of a 429 has passed', async () => {
    const url = await open({ searchLagMs: 0, burstLimit: false, searchLimit: false, faults: { retryAfterSeconds: 1 } });
    const adapter = pipedriveAdapter({ apiToken: TOKEN, basePath: url, objects });
    fake!.failNext('rate_limit', { endpoint: 'POST /api/v2/persons' });
    const outcome = await createSync({ adapter, ledger: openLedger('memory:') }).apply(person(1));
    expect(outcome.status).toBe('created');
    const log = fake!.core.log;
    const refused = log.findIndex((e) => e.status === 429);
    expect(refused).toBeGreaterThanOrEqual(0);
    expect(log[refused + 1]!.at - log[refused]!.at).toBeGreaterThanOrEqual(950);
    expect(fake!.records('person')).toHaveLength(1);
  });
});
