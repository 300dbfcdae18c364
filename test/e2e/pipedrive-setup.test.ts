/**
 * check-setup on Pipedrive: the id field must be a varchar custom field; `--create` makes a missing one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkPipedriveSetup } from '../../adapters/pipedrive/pipedrive-setup.js';
import type { PipedriveConfig } from '../../adapters/pipedrive/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { fast, harness, objects, type Harness } from './pipedrive-helpers.js';

const section: PipedriveConfig = { objects };

describe('Pipedrive check-setup (fakePipedrive over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  it('passes on the fake as it starts: each id field a varchar custom field, every allowlisted field there', async () => {
    h = await harness();
    const report = await checkPipedriveSetup(section, h.adapter, false);
    expect(report.findings.filter((f) => f.status !== 'ok' && f.status !== 'info')).toEqual([]);
    expect(report.findings.find((f) => f.object === 'contact' && f.role === '(varchar id field)')).toMatchObject({ status: 'ok', target: 'person.ai_external_id' });
  });

  it('reports a missing id field, creates it with --create, and the adapter then writes through it', async () => {
    h = await harness({ searchLagMs: 0 });
    h.fake.removeField('person', 'ai_external_id');
    const before = await checkPipedriveSetup(section, h.adapter, false);
    expect(before.findings.find((f) => f.object === 'contact' && f.role === '(varchar id field)')).toMatchObject({ status: 'missing' });
    const created = await checkPipedriveSetup(section, h.adapter, true);
    expect(created.findings.find((f) => f.object === 'contact' && f.role === '(varchar id field)')).toMatchObject({ status: 'created' });
    expect(h.fake.field('person', 'ai_external_id')).toMatchObject({ field_type: 'varchar', is_custom_field: true });
    const outcome = await createSync({ adapter: h.another(), ledger: openLedger('memory:'), retry: fast }).apply({ source: 's', eventId: 'e', op: 'upsert', object: 'contact', externalId: 'P-1', fields: { name: 'Ada' } });
    expect(outcome.status).toBe('created');
  });

  it('refuses an id field that is not varchar (not searchable exactly)', async () => {
    h = await harness();
    h.fake.removeField('deal', 'ai_external_id');
    h.fake.defineField('deal', 'ai_external_id', 'double');
    const report = await checkPipedriveSetup(section, h.adapter, true);
    expect(report.findings.find((f) => f.object === 'deal' && f.role === '(varchar id field)')).toMatchObject({ status: 'problem' });
  });

  it('names an allowlisted field Pipedrive does not have', async () => {
    h = await harness();
    const report = await checkPipedriveSetup({ objects: { ...objects, company: { kind: 'record', entity: 'organization', idField: 'ai_external_id', fields: ['name', 'Tier'] } } }, h.adapter, false);
    expect(report.findings.find((f) => f.target === 'organization.Tier')).toMatchObject({ status: 'missing' });
  });
});
