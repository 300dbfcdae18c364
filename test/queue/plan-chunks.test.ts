/** Cutting a file for the queue: records apart from activities, every write of a record in one chunk, stable job ids. */
import { describe, expect, it } from 'vitest';
import { planChunks } from '../../src/queue/chunks.js';
import { chunkJobId, eventJobId } from '../../src/queue/jobs.js';

const upsert = (id: string, line: number) => ({ line, action: { op: 'upsert', object: 'contact', externalId: id, fields: {} } });
const create = (parent: string, line: number) => ({ line, action: { op: 'create', object: 'note', target: { object: 'contact', externalId: parent }, fields: {} } });

describe('planChunks', () => {
  it('puts creates into activity chunks and everything else into record chunks, in file order', () => {
    const lines = [upsert('c1', 1), create('c1', 2), upsert('c2', 3), create('c2', 4), { line: 5, action: { op: 'delete' } }, upsert('c3', 6)];
    const { records, activities } = planChunks(lines, 2);
    expect(records.map((c) => c.map((l) => l.line))).toEqual([[1, 3], [5, 6]]);
    expect(activities.map((c) => c.map((l) => l.line))).toEqual([[2, 4]]);
  });

  it('keeps every upsert of one record in the chunk of its first upsert, so the last line of the file wins', () => {
    const lines = [upsert('c1', 1), upsert('c2', 2), upsert('c3', 3), upsert('c1', 4), upsert('c4', 5)];
    const { records } = planChunks(lines, 2);
    expect(records.map((c) => c.map((l) => l.line))).toEqual([[1, 2, 4], [3, 5]]);
  });
});

describe('job ids', () => {
  it('are the same for the same file and chunk, and valid BullMQ ids (no colon)', () => {
    expect(chunkJobId('abc-500', 'records', 3)).toBe('chunk-abc-500-r3');
    expect(chunkJobId('abc-500', 'activities', 0)).toBe('chunk-abc-500-a0');
    expect(chunkJobId('abc-500', 'gate')).toBe('chunk-abc-500-gate');
    expect(eventJobId({ source: 'zendesk', eventId: 'evt:1' })).not.toContain(':');
  });
});
