/**
 * Reads on Pipedrive (`sync.read`): by external id or a person's email, read-after-write although
 * the search index lags (the recent-update list is read too), several holders answered as
 * `matches`, links with the linked records' external ids.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PipedriveAdapterOptions } from '../../adapters/pipedrive/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { fast, harness, objects, type Harness } from './pipedrive-helpers.js';

const withLookup: PipedriveAdapterOptions['objects'] = { ...objects, contact: { ...objects.contact!, lookupBy: ['email'] } as PipedriveAdapterOptions['objects'][string] };

describe('reads on Pipedrive (fakePipedrive over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  it('reads a person written a moment ago (index lagging 2 s) with its fields and its organization', async () => {
    h = await harness({ searchLagMs: 2_000 }, { objects: withLookup });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.applyMany([
      { source: 's', eventId: 'o', op: 'upsert', object: 'company', externalId: 'acme', fields: { name: 'Acme' } },
      { source: 's', eventId: 'p', op: 'upsert', object: 'contact', externalId: 'P-1', fields: { name: 'Ada', email: 'Ada@Acme.test' }, links: [{ object: 'company', externalId: 'acme' }] },
    ]);
    const [o] = h.fake.records('organization');
    const [p] = h.fake.records('person');
    const read = await sync.read('contact', ['P-1', 'P-404'], { links: true });
    expect(read[0]).toMatchObject({ found: true, recordId: String(p!.id), externalId: 'P-1', fields: { name: 'Ada', email: 'Ada@Acme.test' }, links: [{ object: 'company', recordId: String(o!.id), externalId: 'acme' }] });
    expect(read[1]).toMatchObject({ found: false });
    const byEmail = await sync.read('contact', ['ada@acme.test'], { by: 'email' });
    expect(byEmail[0]).toMatchObject({ found: true, recordId: String(p!.id), externalId: 'P-1' });
  });

  it('reads an older person through the search, and answers two holders of one id as matches', async () => {
    h = await harness({ searchLagMs: 0 }, { objects: withLookup });
    const key = h.fake.field('person', 'ai_external_id')!.field_code;
    h.fake.seed('person', { name: 'One' }, { [key]: 'P-1' });
    h.fake.seed('person', { name: 'Twin A' }, { [key]: 'P-2' });
    h.fake.seed('person', { name: 'Twin B' }, { [key]: 'P-2' });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const read = await sync.read('contact', ['P-1', 'P-2']);
    expect(read[0]).toMatchObject({ found: true, fields: { name: 'One' } });
    expect(read[1]).toMatchObject({ found: false, matches: 2 });
  });
});
