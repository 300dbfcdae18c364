/**
 * An in-memory CRM behind the CrmAdapter contract, for engine tests: records upserted by
 * external id, activities created (not upserted) with their key, and injectable faults that
 * happen before or after the commit.
 */
import { CrmError, type CrmErrorKind } from '../../src/errors.js';
import type { ActivityWrite, CrmAdapter, Fields, ObjectSpec, ReadLink, ReadRequest, ReadResult, RecordWrite, WriteResult } from '../../src/adapter.js';

type Op = 'upsert' | 'create' | 'find' | 'read';

export type MemoryFault = 'lost_response' | 'reset' | 'rate_limited' | 'server_error' | 'quota';

interface StoredRecord {
  id: string;
  externalId: string;
  fields: Fields;
  /** Linked records' ids (`object:id`); linking only adds. */
  links: Set<string>;
}
interface StoredActivity {
  id: string;
  key: string;
  parentId: string;
  fields: Fields;
  links: string[];
}

export interface MemoryCrmOptions {
  objects?: Record<string, ObjectSpec>;
  maxBatch?: number;
  /** Ids per read request. Default 100. */
  maxRead?: number;
  /** Activities upserted by key (Salesforce-like) instead of created (HubSpot-like). */
  nativeActivityUpsert?: boolean;
  latencyMs?: number;
  retryAfterMs?: number;
}

export const defaultObjects: Record<string, ObjectSpec> = {
  contact: { kind: 'record', fields: ['email', 'firstname', 'lastname', 'lifecyclestage'] },
  company: { kind: 'record', fields: ['name', 'domain'] },
  note: { kind: 'activity', fields: ['body', 'timestamp'], parents: ['contact', 'company'] },
  task: { kind: 'activity', fields: ['subject', 'due'], parents: ['contact'] },
};

export function memoryCrm(options: MemoryCrmOptions = {}) {
  const records = new Map<string, Map<string, StoredRecord>>();
  const activities = new Map<string, StoredActivity[]>();
  const calls = { upsert: 0, create: 0, find: 0, read: 0 };
  /** The object of each upsert call, in order: which records went out first. */
  const upsertOrder: string[] = [];
  const queued: { fault: MemoryFault; times: number; op?: Op }[] = [];
  /** External ids the CRM rejects: any batch containing one fails whole with a 400 (HubSpot-like). */
  const rejectExternalIds = new Set<string>();
  let nextId = 1000;

  const err = (message: string, kind: CrmErrorKind, extra: Partial<ConstructorParameters<typeof CrmError>[1]> = {}) =>
    new CrmError(message, { vendor: 'memory', kind, ...extra });

  const takeFault = (op: Op): MemoryFault | undefined => {
    const q = queued.find((f) => f.times > 0 && (!f.op || f.op === op));
    if (!q) return undefined;
    q.times -= 1;
    return q.fault;
  };

  async function withFaults<T>(op: Op, commit: () => T): Promise<T> {
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    const fault = takeFault(op);
    switch (fault) {
      case 'reset':
        throw err('socket hang up', 'transient', { ambiguous: true });
      case 'server_error':
        throw err('503 Service Unavailable', 'transient', { status: 503, ambiguous: true });
      case 'rate_limited':
        throw err('429 ten-secondly limit', 'rate_limited', { status: 429, retryAfterMs: options.retryAfterMs ?? 5 });
      case 'quota':
        throw err('daily limit reached: 250000/250000', 'quota', { status: 429 });
      case 'lost_response':
        commit();
        throw err('socket hang up after send', 'transient', { ambiguous: true });
      default:
        return commit();
    }
  }

  const table = (object: string) => {
    let t = records.get(object);
    if (!t) records.set(object, (t = new Map()));
    return t;
  };
  const list = (object: string) => {
    let l = activities.get(object);
    if (!l) activities.set(object, (l = []));
    return l;
  };

  const objects = options.objects ?? defaultObjects;
  const adapter: CrmAdapter = {
    name: 'memory',
    capabilities: { maxBatch: options.maxBatch ?? 100, nativeActivityUpsert: options.nativeActivityUpsert ?? false },
    objects,
    async upsertRecords(object: string, writes: RecordWrite[]): Promise<WriteResult[]> {
      calls.upsert += 1;
      upsertOrder.push(object);
      return withFaults('upsert', () => {
        const bad = writes.find((w) => rejectExternalIds.has(w.externalId));
        if (bad) throw err(`Property values were not valid: ${bad.externalId}`, 'permanent', { status: 400, splittable: true });
        const ids = new Set<string>();
        for (const w of writes) {
          if (ids.has(w.externalId)) throw err(`duplicate id ${w.externalId} in batch`, 'permanent', { status: 400 });
          ids.add(w.externalId);
        }
        return writes.map((w): WriteResult => {
          const t = table(object);
          let rec = t.get(w.externalId);
          const created = !rec;
          if (rec) Object.assign(rec.fields, w.fields);
          else t.set(w.externalId, (rec = { id: String(nextId++), externalId: w.externalId, fields: { ...w.fields }, links: new Set() }));
          // The record is written; each link whose record exists is added, a missing one fails the write.
          const missing = (w.links ?? []).filter((l) => !table(l.object).has(l.externalId));
          for (const l of w.links ?? []) if (table(l.object).has(l.externalId)) rec.links.add(`${l.object}:${table(l.object).get(l.externalId)!.id}`);
          if (missing.length > 0) return { ok: false, error: err(`link ${missing[0]!.object} ${missing[0]!.externalId} does not exist`, 'permanent', { vendorCode: 'LINK_NOT_FOUND' }) };
          return { ok: true, recordId: rec.id, created };
        });
      });
    },
    async createActivities(object: string, writes: ActivityWrite[]): Promise<WriteResult[]> {
      calls.create += 1;
      return withFaults('create', () =>
        writes.map((w): WriteResult => {
          const parent = table(w.parent.object).get(w.parent.externalId);
          if (!parent) return { ok: false, error: err(`parent ${w.parent.object} ${w.parent.externalId} does not exist`, 'permanent', { vendorCode: 'PARENT_NOT_FOUND' }) };
          const missing = (w.links ?? []).find((l) => !table(l.object).has(l.externalId));
          if (missing) return { ok: false, error: err(`link ${missing.object} ${missing.externalId} does not exist`, 'permanent', { vendorCode: 'LINK_NOT_FOUND' }) };
          const links = (w.links ?? []).map((l) => `${l.object}:${table(l.object).get(l.externalId)!.id}`);
          const l = list(object);
          if (adapter.capabilities.nativeActivityUpsert) {
            const existing = l.find((a) => a.key === w.key);
            if (existing) return { ok: true, recordId: existing.id, created: false };
          }
          const act = { id: String(nextId++), key: w.key, parentId: parent.id, fields: { ...w.fields }, links };
          l.push(act);
          return { ok: true, recordId: act.id, created: true };
        }),
      );
    },
    async findActivities(object: string, writes: ActivityWrite[]) {
      calls.find += 1;
      return withFaults('find', () => {
        const keys = new Set(writes.map((w) => w.key));
        return new Map(list(object).filter((a) => keys.has(a.key)).map((a) => [a.key, a.id] as const));
      });
    },
    planReads(_object: string, ids: readonly string[]) {
      const size = options.maxRead ?? 100;
      return Array.from({ length: Math.ceil(ids.length / size) }, (_, i) => ids.slice(i * size, (i + 1) * size));
    },
    async readRecords(object: string, ids: readonly string[], request: ReadRequest): Promise<ReadResult[]> {
      calls.read += 1;
      return withFaults('read', () =>
        ids.map((id): ReadResult => {
          const matches = [...table(object).values()].filter((r) => (request.by ? r.fields[request.by] === id : r.externalId === id));
          if (matches.length > 1) return { found: false, matches: matches.length };
          const rec = matches[0];
          if (!rec) return { found: false };
          // Everything the record holds comes back: the engine keeps only what the read may answer.
          const links = [...rec.links].map((ref): ReadLink => {
            const [linked, recordId] = ref.split(':') as [string, string];
            const other = [...table(linked).values()].find((r) => r.id === recordId);
            return { object: linked, recordId, ...(other ? { externalId: other.externalId } : {}) };
          });
          return { found: true, recordId: rec.id, externalId: rec.externalId, fields: { ...rec.fields }, ...(request.links ? { links } : {}) };
        }),
      );
    },
    classifyError(e: unknown) {
      return e instanceof CrmError ? e : err(String(e), 'transient', { ambiguous: true });
    },
    apiCalls: () => calls.upsert + calls.create + calls.find + calls.read,
  };

  return {
    adapter,
    calls,
    upsertOrder,
    rejectExternalIds,
    records: (object: string) => [...table(object).values()],
    activities: (object: string) => [...list(object)],
    failNext(fault: MemoryFault, opts: { times?: number; op?: Op } = {}) {
      queued.push({ fault, times: opts.times ?? 1, op: opts.op });
    },
  };
}

export type MemoryCrm = ReturnType<typeof memoryCrm>;
