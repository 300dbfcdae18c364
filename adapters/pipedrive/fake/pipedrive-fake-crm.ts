/**
 * The company account behind fakePipedrive: fields (standard and custom, with options), persons,
 * organizations and deals, notes (v1) and activities (v2), and the search index, which sees a
 * write `searchLagMs` after it committed (Pipedrive does not document the lag; it exists).
 *
 * What Pipedrive refuses is refused here with its body, next to the rule (CRM-API.md section 5):
 * v2 validation is strict (no string-to-number coercion, an enumeration takes an option id, a set
 * an array of them, an unknown custom field key is refused), a relation must name a live record,
 * a deleted record answers 404.
 */
import { createHash } from 'node:crypto';
import type { FakeResponse } from '../../testing/fake-http.js';

export type FakeEntity = 'person' | 'organization' | 'deal';
export type FakeFieldType = 'varchar' | 'varchar_auto' | 'text' | 'double' | 'int' | 'monetary' | 'enum' | 'set' | 'date' | 'phone' | 'address';

export interface FakeField {
  field_code: string;
  field_name: string;
  field_type: string;
  is_custom_field: boolean;
  options: { id: number; label: string }[] | null;
}

export interface FakeRecord {
  id: number;
  entity: FakeEntity;
  /** Standard fields at the body's root (name, emails, org_id, title, value, ...). */
  data: Record<string, unknown>;
  custom_fields: Record<string, unknown>;
  add_time: string;
  update_time: string;
  /** Epoch ms of the last write (for `updated_since`). */
  updatedAt: number;
  deleted: boolean;
}

export interface FakeNote {
  id: number;
  content: string;
  person_id: number | null;
  org_id: number | null;
  deal_id: number | null;
  add_time: string;
}

export interface FakeActivity {
  id: number;
  subject: string;
  type: string;
  note: string | null;
  done: boolean;
  due_date: string | null;
  person_id: number | null;
  org_id: number | null;
  deal_id: number | null;
  participants: { person_id: number; primary: boolean }[];
}

/** Pipedrive's error body: `{ success: false, error, code }` (v2) with the status. */
export const errorResponse = (status: number, error: string, code: string, extra: Record<string, unknown> = {}): FakeResponse => ({ status, body: { success: false, error, code, ...extra } });
const validation = (message: string) => errorResponse(400, `Validation failed: ${message}`, 'ERR_SCHEMA_VALIDATION_FAILED');

const ENTITY_LABEL: Record<FakeEntity, string> = { person: 'Person', organization: 'Organization', deal: 'Deal' };

/** Standard fields each entity takes at the root of a v2 body, with what they hold. */
const STANDARD: Record<FakeEntity, Record<string, 'string' | 'number' | 'int' | 'array' | 'person' | 'organization' | 'boolean'>> = {
  person: { name: 'string', first_name: 'string', last_name: 'string', emails: 'array', phones: 'array', org_id: 'organization', owner_id: 'int', visible_to: 'int', label_ids: 'array', job_title: 'string', birthday: 'string', notes: 'string', marketing_status: 'string' },
  organization: { name: 'string', owner_id: 'int', visible_to: 'int', label_ids: 'array', address: 'string', website: 'string', industry: 'int', annual_revenue: 'number', employee_count: 'int' },
  deal: { title: 'string', value: 'number', currency: 'string', stage_id: 'int', pipeline_id: 'int', status: 'string', probability: 'number', expected_close_date: 'string', owner_id: 'int', person_id: 'person', org_id: 'organization', lost_reason: 'string', visible_to: 'int', label_ids: 'array', close_time: 'string' },
};
const REQUIRED: Record<FakeEntity, string> = { person: 'name', organization: 'name', deal: 'title' };

/** A custom field's 40-character key, stable per entity and name (Pipedrive's are random hashes). */
export const customKey = (entity: string, name: string): string => createHash('sha1').update(`${entity}:${name}`).digest('hex');

/** Where the search index keeps a person's addresses beside its custom field values. */
const EMAILS = '\u0000emails';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class FakePipedriveCrm {
  private readonly fields: Record<FakeEntity | 'activity', FakeField[]>;
  private readonly records: Record<FakeEntity, Map<number, FakeRecord>> = { person: new Map(), organization: new Map(), deal: new Map() };
  /** The search index: per record, its custom field values as the index last saw them, each visible from `at`. */
  private readonly index = new Map<string, Array<{ at: number; values: Record<string, unknown> | null }>>();
  readonly notes = new Map<number, FakeNote>();
  readonly activities = new Map<number, FakeActivity>();
  private nextId = 1;
  private nextOptionId = 1;

  constructor(private readonly now: () => number, public searchLagMs: number) {
    const std = (entity: FakeEntity | 'activity', codes: string[]): FakeField[] => codes.map((c) => ({ field_code: c, field_name: c, field_type: 'varchar', is_custom_field: false, options: null }));
    this.fields = {
      person: std('person', Object.keys(STANDARD.person)),
      organization: std('organization', Object.keys(STANDARD.organization)),
      deal: std('deal', Object.keys(STANDARD.deal)),
      activity: std('activity', ['subject', 'type', 'note', 'due_date', 'due_time', 'done', 'owner_id']),
    };
    for (const entity of ['person', 'organization', 'deal'] as const) this.defineField(entity, 'ai_external_id', 'varchar');
  }

  /** Add a custom field (or return the key of the one of that name); enum and set fields get option ids. */
  defineField(entity: FakeEntity | 'activity', name: string, type: FakeFieldType, options: readonly string[] = []): string {
    const existing = this.fields[entity].find((f) => f.is_custom_field && f.field_name === name);
    if (existing) return existing.field_code;
    const key = customKey(entity, name);
    const opts = type === 'enum' || type === 'set' ? options.map((label) => ({ id: this.nextOptionId++, label })) : null;
    this.fields[entity].push({ field_code: key, field_name: name, field_type: type, is_custom_field: true, options: opts });
    return key;
  }

  removeField(entity: FakeEntity | 'activity', name: string): void {
    this.fields[entity] = this.fields[entity].filter((f) => !(f.is_custom_field && f.field_name === name));
  }

  fieldsOf(entity: FakeEntity | 'activity'): FakeField[] {
    return this.fields[entity];
  }

  field(entity: FakeEntity, name: string): FakeField | undefined {
    return this.fields[entity].find((f) => f.field_code === name || (f.is_custom_field && f.field_name === name));
  }

  list(entity: FakeEntity, includeDeleted = false): FakeRecord[] {
    return [...this.records[entity].values()].filter((r) => includeDeleted || !r.deleted);
  }

  get(entity: FakeEntity, id: number): FakeRecord | undefined {
    const r = this.records[entity].get(id);
    return r && !r.deleted ? r : undefined;
  }

  /** The v2 JSON of a record. */
  view(r: FakeRecord, customKeys?: ReadonlySet<string>): Record<string, unknown> {
    const custom = customKeys ? Object.fromEntries(Object.entries(r.custom_fields).filter(([k]) => customKeys.has(k))) : r.custom_fields;
    return { id: r.id, ...r.data, custom_fields: custom, add_time: r.add_time, update_time: r.update_time, is_deleted: r.deleted };
  }

  /** Check a v2 create or update body; the refusal Pipedrive answers, or undefined. */
  private check(entity: FakeEntity, body: Record<string, unknown>, creating: boolean): FakeResponse | undefined {
    for (const [k, v] of Object.entries(body)) {
      if (k === 'custom_fields') continue;
      const kind = STANDARD[entity][k];
      if (!kind) return validation(`Unknown field "${k}"`);
      if (v === null) continue;
      if ((kind === 'number' || kind === 'int') && typeof v !== 'number') return validation(`"${k}" must be a number`);
      if (kind === 'string' && typeof v !== 'string') return validation(`"${k}" must be a string`);
      if (kind === 'array' && !Array.isArray(v)) return validation(`"${k}" must be an array`);
      if (kind === 'person' || kind === 'organization') {
        if (typeof v !== 'number') return validation(`"${k}" must be a number`);
        if (!this.get(kind, v)) return errorResponse(400, `${ENTITY_LABEL[kind]} with id ${v} not found`, 'ERR_NOT_FOUND');
      }
    }
    if (creating && (typeof body[REQUIRED[entity]] !== 'string' || body[REQUIRED[entity]] === '')) return validation(`"${REQUIRED[entity]}" is required`);
    const custom = body.custom_fields;
    if (custom === undefined) return undefined;
    if (typeof custom !== 'object' || custom === null || Array.isArray(custom)) return validation('"custom_fields" must be an object');
    for (const [key, v] of Object.entries(custom)) {
      const f = this.fields[entity].find((x) => x.is_custom_field && x.field_code === key);
      if (!f) return validation(`custom_fields.${key}: unknown custom field`);
      if (v === null) continue;
      const ids = new Set((f.options ?? []).map((o) => o.id));
      switch (f.field_type) {
        case 'varchar':
        case 'varchar_auto':
          if (typeof v !== 'string') return validation(`custom_fields.${key} must be a string`);
          if (v.length > 255) return validation(`custom_fields.${key} must be at most 255 characters`);
          break;
        case 'double':
        case 'int':
          if (typeof v !== 'number') return validation(`custom_fields.${key} must be a number`);
          break;
        case 'enum':
          if (typeof v !== 'number' || !ids.has(v)) return validation(`custom_fields.${key} must be one of the option ids ${[...ids].join(', ')}`);
          break;
        case 'set':
          // A clear is null: an empty array is refused.
          if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'number' || !ids.has(x))) return validation(`custom_fields.${key} must be a non-empty array of the option ids ${[...ids].join(', ')}`);
          break;
        default:
          if (typeof v !== 'string') return validation(`custom_fields.${key} must be a string`);
      }
    }
    return undefined;
  }

  private reindex(r: FakeRecord): void {
    const key = `${r.entity}:${r.id}`;
    const entries = this.index.get(key) ?? [];
    const emails = Array.isArray(r.data.emails) ? (r.data.emails as { value?: unknown }[]).map((e) => String(e.value ?? '').toLowerCase()) : [];
    entries.push({ at: this.now() + this.searchLagMs, values: r.deleted ? null : { ...r.custom_fields, [EMAILS]: emails } });
    this.index.set(key, entries);
  }

  create(entity: FakeEntity, body: Record<string, unknown>): FakeResponse {
    const refused = this.check(entity, body, true);
    if (refused) return refused;
    const now = this.now();
    const { custom_fields, ...data } = body;
    const r: FakeRecord = { id: this.nextId++, entity, data, custom_fields: { ...(custom_fields as Record<string, unknown> | undefined) }, add_time: iso(now), update_time: iso(now), updatedAt: now, deleted: false };
    this.records[entity].set(r.id, r);
    this.reindex(r);
    return { status: 200, body: { success: true, data: this.view(r) } };
  }

  update(entity: FakeEntity, id: number, body: Record<string, unknown>): FakeResponse {
    const r = this.get(entity, id);
    if (!r) return errorResponse(404, `${ENTITY_LABEL[entity]} not found`, 'ERR_NOT_FOUND');
    const refused = this.check(entity, body, false);
    if (refused) return refused;
    const { custom_fields, ...data } = body;
    Object.assign(r.data, data);
    Object.assign(r.custom_fields, custom_fields as Record<string, unknown> | undefined);
    r.updatedAt = this.now();
    r.update_time = iso(r.updatedAt);
    this.reindex(r);
    return { status: 200, body: { success: true, data: this.view(r) } };
  }

  /** Mark a record deleted (Pipedrive purges it after 30 days); its GET answers 404 from now on. */
  remove(entity: FakeEntity, id: number): boolean {
    const r = this.get(entity, id);
    if (!r) return false;
    r.deleted = true;
    r.updatedAt = this.now();
    this.reindex(r);
    return true;
  }

  /** v1 merge: `mergeWithId` survives with its values (empty ones filled from the other); `id` is removed and its notes, deals and activities move over. */
  merge(entity: FakeEntity, id: number, mergeWithId: number): FakeResponse {
    const gone = this.get(entity, id);
    const survivor = this.get(entity, mergeWithId);
    if (!gone || !survivor || id === mergeWithId) return errorResponse(400, 'Merge failed: both records must exist and differ', 'ERR_BAD_REQUEST');
    for (const [k, v] of Object.entries(gone.custom_fields)) if (survivor.custom_fields[k] === undefined || survivor.custom_fields[k] === null) survivor.custom_fields[k] = v;
    const field = entity === 'person' ? 'person_id' : entity === 'organization' ? 'org_id' : 'deal_id';
    for (const n of this.notes.values()) if (n[field as 'person_id'] === id) n[field as 'person_id'] = mergeWithId;
    for (const a of this.activities.values()) if (a[field as 'person_id'] === id) a[field as 'person_id'] = mergeWithId;
    for (const d of this.records.deal.values()) if (d.data[field] === id) d.data[field] = mergeWithId;
    survivor.updatedAt = this.now();
    survivor.update_time = iso(survivor.updatedAt);
    this.reindex(survivor);
    this.remove(entity, id);
    return { status: 200, body: { success: true, data: { id: mergeWithId } } };
  }

  /** `persons/search` on emails with `exact_match`: persons an address names (case-insensitive), as the search index sees them now. */
  searchEmail(term: string): number[] {
    const now = this.now();
    const out: number[] = [];
    for (const r of this.records.person.values()) {
      const seen = (this.index.get(`person:${r.id}`) ?? []).filter((e) => e.at <= now).at(-1);
      const emails = seen?.values?.[EMAILS];
      if (Array.isArray(emails) && emails.includes(term.toLowerCase())) out.push(r.id);
    }
    return out;
  }

  /** `itemSearch/field`: records whose indexed value of `key` matches `term` as the search index sees them now. */
  search(entity: FakeEntity, key: string, term: string, match: string): number[] {
    const now = this.now();
    const out: number[] = [];
    for (const r of this.records[entity].values()) {
      const seen = (this.index.get(`${entity}:${r.id}`) ?? []).filter((e) => e.at <= now).at(-1);
      const v = seen?.values?.[key];
      if (typeof v !== 'string') continue;
      const hit = match === 'exact' ? v === term : match === 'beginning' ? v.startsWith(term) : v.includes(term);
      if (hit) out.push(r.id);
    }
    return out;
  }

  private parentRefs(body: Record<string, unknown>): FakeResponse | { person_id: number | null; org_id: number | null; deal_id: number | null } {
    const out = { person_id: null as number | null, org_id: null as number | null, deal_id: null as number | null };
    const targets = { person_id: 'person', org_id: 'organization', deal_id: 'deal' } as const;
    for (const [field, entity] of Object.entries(targets)) {
      const v = body[field];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number') return validation(`"${field}" must be a number`);
      if (!this.get(entity, v)) return errorResponse(400, `${ENTITY_LABEL[entity]} with id ${v} not found`, 'ERR_NOT_FOUND');
      out[field as keyof typeof out] = v;
    }
    return out;
  }

  /** v1 POST /notes: content is HTML, sanitized (scripts, styles and attributes dropped; text kept). */
  createNote(body: Record<string, unknown>): FakeResponse {
    if (typeof body.content !== 'string' || body.content.trim() === '') return { status: 400, body: { success: false, error: 'Note content is required', error_info: 'Please check developers.pipedrive.com for more information about Pipedrive API.', data: null, additional_data: null } };
    const refs = this.parentRefs(body);
    if ('status' in refs) return refs;
    if (refs.person_id === null && refs.org_id === null && refs.deal_id === null) return { status: 400, body: { success: false, error: 'Item (deal, person, organization, lead or project) ID must be provided', data: null } };
    const note: FakeNote = { id: this.nextId++, content: sanitize(body.content), ...refs, add_time: iso(this.now()).replace('T', ' ').replace('Z', '') };
    this.notes.set(note.id, note);
    return { status: 201, body: { success: true, data: note } };
  }

  /** v2 POST /activities. */
  createActivity(body: Record<string, unknown>): FakeResponse {
    for (const k of Object.keys(body)) {
      if (!['subject', 'type', 'note', 'due_date', 'due_time', 'done', 'owner_id', 'person_id', 'org_id', 'deal_id', 'lead_id', 'project_id', 'participants', 'attendees', 'priority', 'busy', 'duration', 'location', 'public_description'].includes(k)) return validation(`Unknown field "${k}"`);
    }
    if (body.done !== undefined && typeof body.done !== 'boolean') return validation('"done" must be a boolean');
    const refs = this.parentRefs(body);
    if ('status' in refs) return refs;
    const participants = Array.isArray(body.participants) ? (body.participants as { person_id: number; primary: boolean }[]) : [];
    for (const p of participants) if (!this.get('person', p.person_id)) return errorResponse(400, `Person with id ${p.person_id} not found`, 'ERR_NOT_FOUND');
    const a: FakeActivity = {
      id: this.nextId++, subject: typeof body.subject === 'string' ? body.subject : 'Call', type: typeof body.type === 'string' ? body.type : 'task',
      note: typeof body.note === 'string' ? sanitize(body.note) : null, done: body.done === true, due_date: typeof body.due_date === 'string' ? body.due_date : null,
      ...refs, participants,
    };
    this.activities.set(a.id, a);
    return { status: 200, body: { success: true, data: a } };
  }
}

/** What Pipedrive's sanitizer does to note HTML, as far as a key marker is concerned: scripts and styles go, attributes go, text stays. */
export function sanitize(html: string): string {
  return html.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, '').replace(/<([a-z][a-z0-9]*)\s[^>]*>/gi, '<$1>');
}
