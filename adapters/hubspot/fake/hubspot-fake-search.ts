/**
 * POST /crm/v3/objects/{objectType}/search over fakeHubSpot's records: filter groups OR-ed, filters
 * AND-ed, records visible only once older than the search index lag, pages of at most 200.
 */
import type { FakeResponse } from '../../testing/fake-http.js';
import type { RecordStore } from '../../fake-store.js';
import { asArray, asBody, type Body, type StoredRecord } from './hubspot-fake-records.js';

const matches = (r: StoredRecord, f: Body): boolean => {
  const v = r.properties.get(String(f.propertyName));
  const want = f.value === undefined ? undefined : String(f.value);
  switch (f.operator) {
    case 'EQ': return v === want;
    case 'NEQ': return v !== want;
    case 'IN': return asArray(f.values).map(String).includes(v ?? '\u0000');
    case 'NOT_IN': return !asArray(f.values).map(String).includes(v ?? '\u0000');
    case 'HAS_PROPERTY': return v !== undefined && v !== '';
    case 'NOT_HAS_PROPERTY': return v === undefined || v === '';
    case 'CONTAINS_TOKEN': return v !== undefined && want !== undefined && v.toLowerCase().includes(want.replace(/\*/g, '').toLowerCase());
    default: return false;
  }
};

/**
 * The records a search can match: when every filter group pins a property to values (EQ, IN),
 * the union of those values' index entries, oldest first; otherwise every record.
 */
function candidates(records: RecordStore<StoredRecord>, groups: Body[][], index: (name: string) => void): StoredRecord[] {
  if (groups.length === 0) return [...records.values()];
  const found: StoredRecord[] = [];
  for (const filters of groups) {
    const pin = filters.find((f) => (f.operator === 'EQ' && f.value !== undefined) || (f.operator === 'IN' && !asArray(f.values).map(String).includes('\u0000')));
    if (!pin) return [...records.values()];
    const name = String(pin.propertyName);
    index(name);
    for (const value of pin.operator === 'EQ' ? [String(pin.value)] : asArray(pin.values).map(String)) {
      for (const r of records.lookup(name, value)) found.push(r);
    }
  }
  return records.oldestFirst(found);
}

/** One search page; `view` renders a record with the asked properties, `index` indexes a property looked up by value. */
export function searchRecords(
  records: RecordStore<StoredRecord>, body: Body, visibleBefore: number, view: (r: StoredRecord, props: string[]) => Body, index: (name: string) => void,
): FakeResponse {
  const groups = asArray(body.filterGroups).map((g) => asArray(asBody(g).filters).map(asBody));
  const hits = candidates(records, groups, index).filter(
    (r) => r.updatedAt <= visibleBefore && (groups.length === 0 || groups.some((fs) => fs.every((f) => matches(r, f)))),
  );
  const limit = Math.min(200, Number(body.limit ?? 10) || 10);
  const after = Number(body.after ?? 0) || 0;
  const page = hits.slice(after, after + limit);
  const props = asArray(body.properties).map(String);
  const out: Body = { total: hits.length, results: page.map((r) => view(r, props)) };
  if (after + limit < hits.length) out.paging = { next: { after: String(after + limit) } };
  return { status: 200, body: out };
}
