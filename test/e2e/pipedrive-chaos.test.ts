/**
 * 500 new persons into a Pipedrive whose search index lags writes by 2 s and which loses 10% of
 * create answers after committing them: 500 persons, 0 duplicates. A person whose search keeps
 * answering 503 is not created (a failed search is unknown, never "not found") and is created once
 * when the failed action is retried later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { externalIds, harness, statuses, type Harness } from './pipedrive-helpers.js';

const PERSONS = 500;
const person = (n: number) => ({ source: 'pd-chaos', eventId: `c-${n}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `Person ${n}`, email: `p${n}@example.test` } });

describe('500 new persons through a lagging index and lost create answers (fakePipedrive over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  it('writes 500 persons, 0 duplicates; the one whose search answered 503 is created only when retried', async () => {
    h = await harness({ searchLagMs: 2_000 });
    h.fake.setFaults({ seed: 34, lostResponse: 0.1, match: (req) => req.method === 'POST' && req.path === '/api/v2/persons' });
    let searchDown = true;
    h.fake.failNext('server_error', { endpoint: 'itemSearch', times: 1_000_000, match: (req) => searchDown && req.query.get('term') === 'P-250' });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, concurrency: 4, retry: { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 } });
    const outcomes = await sync.applyMany(Array.from({ length: PERSONS }, (_, n) => person(n)));
    expect(statuses(outcomes)).toEqual({ created: PERSONS - 1, failed: 1 });
    expect(outcomes[250]!.error!.retryable).toBe(true);
    expect(h.fake.core.faultCounts().lost_response).toBeGreaterThan(30);
    const ids = externalIds(h.fake, 'person');
    expect(ids).toHaveLength(PERSONS - 1);
    expect(ids).not.toContain('P-250');

    searchDown = false;
    const retried = await sync.apply(person(250));
    expect(retried.status).toBe('created');
    const all = externalIds(h.fake, 'person');
    expect(all).toHaveLength(PERSONS);
    expect(new Set(all).size).toBe(PERSONS);
    // Each lost answer cost a lookup, never a second create.
    expect(h.fake.count('POST /api/v2/persons')).toBe(PERSONS);
    await sync.close();
  });
});
