import { describe, expect, it } from 'vitest';
import { planBatches } from '../../src/batcher.js';

const up = (object: string, id: string) => ({ op: 'upsert' as const, object, coalesceId: id });
const create = (object: string) => ({ op: 'create' as const, object });

describe('planBatches', () => {
  it('cuts each (object, op) group at the maximum batch size', () => {
    const items = Array.from({ length: 250 }, (_, i) => up('contact', `c${i}`));
    expect(planBatches(items, 100).map((b) => b.groups.length)).toEqual([100, 100, 50]);
  });

  it('puts record upserts before activities, whatever the input order', () => {
    const batches = planBatches([create('note'), up('contact', 'a'), create('task'), up('company', 'x')], 100);
    expect(batches.map((b) => `${b.op}:${b.object}`)).toEqual(['upsert:contact', 'upsert:company', 'create:note', 'create:task']);
  });

  it('merges writes to the same record into one group, in input order', () => {
    const a1 = up('contact', 'a');
    const a2 = up('contact', 'a');
    const b = up('contact', 'b');
    const [batch] = planBatches([a1, b, a2], 100);
    expect(batch!.groups).toEqual([[a1, a2], [b]]);
  });

  it('never merges activities', () => {
    expect(planBatches([create('note'), create('note')], 100)[0]!.groups).toHaveLength(2);
  });
});
