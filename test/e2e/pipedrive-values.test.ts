/**
 * Values on Pipedrive: `schema pull` reads the v2 field definitions; an enumeration takes its
 * option id and a set an array of them, a model's label mapped to the id under the rules of every
 * CRM; a bad value is rejected before any request; the daily budget stops the run without a retry storm.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pullPipedriveFields } from '../../adapters/pipedrive/pipedrive-fields.js';
import type { PipedriveAdapterOptions } from '../../adapters/pipedrive/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { fast, harness, statuses, type Harness } from './pipedrive-helpers.js';

const objects: PipedriveAdapterOptions['objects'] = {
  contact: { kind: 'record', entity: 'person', idField: 'ai_external_id', fields: ['name', 'Lead status', 'Interests', 'Score'] },
};
const person = (n: number, fields: Record<string, string | number | null>) => ({ source: 'pd-values', eventId: `v-${n}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `Person ${n}`, ...fields } });

describe('Pipedrive values (fakePipedrive over loopback)', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.stop());

  async function withDefinitions() {
    h = await harness({ searchLagMs: 0 }, { objects });
    h.fake.defineField('person', 'Lead status', 'enum', ['Qualified', 'Unqualified', 'Qualified lead']);
    h.fake.defineField('person', 'Interests', 'set', ['Pipes', 'Valves', 'Pumps']);
    h.fake.defineField('person', 'Score', 'double');
    const file = await pullPipedriveFields({ objects }, (entity) => h!.adapter.readFields(entity), new Date('2026-12-06T08:00:00Z'));
    return { file, adapter: h.another({ fieldDefinitions: file }) };
  }

  it('pulls enumeration and set fields with their option ids and labels', async () => {
    const { file } = await withDefinitions();
    const status = h!.fake.field('person', 'Lead status')!;
    expect(file).toMatchObject({ crm: 'pipedrive', apiVersion: 'v2', pulledAt: '2026-12-06' });
    expect(file.objects.contact!['Lead status']).toEqual({ type: 'enumeration', options: status.options!.map((o) => ({ value: String(o.id), label: o.label })) });
    expect(file.objects.contact!.Interests).toMatchObject({ type: 'enumeration', multiple: true });
    expect(file.objects.contact!.Score).toEqual({ type: 'number' });
  });

  it('writes a label as its option id, a set as an array of ids, a number as a number', async () => {
    const { adapter } = await withDefinitions();
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const outcome = await sync.apply(person(1, { 'Lead status': 'Qualified', Interests: 'Pipes;Pumps', Score: '4.5' }));
    expect(outcome.status).toBe('created');
    const ids = (name: string) => Object.fromEntries(h!.fake.field('person', name)!.options!.map((o) => [o.label, o.id]));
    const [p] = h!.fake.records('person');
    expect(h!.fake.customValue(p!, 'Lead status')).toBe(ids('Lead status').Qualified);
    expect(h!.fake.customValue(p!, 'Interests')).toEqual([ids('Interests').Pipes, ids('Interests').Pumps]);
    expect(h!.fake.customValue(p!, 'Score')).toBe(4.5);
  });

  it('rejects a value that is no option before any request, naming the field and the allowed values', async () => {
    const { adapter } = await withDefinitions();
    h!.fake.core.resetLog();
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const outcome = await sync.apply(person(2, { 'Lead status': 'Maybe' }));
    expect(outcome.status).toBe('rejected');
    expect(outcome.error!.message).toContain('Lead status');
    // The allowed values are the option ids Pipedrive takes (a label names one of them).
    for (const o of h!.fake.field('person', 'Lead status')!.options!) expect(outcome.error!.message).toContain(`"${o.id}"`);
    expect(h!.fake.count()).toBe(0);
  });

  it('clears a set with null (Pipedrive refuses an empty array)', async () => {
    const { adapter } = await withDefinitions();
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.apply(person(3, { Interests: 'Valves' }));
    const cleared = await sync.apply({ ...person(3, { Interests: null }), eventId: 'v-3-clear' });
    expect(cleared.status).toBe('updated');
    expect(h!.fake.customValue(h!.fake.records('person')[0]!, 'Interests')).toBeNull();
  });

  it('stops the run on the daily budget, with the outcome saying so, and no retry storm', async () => {
    h = await harness({ searchLagMs: 0, dailyBudget: 5 });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany(Array.from({ length: 6 }, (_, n) => ({ source: 'pd-daily', eventId: `d-${n}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `P ${n}` } })));
    const failed = outcomes.filter((o) => o.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.error!.message).toMatch(/daily request budget/);
    expect(statuses(outcomes).created ?? 0).toBeLessThan(6);
    // 5 answered within the budget, then one refusal (perhaps one more as the stop spreads): no storm.
    expect(h.fake.count()).toBeLessThanOrEqual(7);
  });
});
