/**
 * Record reads for salesforceAdapter: one SOQL query per group of ids,
 * `SELECT Id, <external id>, <fields>, <lookups>, <Parent.external id> FROM <sObject> WHERE <by> IN (...)`,
 * sent as `GET /query?q=...` and paged through `nextRecordsUrl`. Groups are as large as one query's
 * URL allows, counted in bytes as sent (see docs/salesforce.md, Reading records); links ride in the
 * same query, 0 extra requests. An id no query can carry is answered not found with the reason,
 * unsent, and the other ids of the read are read as usual.
 */
import type { FieldValue, Fields, ReadLink, ReadRequest, ReadResult } from '../../src/adapter.js';
import { ConfigError } from '../../src/errors.js';
import type { SalesforceObjectConfig } from './salesforce-config.js';
import { relationshipName } from './salesforce-requests.js';
import { groupsForUrl, isFieldPath, queryUrlBytes, soqlList } from './soql.js';

type RecordConfig = Extract<SalesforceObjectConfig, { kind: 'record' }>;
type Row = Record<string, unknown>;

/**
 * Salesforce refuses a string longer than 4,000 characters in a WHERE clause (SOQL and SOSL
 * limits); no field a query can filter on holds one, so such an id is answered not found unasked.
 */
export const MAX_WHERE_STRING = 4_000;

export interface ReadsOptions {
  objects: Readonly<Record<string, SalesforceObjectConfig>>;
  /** The REST API root (`/services/data/v60.0`). */
  apiBase: string;
  /** The longest query URL (path and query string) to send, in bytes as sent (UTF-8, percent-encoded). */
  maxUrlBytes: number;
  /** Run one SOQL query through the adapter's request path, every page of it. */
  query(soql: string): Promise<Row[]>;
}

/** What one read of one object selects and how its rows are matched back. */
interface ReadPlan {
  sobject: string;
  externalIdField: string;
  by: string;
  /** Compare by exact text: the external id (SOQL compares text case-insensitively; our external ids are case-sensitive). */
  exact: boolean;
  fields: readonly string[];
  links: Array<{ object: string; lookup: string; relationship: string; externalIdField: string }>;
  head: string;
}

function readPlan(objects: ReadsOptions['objects'], object: string, request: ReadRequest): ReadPlan {
  const spec = objects[object];
  if (!spec || spec.kind !== 'record') throw new ConfigError(`salesforce: "${object}" is not a configured record object`);
  const by = request.by ?? spec.externalIdField;
  const links = request.links
    ? Object.entries(spec.links ?? {}).flatMap(([linked, lookup]) => {
        const target = objects[linked] as RecordConfig | undefined;
        const relationship = relationshipName(lookup);
        return target && relationship ? [{ object: linked, lookup, relationship, externalIdField: target.externalIdField }] : [];
      })
    : [];
  const columns = ['Id', spec.externalIdField, by, ...request.fields, ...links.flatMap((l) => [l.lookup, `${l.relationship}.${l.externalIdField}`])];
  const bad = columns.find((c) => !isFieldPath(c));
  if (bad !== undefined) throw new ConfigError(`salesforce: "${bad}" on ${spec.sobject} is not a field API name (Name, Foo__c or Parent.Name); check the object's fields, readFields and lookupBy`);
  // Salesforce refuses a field selected twice (names compare case-insensitively).
  const select = columns.filter((c, i) => columns.findIndex((d) => d.toLowerCase() === c.toLowerCase()) === i);
  return {
    sobject: spec.sobject,
    externalIdField: spec.externalIdField,
    by,
    exact: by.toLowerCase() === spec.externalIdField.toLowerCase(),
    fields: request.fields,
    links,
    head: `SELECT ${select.join(', ')} FROM ${spec.sobject} WHERE ${by} IN (`,
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Why `id` is never sent, or undefined when a query can carry it: longer than a WHERE string may
 * be, or a URL over `maxUrlBytes` in a query of its own (Salesforce would refuse the whole query
 * with 414 URI Too Long, failing every id beside it).
 */
function unsendable(apiBase: string, plan: ReadPlan, maxUrlBytes: number, id: string): string | undefined {
  const characters = id.length > MAX_WHERE_STRING ? [...id].length : 0;
  if (characters > MAX_WHERE_STRING) return `not sent: ${count(characters)} characters, over the ${count(MAX_WHERE_STRING)} Salesforce allows in a WHERE string`;
  const bytes = queryUrlBytes(apiBase, `${plan.head}${soqlList([id])})`);
  if (bytes > maxUrlBytes) return `not sent: a query for this id alone is a URL of ${count(bytes)} bytes (UTF-8, percent-encoded), over the ${count(maxUrlBytes)} one query may use (Salesforce refuses a URI over 16,384 bytes with 414 URI Too Long)`;
  return undefined;
}

/** A column of a row by name in any case: Salesforce answers under each field's own API name, however the query spelled it. */
function cell(row: Row, name: string): unknown {
  if (Object.hasOwn(row, name)) return row[name];
  const key = Object.keys(row).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : row[key];
}

/** A column of a row: `Email`, or `Account.Name` inside the related record (null when the lookup is empty). */
function valueAt(row: Row, path: string): unknown {
  const dot = path.indexOf('.');
  if (dot < 0) return cell(row, path);
  const parent = cell(row, path.slice(0, dot));
  return typeof parent === 'object' && parent !== null ? cell(parent as Row, path.slice(dot + 1)) : null;
}

function answer(plan: ReadPlan, row: Row, withLinks: boolean): ReadResult {
  const fields: Fields = {};
  for (const f of plan.fields) fields[f] = (valueAt(row, f) ?? null) as FieldValue;
  const externalId = cell(row, plan.externalIdField);
  const links = plan.links.flatMap((l): ReadLink[] => {
    const recordId = cell(row, l.lookup);
    if (typeof recordId !== 'string' || recordId === '') return [];
    const linked = valueAt(row, `${l.relationship}.${l.externalIdField}`);
    return [{ object: l.object, recordId, ...(typeof linked === 'string' ? { externalId: linked } : {}) }];
  });
  return {
    found: true,
    recordId: String(row.Id),
    ...(typeof externalId === 'string' ? { externalId } : {}),
    fields,
    ...(withLinks ? { links } : {}),
  };
}

/**
 * The rows by the value they answer: exactly as stored for the external id (SOQL compares text
 * case-insensitively, our external ids are case-sensitive: `ABC-1` does not answer `abc-1`), and
 * case-folded for any other field, as SOQL matched them.
 */
function rowsByValue(plan: ReadPlan, rows: readonly Row[]): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const row of rows) {
    const v = cell(row, plan.by);
    if (typeof v !== 'string') continue;
    const key = plan.exact ? v : v.toLowerCase();
    const list = out.get(key);
    if (list) list.push(row);
    else out.set(key, [row]);
  }
  return out;
}

export function salesforceReads(options: ReadsOptions) {
  const { objects, apiBase, maxUrlBytes, query } = options;
  const unsent = (plan: ReadPlan) => (id: string) => unsendable(apiBase, plan, maxUrlBytes, id);
  return {
    planReads(object: string, ids: readonly string[], request: ReadRequest): string[][] {
      const plan = readPlan(objects, object, request);
      const why = unsent(plan);
      return groupsForUrl(apiBase, plan.head, ')', ids, maxUrlBytes, (id) => why(id) !== undefined);
    },

    async readRecords(object: string, ids: readonly string[], request: ReadRequest): Promise<ReadResult[]> {
      const plan = readPlan(objects, object, request);
      const why = new Map(ids.map((id) => [id, unsent(plan)(id)]));
      const asked = [...new Set(ids.filter((id) => why.get(id) === undefined))];
      const rows = asked.length > 0 ? await query(`${plan.head}${soqlList(asked)})`) : [];
      const byValue = rowsByValue(plan, rows);
      return ids.map((id): ReadResult => {
        const reason = why.get(id);
        if (reason !== undefined) return { found: false, reason };
        const hits = byValue.get(plan.exact ? id : id.toLowerCase()) ?? [];
        if (hits.length === 0) return { found: false };
        if (hits.length > 1) return { found: false, matches: hits.length };
        return answer(plan, hits[0]!, request.links);
      });
    },
  };
}
