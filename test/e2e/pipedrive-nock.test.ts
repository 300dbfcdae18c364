/**
 * fakePipedrive's nock front: the adapter's fetch client is intercepted in-process, no socket
 * opened, with the same answers as over loopback (a lost answer included).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pipedriveAdapter } from '../../adapters/pipedrive/index.js';
import { fakePipedrive, type OpenFront } from '../../adapters/testing/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { fast, objects, TOKEN } from './pipedrive-helpers.js';

describe('pipedriveAdapter against fakePipedrive through nock', () => {
  let front: OpenFront | undefined;
  afterEach(async () => front?.close());

  it('writes a person once through a lost answer, and replays it with 0 requests', async () => {
    const fake = fakePipedrive({ searchLagMs: 2_000 });
    front = await fake.open('nock', 'https://acme.pipedrive.com');
    const adapter = pipedriveAdapter({ apiToken: TOKEN, companyDomain: 'acme', objects, recoveryDelaysMs: [10] });
    fake.failNext('lost_response', { endpoint: 'POST /api/v2/persons' });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const action = { source: 's', eventId: 'e', op: 'upsert', object: 'contact', externalId: 'P-1', fields: { name: 'Ada' } };
    expect((await sync.apply(action)).status).toBe('created');
    const requests = fake.count();
    expect((await sync.apply(action)).status).toBe('replayed');
    expect(fake.count()).toBe(requests);
    expect(fake.records('person')).toHaveLength(1);
  });
});
