/**
 * Record reads for pipedriveAdapter (`planReads`, `readRecords`), by external id or, for persons,
 * by email (`lookupBy: ['email']`). Pipedrive cannot read a record by a custom field's value
 * except through its search index, which lags writes: so a read looks in two places, the entity's
 * list of records updated in the last minutes (the database: what this process wrote a moment ago
 * is there) and the exact search (older records), and confirms every candidate by its value.
 * Several holders are answered as `matches`, never as one of them.
 */
import type { Fields, FieldValue, ReadLink, ReadRequest, ReadResult } from '../../src/adapter.js';
import type { PipedriveRecordConfig } from './pipedrive-config.js';
import type { WireField } from './pipedrive-fields.js';

/** Ids read per `readRecords` call: each is its own lookup, so a group only bounds the call's length. */
export const READ_GROUP = 20;

/** A record as v2 answers it (the parts read). */
export interface ReadItem {
  id: number | string;
  custom_fields?: Record<string, unknown> | null;
  emails?: { value?: string; primary?: boolean }[] | null;
  phones?: { value?: string; primary?: boolean }[] | null;
  [field: string]: unknown;
}

/** What a read needs from the adapter (its budgets, counts and classification included). */
export interface ReadIo {
  record(object: string): PipedriveRecordConfig;
  /** The id field's key and a wire-field resolver for the object's fields. */
  wire(object: string, names: readonly string[]): Promise<{ idKey: string; of(name: string): WireField }>;
  /** Records holding `value` in the id field (`by` undefined) or as an email, from the recent list and the search, read and confirmed. */
  holders(object: string, by: 'id' | 'email', value: string): Promise<ReadItem[]>;
  /** One record by its Pipedrive id; undefined when it is gone. */
  get(object: string, id: string): Promise<ReadItem | undefined>;
}

export const planReads = (ids: readonly string[]): string[][] =>
  Array.from({ length: Math.ceil(ids.length / READ_GROUP) }, (_, i) => ids.slice(i * READ_GROUP, (i + 1) * READ_GROUP));

/** A v2 value as a field value: a set's ids `;`-joined, a monetary amount's number, a person's primary email or phone. */
function fieldValue(item: ReadItem, wire: WireField): FieldValue {
  if ('custom' in wire) return plain(item.custom_fields?.[wire.custom]);
  if (wire.standard === 'email' || wire.standard === 'phone') {
    const list = (wire.standard === 'email' ? item.emails : item.phones) ?? [];
    return (list.find((e) => e.primary) ?? list[0])?.value ?? null;
  }
  return plain(item[wire.standard]);
}

function plain(v: unknown): FieldValue {
  if (v === undefined || v === null) return null;
  if (Array.isArray(v)) return v.map(String).join(';');
  if (typeof v === 'object') {
    const amount = (v as { value?: unknown }).value;
    return typeof amount === 'number' || typeof amount === 'string' ? amount : JSON.stringify(v);
  }
  return v as FieldValue;
}

export async function readRecords(io: ReadIo, object: string, ids: readonly string[], request: ReadRequest): Promise<ReadResult[]> {
  const spec = io.record(object);
  const { idKey, of } = await io.wire(object, request.fields);
  const by = request.by === undefined || request.by === spec.idField ? 'id' : 'email';
  const out: ReadResult[] = [];
  for (const id of ids) {
    const found = await io.holders(object, by, id);
    if (found.length > 1) {
      out.push({ found: false, matches: found.length });
      continue;
    }
    const item = found[0];
    if (!item) {
      out.push({ found: false });
      continue;
    }
    const fields: Fields = {};
    for (const name of request.fields) fields[name] = fieldValue(item, of(name));
    const externalId = item.custom_fields?.[idKey];
    const links = request.links ? await linksOf(io, spec, item) : undefined;
    out.push({ found: true, recordId: String(item.id), ...(typeof externalId === 'string' && externalId !== '' ? { externalId } : {}), fields, ...(links ? { links } : {}) });
  }
  return out;
}

/** The records a read record points at through its configured links, with their external ids. */
async function linksOf(io: ReadIo, spec: PipedriveRecordConfig, item: ReadItem): Promise<ReadLink[]> {
  const links: ReadLink[] = [];
  for (const [to, field] of Object.entries(spec.links ?? {})) {
    const raw = item[field];
    const id = typeof raw === 'number' || typeof raw === 'string' ? String(raw) : typeof raw === 'object' && raw !== null && 'value' in raw ? String((raw as { value: unknown }).value) : undefined;
    if (!id) continue;
    const linked = await io.get(to, id);
    if (!linked) continue;
    const { idKey } = await io.wire(to, []);
    const ext = linked.custom_fields?.[idKey];
    links.push({ object: to, recordId: id, ...(typeof ext === 'string' && ext !== '' ? { externalId: ext } : {}) });
  }
  return links;
}
