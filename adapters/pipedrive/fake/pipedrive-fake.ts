/**
 * fakePipedrive: an in-memory Pipedrive company speaking the v2 (and the few v1) endpoints the
 * adapter calls (CRM-API.md section 5), on the shared FakeHttpCore: request counts, seeded faults
 * and both fronts (loopback server, nock).
 *
 * It enforces what Pipedrive enforces and what the adapter must survive: the API token, strict v2
 * values (option ids, numbers as numbers, unknown custom field keys refused), relations to live
 * records, deleted records answering 404, the burst and search windows per 2 s and a daily budget,
 * a search index that lags writes by `searchLagMs`, note HTML sanitized, and merges.
 * Each person, organization and deal has an `ai_external_id` varchar custom field from the start.
 */
import { FakeHttpCore, fakeCrmBase, type FakeCrmBase, type FaultKind } from '../../testing/fake-http.js';
import { customKey, type FakeActivity, type FakeEntity, type FakeField, type FakeFieldType, type FakeNote, type FakeRecord } from './pipedrive-fake-crm.js';
import { FakePipedriveState, PipedriveFault, type FakePipedriveOptions } from './pipedrive-fake-state.js';

export { customKey, FakePipedriveState, PipedriveFault, type FakeActivity, type FakeEntity, type FakeField, type FakeFieldType, type FakeNote, type FakePipedriveOptions, type FakeRecord };

export interface FakePipedrive extends FakeCrmBase<FaultKind | PipedriveFault> {
  state: FakePipedriveState;
  /** Live (not deleted) records of one entity, oldest first. */
  records(entity: FakeEntity): FakeRecord[];
  /** A record's value of a custom field, by the field's name. */
  customValue(record: FakeRecord, fieldName: string): unknown;
  notes(): FakeNote[];
  activities(): FakeActivity[];
  /** Add a custom field (`enum` and `set` with option labels, given ids in order); returns its 40-character key. */
  defineField(entity: FakeEntity | 'activity', name: string, type: FakeFieldType, options?: readonly string[]): string;
  /** A custom field's definition by name (its key and option ids). */
  field(entity: FakeEntity, name: string): FakeField | undefined;
  removeField(entity: FakeEntity | 'activity', name: string): void;
  /** Put a record in straight (no request, no limit), as a user in Pipedrive would: returns its id. */
  seed(entity: FakeEntity, data: Record<string, unknown>, custom?: Record<string, unknown>): number;
  /** Delete a record as a user would: its GET answers 404 from now on. */
  delete(entity: FakeEntity, id: number): boolean;
  /** Merge as `PUT /v1/persons/{id}/merge { merge_with_id }` does: `mergeWithId` survives. */
  merge(entity: FakeEntity, id: number, mergeWithId: number): void;
  /** Change how long writes stay out of the search index. */
  setSearchLag(ms: number): void;
  /** Start a new day for the daily budget, optionally with a new budget. */
  resetDaily(dailyBudget?: number): void;
}

export function fakePipedrive(options: FakePipedriveOptions = {}): FakePipedrive {
  const state = new FakePipedriveState(options);
  const core = new FakeHttpCore(state, options.faults);
  const crm = state.crm;
  return {
    ...fakeCrmBase<FaultKind | PipedriveFault>(core, 'https://fake.pipedrive.com'),
    state,
    records: (entity) => crm.list(entity),
    customValue: (record, name) => record.custom_fields[crm.field(record.entity, name)?.field_code ?? customKey(record.entity, name)],
    notes: () => [...crm.notes.values()],
    activities: () => [...crm.activities.values()],
    defineField: (entity, name, type, opts) => crm.defineField(entity, name, type, opts),
    field: (entity, name) => crm.field(entity, name),
    removeField: (entity, name) => crm.removeField(entity, name),
    seed(entity, data, custom = {}) {
      const res = crm.create(entity, { ...data, ...(Object.keys(custom).length > 0 ? { custom_fields: custom } : {}) });
      if (res.status !== 200) throw new Error(`fake pipedrive: seed refused: ${JSON.stringify(res.body)}`);
      return (res.body as { data: { id: number } }).data.id;
    },
    delete: (entity, id) => crm.remove(entity, id),
    merge(entity, id, mergeWithId) {
      const res = crm.merge(entity, id, mergeWithId);
      if (res.status !== 200) throw new Error(`fake pipedrive: merge refused: ${JSON.stringify(res.body)}`);
    },
    setSearchLag: (ms) => (crm.searchLagMs = ms),
    resetDaily: (budget) => state.resetDaily(budget),
  };
}
