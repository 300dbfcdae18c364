/**
 * The query resource of fakeSalesforce: `GET /services/data/vXX.X/query?q=SELECT ...` and its
 * pages `GET .../query/<locator>-<offset>`, answering the SOQL subset soql.ts parses with
 * Salesforce's response shapes, and the URI limit Salesforce's front enforces on every request.
 * salesforce-fake-state.ts holds the records and hands them over through `QueryOrg`.
 *
 * Sources (read 2026-12):
 * - Shape: `{ totalSize, done, records: [{ attributes: { type, url }, <fields in SELECT order> }] }`,
 *   a parent through a lookup as a nested record with its own `attributes`, `null` when the lookup
 *   is empty; up to 2,000 records a page, then `done: false` and
 *   `nextRecordsUrl: "/services/data/v68.0/query/01gD0000002HU6KIAW-2000"`, `totalSize` counting
 *   every page (REST API Developer Guide, Query and Execute a SOQL Query).
 * - An unknown field: 400 `INVALID_FIELD` "\n<the query around it>\n<caret>^\nERROR at Row:1:Column:35\nNo
 *   such column 'SF_date__c' on entity 'Lead'. If you are attempting to use a custom field, be sure
 *   to append the '__c' after the custom field name. Please reference your WSDL or the describe call
 *   for the appropriate names." (a real REST body quoted in mautic/mautic#13406); an unknown
 *   relationship: "Didn't understand relationship 'Contact' in field path. If you are attempting to
 *   use a custom relationship, be sure to append the '__r' ..." (forcedotcom/SFDX-Data-Move-Utility#432)
 *   [I: how much of the query the echo line shows].
 * - A field selected twice: 400 `[{ errorCode: 'INVALID_FIELD', message: 'duplicate field selected: Id' }]`
 *   (SOQL reference; the same text as Apex's QueryException, Forceea-data-factory#151). A tool
 *   over the API printed it after the query echo and caret the other INVALID_FIELD errors carry
 *   (forcedotcom/SFDX-Data-Move-Utility#340) [I: whether REST prefixes them; match on the code].
 * - URI limit: "In each REST call, the maximum length for the combined URI and headers is 16,384
 *   bytes. A request exceeding this limit returns a 431 Request Header Fields Too Large error. If
 *   the URI itself exceeds this limit, the request returns a 414 URI Too Long error" (Salesforce
 *   help article 000386264). The body is the front's HTML page `<h1>Bad Message 414</h1><pre>reason:
 *   URI Too Long</pre>` (quoted in jsforce/jsforce#1134 and simple-salesforce#271) [I: the 431 page
 *   follows the same pattern]. The front refuses it before the API: no allocation is spent.
 */
import type { FakeRequest, FakeResponse } from '../../testing/fake-http.js';
import { lookupFieldOf } from './salesforce-fake-references.js';
import { parseSoqlSelect, type SoqlSelect } from '../soql.js';

/** URI, and URI plus headers, Salesforce accepts (bytes). */
export const MAX_URI_BYTES = 16_384;
/** Records a query page holds. */
export const QUERY_PAGE_SIZE = 2_000;

type Row = Record<string, unknown> & { Id: string };
type Fields = ReadonlyMap<string, { type: string; referenceTo: readonly string[] }>;

/** A field's own API name for `name` written in any case, or undefined when the sObject has no such field. */
const named = (fields: Fields, name: string) => (fields.has(name) ? name : [...fields.keys()].find((k) => k.toLowerCase() === name.toLowerCase()));
/** The relationship name of a lookup field: `AccountId` -> `Account`, `Partner__c` -> `Partner__r`. */
const relationshipOf = (lookup: string) => (lookup.endsWith('__c') ? `${lookup.slice(0, -3)}__r` : lookup.slice(0, -2));

/** What the query resource needs from the org. */
export interface QueryOrg {
  /** The fields of an sObject (type and, for a lookup, the sObjects it points at), or undefined when there is no such sObject. */
  fields(sobject: string): Fields | undefined;
  /** Its records, oldest first; with `where`, those whose text `field` equals one of `values` ignoring case, as SOQL compares text. */
  rows(sobject: string, where?: { field: string; values: readonly string[] }): Row[];
  /** A record of any sObject by Id. */
  byId(id: string): { sobject: string; record: Row } | undefined;
}

const wire = (status: number, errorCode: string, message: string): FakeResponse => ({ status, body: [{ message, errorCode }] });
const frontPage = (status: number, reason: string): FakeResponse => ({
  status,
  headers: { 'content-type': 'text/html;charset=iso-8859-1' },
  rawBody: `<h1>Bad Message ${status}</h1><pre>reason: ${reason}</pre>`,
});
const wireText = (text: string) => encodeURIComponent(text).replace(/'/g, '%27');

/** The request target as the client sent it (path and query string, as fetch encodes a query). */
export function requestTarget(req: FakeRequest): string {
  const query = [...req.query].map(([k, v]) => `${wireText(k)}=${wireText(v)}`).join('&');
  return `${encodeURI(req.path)}${query ? `?${query}` : ''}`;
}

/** Salesforce's front refusing a URI, or URI and headers, over 16,384 bytes; undefined when the request fits. */
export function uriRefusal(req: FakeRequest): FakeResponse | undefined {
  const uri = Buffer.byteLength(requestTarget(req));
  if (uri > MAX_URI_BYTES) return frontPage(414, 'URI Too Long');
  const headers = Object.entries(req.headers).reduce((n, [k, v]) => n + Buffer.byteLength(`${k}: ${v}\r\n`), 0);
  return uri + headers > MAX_URI_BYTES ? frontPage(431, 'Request Header Fields Too Large') : undefined;
}

/** `INVALID_FIELD` as Salesforce words it: the query around the culprit, a caret under it, its row and column. */
function invalidField(q: string, at: number, said: string): FakeResponse {
  const from = Math.max(0, at - 34);
  const to = Math.min(q.length, at + 40);
  const line = q.slice(from, to);
  return wire(400, 'INVALID_FIELD', `\n${line}\n${' '.repeat(at - from)}^\nERROR at Row:1:Column:${at + 1}\n${said}`);
}

const noSuchColumn = (field: string, sobject: string) =>
  `No such column '${field}' on entity '${sobject}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`;
const noSuchRelationship = (name: string) =>
  `Didn't understand relationship '${name}' in field path. If you are attempting to use a custom relationship, be sure to append the '__r' after the custom relationship name. Please reference your WSDL or the describe call for the appropriate names.`;

export class FakeQueries {
  private readonly cursors = new Map<string, Array<Record<string, unknown>>>();
  private nextCursor = 1;

  constructor(private readonly org: QueryOrg) {}

  /** `GET /query?q=`: the first page. */
  run(version: string, q: string | null): FakeResponse {
    const soql = q ?? '';
    const parsed = parseSoqlSelect(soql);
    if ('malformed' in parsed) return wire(400, 'MALFORMED_QUERY', `unexpected token: ${parsed.malformed}`);
    const fields = this.org.fields(parsed.sobject);
    if (!fields) return wire(400, 'INVALID_TYPE', `sObject type '${parsed.sobject}' is not supported.`);
    const resolved = this.resolve(soql, parsed, fields);
    if ('status' in resolved) return resolved;
    let rows = this.org.rows(parsed.sobject, resolved.where);
    if (parsed.limit !== undefined) rows = rows.slice(0, parsed.limit);
    const records = rows.map((r) => this.shape(version, parsed.sobject, r, resolved.paths));
    if (records.length <= QUERY_PAGE_SIZE) return { status: 200, body: { totalSize: records.length, done: true, records } };
    const locator = `01g${(this.nextCursor++).toString(36).toUpperCase().padStart(12, '0')}AAA`;
    this.cursors.set(locator, records);
    return this.page(version, locator, 0);
  }

  /** `GET /query/<locator>-<offset>`: a later page. */
  more(version: string, ref: string): FakeResponse {
    const m = /^(\w+)-(\d+)$/.exec(ref);
    const records = m ? this.cursors.get(m[1]!) : undefined;
    // [I] the wording for a locator the org does not know (expired or never issued).
    if (!m || !records || Number(m[2]) >= records.length) return wire(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    return this.page(version, m[1]!, Number(m[2]));
  }

  private page(version: string, locator: string, offset: number): FakeResponse {
    const records = this.cursors.get(locator)!;
    const end = offset + QUERY_PAGE_SIZE;
    const done = end >= records.length;
    if (done) this.cursors.delete(locator);
    return {
      status: 200,
      body: { totalSize: records.length, done, ...(done ? {} : { nextRecordsUrl: `/services/data/v${version}/query/${locator}-${end}` }), records: records.slice(offset, end) },
    };
  }

  /**
   * The query's field names as the org spells them (SOQL names are case-insensitive; a row answers
   * under each field's own API name), or the error for the first field the org does not have, or
   * one selected twice.
   */
  private resolve(q: string, parsed: SoqlSelect, fields: Fields): { paths: string[]; where?: { field: string; values: string[] } } | FakeResponse {
    const seen = new Set<string>();
    const paths: string[] = [];
    let from = q.search(/\bSELECT\b/i) + 6;
    for (const path of parsed.fields) {
      const at = q.indexOf(path, from);
      from = at + path.length;
      if (seen.has(path.toLowerCase())) return wire(400, 'INVALID_FIELD', `duplicate field selected: ${path}`);
      seen.add(path.toLowerCase());
      const [first, second] = path.split('.') as [string, string | undefined];
      if (second === undefined) {
        const name = named(fields, first);
        if (name === undefined) return invalidField(q, at, noSuchColumn(first, parsed.sobject));
        paths.push(name);
        continue;
      }
      const lookup = named(fields, lookupFieldOf(first));
      const def = lookup === undefined ? undefined : fields.get(lookup)!;
      if (def?.type !== 'reference') return invalidField(q, at, noSuchRelationship(first));
      const target = def.referenceTo.map((t) => this.org.fields(t)).find((f) => f && named(f, second) !== undefined);
      if (!target) return invalidField(q, at, noSuchColumn(second, def.referenceTo[0]!));
      paths.push(`${relationshipOf(lookup!)}.${named(target, second)!}`);
    }
    if (!parsed.where) return { paths };
    const where = named(fields, parsed.where.field);
    if (where === undefined) return invalidField(q, q.search(new RegExp(`\\bWHERE\\s+${parsed.where.field}\\b`, 'i')) + 6, noSuchColumn(parsed.where.field, parsed.sobject));
    return { paths, where: { field: where, values: parsed.where.values } };
  }

  /** One record as a query answers it: attributes, then the selected fields in order, parents nested. */
  private shape(version: string, sobject: string, row: Row, paths: readonly string[]): Record<string, unknown> {
    const out: Record<string, unknown> = { attributes: { type: sobject, url: `/services/data/v${version}/sobjects/${sobject}/${row.Id}` } };
    for (const path of paths) {
      const [first, second] = path.split('.') as [string, string | undefined];
      if (second === undefined) {
        out[first] = row[first] ?? null;
        continue;
      }
      const parentId = row[lookupFieldOf(first)];
      const parent = typeof parentId === 'string' ? this.org.byId(parentId) : undefined;
      if (!parent) {
        out[first] = null;
        continue;
      }
      const nested = (out[first] as Record<string, unknown> | null | undefined) ?? {
        attributes: { type: parent.sobject, url: `/services/data/v${version}/sobjects/${parent.sobject}/${parent.record.Id}` },
      };
      nested[second] = parent.record[second] ?? null;
      out[first] = nested;
    }
    return out;
  }
}
