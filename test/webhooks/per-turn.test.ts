/**
 * The receiver's enqueue coalescing: requests reaching the sink in one turn of the event loop share
 * one write; a write in flight never holds back the next turn's; a failed write fails only its callers.
 */
import { describe, expect, it } from 'vitest';
import { perTurn } from '../../src/queue/producer.js';

function recorder() {
  const writes: { jobs: number[]; settle(err?: Error): void }[] = [];
  const write = (jobs: number[]) => new Promise<void>((resolve, reject) => {
    writes.push({ jobs, settle: (err) => (err ? reject(err) : resolve()) });
  });
  return { writes, add: perTurn<number>(write) };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('perTurn', () => {
  it('sends what arrives in one turn as one write, and resolves every caller with it', async () => {
    const { writes, add } = recorder();
    const done: number[] = [];
    const calls = [add([1]), add([2, 3]), add([4])].map((p, i) => p.then(() => done.push(i)));
    expect(writes).toHaveLength(0);
    await turn();
    expect(writes.map((w) => w.jobs)).toEqual([[1, 2, 3, 4]]);
    expect(done).toEqual([]);
    writes[0]!.settle();
    await Promise.all(calls);
    expect(done.sort()).toEqual([0, 1, 2]);
  });

  it('does not hold the next turn behind a write still in flight', async () => {
    const { writes, add } = recorder();
    const first = add([1]);
    await turn();
    const second = add([2]);
    await turn();
    // Both writes are out while the first is unanswered.
    expect(writes.map((w) => w.jobs)).toEqual([[1], [2]]);
    writes[1]!.settle();
    await second;
    writes[0]!.settle();
    await first;
  });

  it('rejects only the callers of the write that failed', async () => {
    const { writes, add } = recorder();
    const a = add([1]);
    const b = add([2]);
    await turn();
    const c = add([3]);
    await turn();
    writes[0]!.settle(new Error('READONLY'));
    writes[1]!.settle();
    await expect(a).rejects.toThrow('READONLY');
    await expect(b).rejects.toThrow('READONLY');
    await expect(c).resolves.toBeUndefined();
  });
});
