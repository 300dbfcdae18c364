import { describe, expect, it } from 'vitest';
import { RecordStore } from '../../adapters/fake-store.js';

interface Row { id: string; email?: string; tag?: string }
const store = () => {
  const s = new RecordStore<Row>((r) => r.id);
  s.ensureIndex('email', (r) => r.email?.toLowerCase());
  return s;
};

describe('RecordStore', () => {
  it('finds records by an index key, oldest first, and follows puts and deletes', () => {
    const s = store();
    s.put({ id: '1', email: 'A@x' });
    s.put({ id: '2', email: 'b@x' });
    s.put({ id: '3', email: 'a@X' });
    expect(s.lookup('email', 'a@x').map((r) => r.id)).toEqual(['1', '3']);
    s.put({ id: '1', email: 'c@x' });
    expect(s.lookup('email', 'a@x').map((r) => r.id)).toEqual(['3']);
    expect([...s.values()].map((r) => r.id)).toEqual(['1', '2', '3']);
    s.delete('3');
    expect(s.lookup('email', 'a@x')).toEqual([]);
    expect(s.lookup('nope', 'a@x')).toEqual([]);
  });

  it('re-indexes a record changed in place and builds a late index from what it holds', () => {
    const s = store();
    const row: Row = { id: '1', email: 'a@x' };
    s.put(row);
    s.put({ id: '2', tag: 't' });
    s.update(row, (r) => { r.email = 'z@x'; r.tag = 't'; });
    expect(s.lookup('email', 'z@x')).toEqual([row]);
    expect(s.lookup('email', 'a@x')).toEqual([]);
    s.ensureIndex('tag', (r) => r.tag);
    expect(s.lookup('tag', 't').map((r) => r.id)).toEqual(['1', '2']);
  });

  it('undoes the puts and deletes since beginUndo, order and indexes included', () => {
    const s = store();
    s.put({ id: '1', email: 'a@x' });
    s.put({ id: '2', email: 'b@x' });
    const undo = s.beginUndo();
    s.put({ id: '1', email: 'changed@x' });
    s.put({ id: '3', email: 'c@x' });
    s.delete('2');
    undo();
    expect([...s.values()]).toEqual([{ id: '1', email: 'a@x' }, { id: '2', email: 'b@x' }]);
    expect(s.lookup('email', 'a@x').map((r) => r.id)).toEqual(['1']);
    expect(s.lookup('email', 'c@x')).toEqual([]);
    expect(s.oldestFirst([s.get('2')!, s.get('1')!, s.get('2')!]).map((r) => r.id)).toEqual(['1', '2']);
  });
});
