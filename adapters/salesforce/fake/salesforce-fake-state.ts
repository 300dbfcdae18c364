/**
 * The state machine behind fakeSalesforce: the org's sObjects, fields and records, its rules
 * (External ID and Unique matching, required and read-only fields, references, validation and
 * duplicate rules, row locks), the daily API allocation and the request log. No server and no
 * interceptor here: `handle` takes a parsed request and commits; the factory in
 * salesforce-fake.ts puts it behind the fake HTTP kit's fronts.
 *
 * Records sit in an indexed store: by Id, and by every External ID, Unique and reference field
 * (case-folded, then matched by the field's own rule), so upserts, unique checks, Task parents and
 * `WHERE field IN (...)` queries cost the same in an empty org and in one with a million records.
 */
import { proxyErrorPage, type FakeRequest, type FakeResponse, type FakeVendor, type FaultOptions } from '../../testing/fake-http.js';
import { RecordStore } from '../../fake-store.js';
import { FakeQueries, uriRefusal } from './salesforce-fake-query.js';
import { describeSObject } from './salesforce-fake-describe.js';
import { lookupFieldOf, resolveReference, SALES_SCHEMA, type FakeFieldOptions, type ReferenceOrg } from './salesforce-fake-references.js';
import { storedValue, unparsable, valueRefusal, type FakeValueRules } from './salesforce-fake-values.js';
import { FakeBulkJobs, type FakeBulkOptions } from './salesforce-fake-bulk.js';

export type { FakeFieldOptions, FakeFieldType, FakePicklistValue } from './salesforce-fake-references.js';

interface FieldDef extends Required<Pick<FakeFieldOptions, 'type' | 'externalId' | 'unique' | 'caseSensitive' | 'required' | 'createable' | 'updateable'>>, Omit<FakeValueRules, 'type'> {
  name: string;
  referenceTo: string[];
  defaultValue?: string;
  precision?: number;
  scale?: number;
}

/** Salesforce faults beyond the shared ones. */
export type SalesforceFault = 'json_parser_error';

export type FakeRecord = Record<string, unknown> & { Id: string };

interface SObjectState {
  name: string;
  prefix: string;
  fields: Map<string, FieldDef>;
  records: RecordStore<FakeRecord>;
  validations: Array<{ test: (r: FakeRecord) => boolean; message: string }>;
  duplicateRuleFields: string[];
}

interface RecordFailure {
  statusCode: string;
  message: string;
  fields: string[];
}

type WriteOutcome = { ok: true; id: string; created: boolean } | { ok: false; error: RecordFailure };

export interface FakeSalesforceOptions {
  /** Random fault schedule (seeded). */
  faults?: FaultOptions;
  /** Daily API allocation. Default 15,000 (Developer Edition). */
  dailyLimit?: number;
  /** Requests already used today. Default 0. */
  apiUsed?: number;
  /** When set, only this bearer token is accepted; otherwise any non-empty bearer token is. */
  accessToken?: string;
  /** Bulk API 2.0 ingest jobs: how many job-info reads processing takes, the upload size limit, the result order's seed, the daily record and batch allowances. */
  bulk?: FakeBulkOptions;
}

const PREFIXES: Record<string, string> = { Account: '001', Contact: '003', Lead: '00Q', Task: '00T', Opportunity: '006', Case: '500' };
const err = (statusCode: string, message: string, fields: string[] = []): RecordFailure => ({ statusCode, message, fields });
const wire = (status: number, code: string, message: string, fields?: string[]): FakeResponse => ({
  status,
  body: [{ message, errorCode: code, ...(fields ? { fields } : {}) }],
});
const NOT_FOUND = () => wire(404, 'NOT_FOUND', 'The requested resource does not exist');

/** Request label for counts: the path after the version, with record values and ids generalised. */
function endpointOf(req: FakeRequest): string {
  const m = /^\/services\/data\/v\d+\.\d(\/.*)?$/.exec(req.path);
  if (!m) return `${req.method} ${req.path}`;
  const parts = (m[1] ?? '/').split('/').slice(1);
  if (parts[0] === 'jobs' && parts[1] === 'ingest') {
    const rest = parts.slice(2).filter((p) => p !== '');
    return `${req.method} /jobs/ingest${rest.length > 0 ? '/{id}' : ''}${rest.length > 1 ? `/${rest.slice(1).join('/')}` : ''}`;
  }
  if (parts[0] === 'sobjects' && parts.length >= 4) return `${req.method} /sobjects/${parts[1]}/${parts[2]}/{value}`;
  if (parts[0] === 'sobjects' && parts.length === 3 && parts[2] !== 'describe') return `${req.method} /sobjects/${parts[1]}/{id}`;
  return `${req.method} /${parts.join('/')}`;
}

// The index key of a field value: text case-folded (candidates are then matched by the field's
// rule), numbers and booleans by type and value; anything else is never equal to a stored value.
const fold = (v: unknown): string | undefined =>
  typeof v === 'string' ? v.toLowerCase() : typeof v === 'number' || typeof v === 'boolean' ? `\u0000${typeof v}:${String(v)}` : undefined;
// A relationship by External ID: a JSON object where a field value would be.
const isReference = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// Value rules apply to what a write sends, not to values already stored.
const k = (given: Record<string, unknown>, name: string) => Object.hasOwn(given, name);
const duplicateRuleIndex = (field: string) => `\u0000duplicate-rule:${field}`;
// Matching ignores case only on a Unique field set to case-insensitive (CRM-API.md §2.5).
const same = (f: FieldDef, a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' && f.unique && !f.caseSensitive ? a.toLowerCase() === b.toLowerCase() : a === b;

export class FakeSalesforceState implements FakeVendor {
  readonly name = 'salesforce';
  /** Every request received (Authorization removed). */
  readonly requests: FakeRequest[] = [];
  private readonly sobjects = new Map<string, SObjectState>();
  private used: number;
  private limit: number;
  private lockRows = 0;
  private nextId = 1;
  /** Ids of records deleted (in the Recycle Bin): a lookup to one is ENTITY_IS_DELETED, not INVALID_CROSS_REFERENCE_KEY. */
  private readonly deleted = new Set<string>();
  /** Records merged away, as queryAll answers them: deleted, with `MasterRecordId` naming the record they were merged into. */
  private readonly mergedAway = new Map<string, FakeRecord[]>();

  /** Bulk API 2.0 ingest jobs (salesforce-fake-bulk.ts), writing through the same record rules. */
  readonly bulk: FakeBulkJobs;

  constructor(private readonly options: FakeSalesforceOptions = {}) {
    this.used = options.apiUsed ?? 0;
    this.limit = options.dailyLimit ?? 15_000;
    for (const [sobject, fields] of Object.entries(SALES_SCHEMA)) for (const [name, o] of Object.entries(fields)) this.defineField(sobject, name, o);
    this.bulk = new FakeBulkJobs(
      {
        hasSObject: (sobject) => this.sobjects.has(sobject),
        field: (sobject, name) => this.sobjects.get(sobject)?.fields.get(name),
        write: (sobject, operation, matchField, matchValue, fields) => this.bulkWrite(sobject, operation, matchField, matchValue, fields),
      },
      options.bulk,
    );
  }

  /** The random fault schedule the options asked for. */
  get faultOptions(): FaultOptions {
    return this.options.faults ?? {};
  }

  defineField(sobject: string, name: string, o: FakeFieldOptions = {}): void {
    let s = this.sobjects.get(sobject);
    if (!s) {
      s = { name: sobject, prefix: PREFIXES[sobject] ?? `a0${String.fromCharCode(65 + (this.sobjects.size % 26))}`, fields: new Map(), records: new RecordStore((r) => r.Id), validations: [], duplicateRuleFields: [] };
      s.fields.set('Id', { name: 'Id', type: 'id', externalId: false, unique: true, caseSensitive: true, required: false, createable: false, updateable: false, referenceTo: [] });
      this.sobjects.set(sobject, s);
    }
    const f: FieldDef = {
      name,
      type: o.type ?? 'string',
      externalId: o.externalId ?? false,
      unique: o.unique ?? false,
      caseSensitive: o.caseSensitive ?? true,
      required: o.required ?? false,
      createable: o.createable ?? true,
      updateable: o.updateable ?? true,
      referenceTo: o.referenceTo ?? [],
      defaultValue: o.defaultValue,
      label: o.label,
      length: o.length,
      picklistValues: o.picklistValues,
      restrictedPicklist: o.restrictedPicklist,
      precision: o.precision,
      scale: o.scale,
    };
    s.fields.set(name, f);
    if (f.externalId || f.unique || f.type === 'reference') this.index(s, name);
  }

  removeField(sobject: string, name: string): void {
    this.sobjects.get(sobject)?.fields.delete(name);
  }

  /** Copies of the records of one sObject, in creation order. */
  records(sobject: string): FakeRecord[] {
    return [...(this.sobjects.get(sobject)?.records.values() ?? [])].map((r) => ({ ...r }));
  }

  /**
   * Put a record straight into the org (no request, no allocation, no rules beyond Unique and
   * External ID values): for seeding large orgs in tests and benchmarks. Returns its Id.
   */
  seed(sobject: string, fields: Record<string, unknown>): string {
    const s = this.sobjects.get(sobject);
    if (!s) throw new Error(`fakeSalesforce: unknown sObject ${sobject}`);
    for (const [name, v] of Object.entries(fields)) {
      const f = s.fields.get(name);
      if (f && (f.unique || f.externalId) && this.matching(s, f, v).length > 0) throw new Error(`fakeSalesforce: cannot seed ${sobject}: ${name} ${String(v)} is taken`);
    }
    const record = { ...fields, Id: this.newId(s) } as FakeRecord;
    s.records.put(record);
    return record.Id;
  }

  /**
   * Delete a record as a user (or a merge, for the merged-away records) does: it goes to the
   * Recycle Bin, and a lookup set to its Id is refused with ENTITY_IS_DELETED. Returns whether it existed.
   */
  delete(sobject: string, id: string): boolean {
    const s = this.sobjects.get(sobject);
    if (!s?.records.get(id)) return false;
    s.records.delete(id);
    this.deleted.add(id);
    return true;
  }

  /**
   * Merge one or two records into `masterId` as Salesforce's merge does (SOAP `merge()`, Apex
   * `Database.merge`; the REST API has no merge resource, so this is a helper, not a route):
   * records of one sObject, three at most [V]; the master keeps its Id and its field values [V];
   * the records that lookups pointed at the merged-away ones now point at the master (a Contact's
   * Tasks, an Account's Contacts and Opportunities) [V: "related records are reparented"]; the
   * merged-away records are deleted, in the Recycle Bin with `MasterRecordId` set to the master
   * (queryAll) [V], so a lookup to one is ENTITY_IS_DELETED and an upsert by its external id finds
   * nothing and creates a record [I: deleted records believed not to hold their External ID].
   * What the user picks field by field in the merge screen is not modelled: the master's values stand.
   */
  merge(sobject: string, masterId: string, ...mergedIds: string[]): void {
    const s = this.sobjectOrThrow(sobject);
    if (!s.records.get(masterId)) throw new Error(`fakeSalesforce: cannot merge into ${masterId}: no such ${sobject}`);
    if (mergedIds.length < 1 || mergedIds.length > 2) throw new Error('fakeSalesforce: a merge takes one or two records besides the master');
    for (const id of mergedIds) if (id === masterId || !s.records.get(id)) throw new Error(`fakeSalesforce: cannot merge ${id}: no such ${sobject} besides the master`);
    for (const other of this.sobjects.values()) {
      for (const f of other.fields.values()) {
        if (f.type !== 'reference' || !f.referenceTo.includes(sobject)) continue;
        for (const id of mergedIds) for (const r of this.matching(other, f, id)) other.records.update(r, (x) => void (x[f.name] = masterId));
      }
    }
    for (const id of mergedIds) {
      const gone = { ...s.records.get(id)!, IsDeleted: true, MasterRecordId: masterId };
      this.delete(sobject, id);
      this.mergedAway.set(sobject, [...(this.mergedAway.get(sobject) ?? []), gone]);
    }
  }

  /** Copies of the records of one sObject merged away, as queryAll answers them (`IsDeleted`, `MasterRecordId`). */
  mergedRecords(sobject: string): FakeRecord[] {
    return (this.mergedAway.get(sobject) ?? []).map((r) => ({ ...r }));
  }

    setApiUsage(used: number, limit?: number): void {
    this.used = used;
    if (limit !== undefined) this.limit = limit;
  }

  apiUsage(): { used: number; limit: number } {
    return { used: this.used, limit: this.limit };
  }

  lockRowNext(n = 1): void {
    this.lockRows += n;
  }

  addValidationRule(sobject: string, test: (record: FakeRecord) => boolean, message: string): void {
    this.sobjectOrThrow(sobject).validations.push({ test, message });
  }

  addDuplicateRule(sobject: string, field: string): void {
    const s = this.sobjectOrThrow(sobject);
    s.duplicateRuleFields.push(field);
    // A duplicate rule compares the text of the field, a missing value as "".
    s.records.ensureIndex(duplicateRuleIndex(field), (r) => String(r[field] ?? '').toLowerCase());
  }

  handle(req: FakeRequest): FakeResponse {
    const { authorization: _auth, ...headers } = req.headers;
    this.requests.push({ ...req, headers });
    const tooLong = uriRefusal(req);
    if (tooLong) return tooLong;
    const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!auth || (this.options.accessToken !== undefined && auth[1] !== this.options.accessToken)) {
      return this.withLimit(wire(401, 'INVALID_SESSION_ID', 'Session expired or invalid'));
    }
    if (this.used >= this.limit) return this.withLimit(wire(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'));
    this.used += 1;
    return this.withLimit(this.route(req));
  }

  /**
   * Salesforce's own faults, injectable with `failNext`: `json_parser_error` is a whole-request 400
   * JSON_PARSER_ERROR that names no value of the request ("No such column 'Quantitay__c' on sobject
   * of type OBO_Line_Item__c at [line:53, column:23]", quoted in a public integration's error guide).
   */
  readonly faults: Record<SalesforceFault, (req: FakeRequest) => FakeResponse> = {
    json_parser_error: () => this.withLimit(wire(400, 'JSON_PARSER_ERROR', "No such column 'Legacy__c' on sobject of type Contact at [line:1, column:23]")),
  };

  rateLimited(seconds: number): FakeResponse {
    return this.withLimit({ ...wire(429, 'REQUEST_LIMIT_EXCEEDED', 'ConcurrentPerOrgLongTxn Limit exceeded.'), headers: { 'retry-after': String(seconds) } });
  }

  serverError(): FakeResponse {
    return this.withLimit(wire(503, 'SERVER_UNAVAILABLE', 'Server temporarily unavailable, please retry'));
  }

  // Salesforce's edge answers a maintenance or gateway failure with an HTML page.
  htmlError(): FakeResponse {
    return this.withLimit({ status: 503, headers: { 'content-type': 'text/html; charset=UTF-8' }, rawBody: proxyErrorPage(503, 'Service Unavailable') });
  }

  endpointOf(req: FakeRequest): string {
    return endpointOf(req);
  }

  private withLimit(r: FakeResponse): FakeResponse {
    return { ...r, headers: { 'sforce-limit-info': `api-usage=${this.used}/${this.limit}`, ...(r.headers ?? {}) } };
  }

  private sobjectOrThrow(sobject: string): SObjectState {
    const s = this.sobjects.get(sobject);
    if (!s) throw new Error(`fakeSalesforce: unknown sObject ${sobject}`);
    return s;
  }

  private index(s: SObjectState, field: string): void {
    s.records.ensureIndex(field, (r) => fold(r[field]));
  }

  /** Records whose `f` matches `value` by the field's rule, oldest first, through the index. */
  private matching(s: SObjectState, f: FieldDef, value: unknown): FakeRecord[] {
    if (f.name === 'Id') {
      const r = typeof value === 'string' ? s.records.get(value) : undefined;
      return r ? [r] : [];
    }
    const key = fold(value);
    if (key === undefined) return [];
    this.index(s, f.name);
    return s.records.lookup(f.name, key).filter((r) => same(f, r[f.name], value));
  }

  private newId(s: SObjectState): string {
    return `${s.prefix}${(this.nextId++).toString(36).toUpperCase().padStart(12, '0')}AAA`;
  }

  private findById(id: string): { s: SObjectState; r: FakeRecord } | undefined {
    for (const s of this.sobjects.values()) {
      const r = s.records.get(id);
      if (r) return { s, r };
    }
    return undefined;
  }

  /** Validate and apply one record (the state machine's heart). Changes `s` only on success. */
  private writeRecord(s: SObjectState, extField: FieldDef, value: string, fields: Record<string, unknown>, allowSave: boolean): WriteOutcome | { multiple: string[] } {
    const matches = this.matching(s, extField, value);
    if (matches.length > 1) return { multiple: matches.map((r) => r.Id) };
    const existing = matches[0];
    if (this.lockRows > 0) {
      this.lockRows -= 1;
      return { ok: false, error: err('UNABLE_TO_LOCK_ROW', `unable to obtain exclusive access to this record or 1 records: ${existing?.Id ?? value}`) };
    }
    const next: FakeRecord = existing ? { ...existing } : ({ Id: '' } as FakeRecord);
    const locked = Object.keys(fields).filter((k) => k !== extField.name && !(existing ? s.fields.get(k)?.updateable : s.fields.get(k)?.createable));
    if (locked.length > 0) {
      return { ok: false, error: err('INVALID_FIELD_FOR_INSERT_UPDATE', `Unable to create/update fields: ${locked.join(', ')}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`, locked) };
    }
    for (const [k, v] of Object.entries(fields)) {
      if (v === null) delete next[k];
      else next[k] = storedValue(s.fields.get(k), v);
    }
    next[extField.name] = value;
    const missing = [...s.fields.values()].filter((f) => f.required && (next[f.name] === undefined || next[f.name] === '')).map((f) => f.name);
    if (missing.length > 0) return { ok: false, error: err('REQUIRED_FIELD_MISSING', `Required fields are missing: [${missing.join(', ')}]`, missing) };
    for (const [name, f] of s.fields) {
      const v = next[name];
      if (!existing && v === undefined && f.defaultValue !== undefined) next[name] = f.defaultValue;
      if (v === undefined) continue;
      if (f.type === 'email' && (typeof v !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v))) {
        return { ok: false, error: err('INVALID_EMAIL_ADDRESS', `${name}: invalid email address: ${String(v)}`, [name]) };
      }
      const refused = k(fields, name) ? valueRefusal(name, f, v) : undefined;
      if (refused) return { ok: false, error: refused };
      if (f.type === 'reference') {
        if (typeof v !== 'string' || !/^[a-zA-Z0-9]{15}([a-zA-Z0-9]{3})?$/.test(v)) return { ok: false, error: err('MALFORMED_ID', `${name}: id value of incorrect type: ${String(v)}`, [name]) };
        const label = name === 'WhoId' ? 'Name ID' : name === 'WhatId' ? 'Related To ID' : name;
        if (!f.referenceTo.some((t) => v.startsWith(this.sobjects.get(t)?.prefix ?? PREFIXES[t] ?? '\u0000'))) {
          return { ok: false, error: err('FIELD_INTEGRITY_EXCEPTION', `${label}: id value of incorrect type: ${v}`, [name]) };
        }
        if (this.deleted.has(v)) return { ok: false, error: err('ENTITY_IS_DELETED', 'entity is deleted', [name]) };
        if (!this.findById(v)) return { ok: false, error: err('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', [name]) };
      }
      if (f.unique) {
        const clash = this.matching(s, f, v).find((r) => r.Id !== existing?.Id);
        if (clash) return { ok: false, error: err('DUPLICATE_VALUE', `duplicate value found: ${name} duplicates value on record with id: ${clash.Id}`, [name]) };
      }
    }
    for (const rule of s.validations) if (rule.test(next)) return { ok: false, error: err('FIELD_CUSTOM_VALIDATION_EXCEPTION', rule.message) };
    if (!existing && !allowSave) {
      for (const name of s.duplicateRuleFields) {
        if (next[name] !== undefined && s.records.lookup(duplicateRuleIndex(name), String(next[name]).toLowerCase()).length > 0) {
          return { ok: false, error: err('DUPLICATES_DETECTED', 'Use one of these records?') };
        }
      }
    }
    if (!existing) next.Id = this.newId(s);
    s.records.put(next);
    return { ok: true, id: next.Id, created: !existing };
  }

  /** The org as the query resource sees it (salesforce-fake-query.ts). */
  private readonly queries = new FakeQueries({
    fields: (sobject) => this.sobjects.get(sobject)?.fields,
    rows: (sobject, where) => {
      const s = this.sobjectOrThrow(sobject);
      if (!where) return [...s.records.values()];
      // SOQL compares text case-insensitively, whatever the field's uniqueness setting.
      this.index(s, where.field);
      const hits = [...new Set(where.values.map((v) => v.toLowerCase()))].flatMap((v) => s.records.lookup(where.field, v));
      return s.records.oldestFirst(hits.filter((r) => typeof r[where.field] === 'string'));
    },
    byId: (id) => {
      const found = this.findById(id);
      return found && { sobject: found.s.name, record: found.r };
    },
  });

  /** The org as the reference rules see it. */
  private readonly referenceOrg: ReferenceOrg = {
    referenceTo: (sobject, field) => {
      const f = this.sobjects.get(sobject)?.fields.get(field);
      return f?.type === 'reference' ? f.referenceTo : undefined;
    },
    isExternalId: (sobject, field) => this.sobjects.get(sobject)?.fields.get(field)?.externalId === true,
    idsMatching: (sobject, field, value) => {
      const s = this.sobjects.get(sobject)!;
      return this.matching(s, s.fields.get(field)!, value).map((r) => r.Id);
    },
  };

  /** A parent named by External ID (`Account: { AI_External_Id__c: 'acme' }`) replaced by its lookup Id, or the record's error. */
  private resolveReferences(s: SObjectState, fields: Record<string, unknown>): { fields: Record<string, unknown> } | { error: RecordFailure } {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) {
      if (!isReference(v)) {
        out[k] = v;
        continue;
      }
      const resolved = resolveReference(this.referenceOrg, s.name, k, v);
      if (!resolved) {
        out[k] = v;
        continue;
      }
      if ('error' in resolved) return { error: resolved.error };
      out[resolved.field] = resolved.id;
    }
    return { fields: out };
  }

  private unknownField(s: SObjectState, fields: Record<string, unknown>): FakeResponse | undefined {
    for (const k of Object.keys(fields)) {
      if (k === 'attributes') continue;
      if (isReference(fields[k]) && s.fields.get(lookupFieldOf(k))?.type === 'reference') continue;
      if (!s.fields.has(k) || k === 'Id') return wire(400, 'INVALID_FIELD', `No such column '${k}' on sobject of type ${s.name}`, [k]);
    }
    return undefined;
  }

  /**
   * A date or date-time value the JSON parser cannot read fails the whole request (nothing is
   * written), named by the first such value; its column is where the value sits in the body as
   * sent (`raw`: a number written with more digits than a double holds keeps its width there).
   */
  private parseError(s: SObjectState, records: ReadonlyArray<Record<string, unknown>>, body: unknown, raw?: string): FakeResponse | undefined {
    const text = raw ?? JSON.stringify(body);
    for (const r of records) {
      for (const [name, v] of Object.entries(r)) {
        const f = s.fields.get(name);
        const message = f && unparsable(f, v, text.indexOf(`${JSON.stringify(name)}:${JSON.stringify(v)}`) + name.length + 4);
        if (message) return wire(400, 'JSON_PARSER_ERROR', message);
      }
    }
    return undefined;
  }

  private collectionUpsert(version: number, s: SObjectState, extField: FieldDef, req: FakeRequest): FakeResponse {
    if (version < 46) return NOT_FOUND();
    const body = req.body as { allOrNone?: boolean; records?: Array<Record<string, unknown>> } | undefined;
    if (!body || !Array.isArray(body.records)) return wire(400, 'JSON_PARSER_ERROR', 'The request body must be {"allOrNone": boolean, "records": [...]}');
    if (body.records.length > 200) return wire(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call');
    for (const r of body.records) {
      const type = (r.attributes as { type?: string } | undefined)?.type;
      if (type !== s.name) return wire(400, 'INVALID_TYPE', `Each record must have attributes.type "${s.name}"`);
      const bad = this.unknownField(s, r);
      if (bad) return bad;
    }
    const parse = this.parseError(s, body.records, req.body, req.raw);
    if (parse) return parse;
    const allowSave = /allowSave\s*=\s*true/i.test(req.headers['sforce-duplicate-rule-header'] ?? '');
    const seen = new Map<string, number>();
    for (const r of body.records) if (typeof r[extField.name] === 'string') seen.set(String(r[extField.name]), (seen.get(String(r[extField.name])) ?? 0) + 1);
    const undo = s.records.beginUndo();
    const results = body.records.map((r): WriteOutcome => {
      const value = r[extField.name];
      if (typeof value !== 'string' || value === '') return { ok: false, error: err('MISSING_ARGUMENT', `${extField.name} not specified`, [extField.name]) };
      if ((seen.get(value) ?? 0) > 1) return { ok: false, error: err('DUPLICATE_EXTERNAL_ID', `Duplicate external id specified: ${value}`, [extField.name]) };
      const { attributes: _a, ...given } = r;
      const refs = this.resolveReferences(s, given);
      if ('error' in refs) return { ok: false, error: refs.error };
      const out = this.writeRecord(s, extField, value, refs.fields, allowSave);
      if ('multiple' in out) return { ok: false, error: err('DUPLICATE_EXTERNAL_ID', `${extField.name}: more than one record found for external id field: [${out.multiple.join(', ')}]`, [extField.name]) };
      return out;
    });
    const rolledBack = body.allOrNone === true && results.some((r) => !r.ok);
    if (rolledBack) undo();
    else s.records.endUndo();
    return {
      status: 200,
      body: results.map((r) =>
        r.ok && !rolledBack
          ? { id: r.id, success: true, errors: [], created: r.created }
          : {
              id: null,
              success: false,
              errors: [r.ok ? err('ALL_OR_NONE_OPERATION_ROLLED_BACK', 'Record rolled back because not all records were valid and the request was using AllOrNone header') : r.error],
            },
      ),
    };
  }

  /** One Bulk API row, by the rules a Collections write applies (references, values, required fields, validation). */
  private bulkWrite(sobject: string, operation: 'insert' | 'update' | 'upsert', matchField: string, matchValue: string, fields: Record<string, unknown>): WriteOutcome | { ok: false; error: RecordFailure; id?: string } {
    const s = this.sobjectOrThrow(sobject);
    const f = s.fields.get(matchField)!;
    if (operation === 'update' && !s.records.get(matchValue)) {
      // [I] the per-row error of an update naming no record.
      return { ok: false, error: this.deleted.has(matchValue) ? err('ENTITY_IS_DELETED', 'entity is deleted') : err('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id') };
    }
    const refs = this.resolveReferences(s, fields);
    if ('error' in refs) return { ok: false, error: refs.error };
    const out = this.writeRecord(s, f, operation === 'insert' ? '' : matchValue, refs.fields, false);
    if ('multiple' in out) return { ok: false, error: err('DUPLICATE_EXTERNAL_ID', `${matchField}: more than one record found for external id field: [${out.multiple.join(', ')}]`, [matchField]) };
    return out;
  }

  private singleUpsert(version: number, s: SObjectState, extField: FieldDef, value: string, req: FakeRequest): FakeResponse {
    const fields = (req.body ?? {}) as Record<string, unknown>;
    const bad = this.unknownField(s, fields) ?? this.parseError(s, [fields], fields);
    if (bad) return bad;
    const allowSave = /allowSave\s*=\s*true/i.test(req.headers['sforce-duplicate-rule-header'] ?? '');
    const refs = this.resolveReferences(s, fields);
    if ('error' in refs) return wire(400, refs.error.statusCode, refs.error.message, refs.error.fields);
    const out = this.writeRecord(s, extField, value, refs.fields, allowSave);
    if ('multiple' in out) return { status: 300, body: out.multiple.map((id) => `/services/data/v${version.toFixed(1)}/sobjects/${s.name}/${id}`) };
    if (!out.ok) return wire(400, out.error.statusCode, out.error.message, out.error.fields);
    if (out.created) return { status: 201, body: { id: out.id, success: true, errors: [], created: true } };
    if (version <= 45) return { status: 204 };
    return { status: 200, body: { id: out.id, success: true, errors: [], created: false } };
  }

  private route(req: FakeRequest): FakeResponse {
    const m = /^\/services\/data\/v(\d+\.\d)(\/.*)?$/.exec(req.path);
    if (!m) return NOT_FOUND();
    const version = Number(m[1]);
    const parts = (m[2] ?? '/').split('/').slice(1);
    if (req.method === 'GET' && parts[0] === 'query' && parts.length === 1) return this.queries.run(m[1]!, req.query.get('q'));
    if (req.method === 'GET' && parts[0] === 'query' && parts.length === 2) return this.queries.more(m[1]!, parts[1]!);
    if (parts[0] === 'jobs' && parts[1] === 'ingest') return this.bulk.route(m[1]!, parts.slice(2).filter((p) => p !== ''), req);
    if (req.method === 'GET' && parts[0] === 'limits' && parts.length === 1) return { status: 200, body: { DailyApiRequests: { Max: this.limit, Remaining: Math.max(0, this.limit - this.used) } } };
    if (parts[0] === 'composite' && parts[1] === 'sobjects' && parts.length === 4 && req.method === 'PATCH') {
      const s = this.sobjects.get(parts[2]!);
      const f = s?.fields.get(parts[3]!);
      if (!s || !f || !f.externalId) return NOT_FOUND();
      return this.collectionUpsert(version, s, f, req);
    }
    if (parts[0] === 'sobjects' && parts.length >= 3) {
      const s = this.sobjects.get(parts[1]!);
      if (!s) return NOT_FOUND();
      if (parts.length === 3 && parts[2] === 'describe' && req.method === 'GET') return { status: 200, body: describeSObject(s.name, [...s.fields.values()]) };
      if (parts.length === 3 && req.method === 'GET') {
        const r = s.records.get(parts[2]!);
        return r ? { status: 200, body: { attributes: { type: s.name }, ...r } } : NOT_FOUND();
      }
      if (parts.length >= 4 && req.method === 'PATCH') {
        const f = s.fields.get(parts[2]!);
        const value = parts.slice(3).join('/');
        if (!f || !f.externalId || value === '') return NOT_FOUND();
        return this.singleUpsert(version, s, f, value, req);
      }
    }
    return NOT_FOUND();
  }
}
