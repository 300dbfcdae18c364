/**
 * salesforceAdapter(): records and activities (Task) upserted by External ID fields through the
 * sObject Collections API, over jsforce 3.10.16. One HTTP attempt per call: the engine owns retries.
 */
import type { Connection as SdkConnection } from 'jsforce';
import { parentMemoKey, type ActivityWrite, type BatchContext, type CrmAdapter, type LinkRef, type RecordWrite, type WriteResult } from '../../src/adapter.js';
import { CrmError, CrmErrorKind, recordGoneError, registerSecret } from '../../src/errors.js';
import { engineObjects, objectSpec, requestGate, resolveParents, writeInOrder, type Prepared } from '../kit/adapter-kit.js';
import { loadVendorSdk, SALESFORCE_SDK } from '../kit/vendor-sdk.js';
import {
  classifySalesforceError, dailyLimitStop, jsonErrorBody, linkNotFound, missingReference, recordError, unparsableFailure, unparsableValue,
  type ClassifyContext, type ResponseInfo, type SalesforceRecordError, type SentRecord,
} from './salesforce-errors.js';
import { resolveSalesforceOptions, type SalesforceAdapterOptions, type SalesforceConnection, type SalesforceHttpRequest, type SalesforceObjectConfig } from './salesforce-options.js';
import { salesforceBulk, type SalesforceBulk } from './salesforce-bulk.js';
import { salesforceBulkLane } from './salesforce-bulk-lane.js';
import { activityLookups, activityValues, apiBase, collectionBody, collectionUrl, linkTargets, numericFields, recordJson, recordValues } from './salesforce-requests.js';
import type { DescribeResult } from './salesforce-fields.js';
import { MAX_WHERE_STRING, salesforceReads } from './salesforce-reads.js';
import { groupsForUrl, queryUrl, queryUrlBytes, soqlList } from './soql.js';

// An optional peer: without it, importing this module throws the one message naming what to install.
const { Connection } = loadVendorSdk<{ Connection: typeof SdkConnection }>(SALESFORCE_SDK);

const VENDOR = 'salesforce';
const MAX_BATCH = 200;
/**
 * The longest query URL (path and query string) sent, in bytes as sent (UTF-8, percent-encoded:
 * a CJK character is 9 bytes, an emoji 12). Salesforce answers 414 URI Too Long past 16,384 bytes
 * of URI, and 431 past 16,384 bytes of URI and headers together (REST API limits, help article
 * 000386264): 15,000 leaves 1,384 bytes for the headers (Authorization with the session id, Host,
 * User-Agent, Accept).
 */
export const MAX_QUERY_URL_BYTES = 15_000;
/**
 * Usage is only learned from responses, so after a stop nothing would ever refresh it: once the
 * last figure is this old (the engine's default quota pause), one request may go out to re-read it.
 */
const USAGE_RECHECK_MS = 15 * 60_000;

/**
 * jsforce retries GET/PUT/DELETE on 420/429/5xx and network errors (5 times, ignoring
 * Retry-After) unless told otherwise per request: an empty method list turns every retry off,
 * 420 included (it bypasses maxRetries).
 */
/**
 * Per-record codes of a lookup set to an Id that no longer names a record: ENTITY_IS_DELETED (in
 * the Recycle Bin, also what a merge leaves of the merged-away records) and
 * INVALID_CROSS_REFERENCE_KEY (no such record), each naming the lookup field in `fields`.
 */
const DEAD_REFERENCE_CODES = new Set(['ENTITY_IS_DELETED', 'INVALID_CROSS_REFERENCE_KEY']);

const NO_RETRY = { maxRetries: 0, methods: [] as string[], statusCodes: [] as number[], errorCodes: [] as string[] };

interface CollectionResult {
  id?: string | null;
  success?: boolean;
  created?: boolean;
  errors?: SalesforceRecordError[];
}

interface QueryResult {
  done?: boolean;
  nextRecordsUrl?: string;
  records?: Array<Record<string, unknown>>;
}

interface TransportLike {
  httpRequest(req: unknown, options?: unknown): Promise<{ statusCode: number; headers: Record<string, string> }>;
}

export interface SalesforceAdapter extends CrmAdapter {
  /** The jsforce Connection in use (built from options or injected). */
  readonly connection: SalesforceConnection;
  /**
   * `GET /sobjects/{sobject}/describe`, one request through the adapter's own path (rate budget,
   * request count, usage figures, classified and secret-free errors): what `schema pull` reads.
   */
  describeSObject(sobject: string): Promise<DescribeResult>;
  /**
   * Bulk API 2.0 ingest jobs through the same request path (salesforce-bulk.ts): upsert rows by
   * external id in jobs, or follow a job known by its id. The engine's bulk lane (`bulkLane`) runs on it.
   */
  readonly bulk: SalesforceBulk;
}

export function salesforceAdapter(options: SalesforceAdapterOptions): SalesforceAdapter {
  const opts = resolveSalesforceOptions(options);
  const conn: SalesforceConnection =
    opts.connection ??
    (new Connection({ instanceUrl: opts.instanceUrl, accessToken: opts.accessToken, version: opts.apiVersion }) as unknown as SalesforceConnection);
  registerSecret(opts.accessToken);
  registerSecret(conn.accessToken ?? undefined);
  // An injected connection with OAuth2 refresh gets new tokens over time: keep redacting them.
  conn.on?.('refresh', (token) => registerSecret(token));
  const base = apiBase(opts.apiVersion);
  const gate = requestGate();

  const usage = () => {
    const u = conn.limitInfo?.apiUsage;
    return u && u.limit > 0 ? u : undefined;
  };
  // jsforce replaces `limitInfo` on every response carrying Sforce-Limit-Info: a new object is a fresh figure.
  let seenLimitInfo = conn.limitInfo;
  let usageAt = Date.now();
  const noteUsage = () => {
    if (conn.limitInfo !== seenLimitInfo) {
      seenLimitInfo = conn.limitInfo;
      usageAt = Date.now();
    }
  };

  /** The connection's transport, wrapped to see each exchange's status and headers (HttpApiError has neither). */
  const observe = (onResponse: (r: ResponseInfo) => void): TransportLike | undefined => {
    const inner = (conn as unknown as { _transport?: TransportLike })._transport;
    if (!inner || typeof inner.httpRequest !== 'function') return undefined;
    return {
      httpRequest(req, options) {
        gate.count();
        const pending = inner.httpRequest(req, options);
        pending.then((res) => onResponse({ status: res.statusCode, headers: res.headers }), () => undefined);
        return pending;
      },
    };
  };

  /**
   * One request; a write passes its batch `context`, whose `beforeSend` may stop it (its error
   * propagates unchanged). `text` returns the body unparsed (Bulk API result sets are CSV).
   */
  async function send<R>(req: SalesforceHttpRequest, ctx: ClassifyContext = {}, context?: BatchContext, text = false): Promise<R> {
    const before = usage();
    if (before && before.used / before.limit >= opts.dailyLimitShare && Date.now() - usageAt < USAGE_RECHECK_MS) throw dailyLimitStop(before, opts.dailyLimitShare);
    let response: ResponseInfo | undefined;
    const transport = observe((r) => (response = r));
    // The observed transport counts each exchange itself; without one, count the call.
    return gate.send(async () => {
      try {
        return await conn.request<R>(req, { retry: NO_RETRY, ...(text ? { responseType: 'text/plain' } : {}), ...(transport ? { transport } : {}) });
      } catch (err) {
        throw classifySalesforceError(text ? jsonErrorBody(err) : err, { ...ctx, response, usage: usage() });
      } finally {
        noteUsage();
      }
    }, { budgets: [opts.rateBudget], context, counted: !transport });
  }

  async function query(soql: string): Promise<Array<Record<string, unknown>>> {
    const records: Array<Record<string, unknown>> = [];
    let url: string | undefined = queryUrl(base, soql);
    while (url) {
      const page: QueryResult = await send<QueryResult>({ method: 'GET', url });
      records.push(...(page.records ?? []));
      url = page.done === false && page.nextRecordsUrl ? page.nextRecordsUrl : undefined;
    }
    return records;
  }

  /** Id by exact value of `field` (SOQL compares text case-insensitively; external ids here are case-sensitive). */
  async function idsByValue(sobject: string, field: string, values: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const head = `SELECT Id, ${field} FROM ${sobject} WHERE ${field} IN (`;
    // A value no query can carry is in no record (an External ID holds 255 characters): not found, unasked.
    const distinct = [...new Set(values)].filter((v) => v.length <= MAX_WHERE_STRING && queryUrlBytes(base, `${head}${soqlList([v])})`) <= MAX_QUERY_URL_BYTES);
    for (const chunk of groupsForUrl(base, head, ')', distinct, MAX_QUERY_URL_BYTES)) {
      const rows = await query(`${head}${soqlList(chunk)})`);
      for (const row of rows) {
        const value = row[field];
        if (typeof value === 'string' && typeof row.Id === 'string' && !found.has(value)) found.set(value, row.Id);
      }
    }
    return found;
  }

  /**
   * One collection upsert; returns one WriteResult per record in order. `explain` may name the
   * cause of a record's failure better than Salesforce's words (a link that does not exist).
   * A whole-request JSON_PARSER_ERROR names one unreadable value: the records holding it fail,
   * named by field and value, and the rest go again in one request (instead of the engine halving
   * the batch); when no record holds it, the error propagates as before.
   */
  async function upsertCollection(
    spec: SalesforceObjectConfig,
    numeric: ReadonlySet<string>,
    records: Array<Record<string, unknown>>,
    context?: BatchContext,
    explain?: (index: number, errors: readonly SalesforceRecordError[] | undefined) => CrmError | undefined,
  ): Promise<WriteResult[]> {
    if (records.length === 0) return [];
    let body: unknown;
    try {
      body = await sendCollection(spec, numeric, records, context);
    } catch (err) {
      const held = err instanceof CrmError ? holdersOf(spec, numeric, records, err) : undefined;
      if (!held) throw err;
      const rest = records.map((_r, i) => i).filter((i) => !held.has(i));
      const again = await upsertCollection(spec, numeric, rest.map((i) => records[i]!), context, explain && ((j, errors) => explain(rest[j]!, errors)));
      return records.map((_r, i) => held.get(i) ?? again[rest.indexOf(i)]!);
    }
    const results: CollectionResult[] = Array.isArray(body) ? body : [];
    return records.map((record, i) => {
      const r = results[i];
      const better = r && r.success !== true ? explain?.(i, r.errors) : undefined;
      return better ? { ok: false, error: better } : toWriteResult(r, { sobject: spec.sobject, record });
    });
  }

  /** The wire call of `sobject(T).upsert(records[], extIdField, { allOrNone: false })` (jsforce `_upsertMany`), issued directly so the request carries our no-retry options. */
  function sendCollection(spec: SalesforceObjectConfig, numeric: ReadonlySet<string>, records: Array<Record<string, unknown>>, context?: BatchContext): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.allowDuplicateSave) headers['Sforce-Duplicate-Rule-Header'] = 'allowSave=true';
    return send<unknown>(
      {
        method: 'PATCH',
        url: collectionUrl(opts.apiVersion, spec),
        headers,
        body: collectionBody(spec.sobject, records, numeric),
      },
      { externalIds: records.map((r) => String(r[spec.externalIdField])), multiRecordWrite: records.length > 1 },
      context,
    );
  }

  const reads = salesforceReads({ objects: opts.objects, apiBase: base, maxUrlBytes: MAX_QUERY_URL_BYTES, query });
  const spec = <K extends SalesforceObjectConfig['kind']>(object: string, kind: K) => objectSpec(VENDOR, opts.objects, object, kind);
  const targets = linkTargets(opts.objects);
  const objects = engineObjects(opts.objects, { slotted: true, ...(opts.fieldDefinitions ? { definitions: opts.fieldDefinitions } : {}), vendor: 'salesforce' });
  // Per object, the fields whose checked values are numbers: their digits go out as JSON numbers.
  const numeric = new Map(Object.entries(objects).map(([name, o]) => [name, numericFields(o.definitions)]));

  /** The link a record's `Foreign key external ID ... not found` error names, as LINK_NOT_FOUND. */
  const linkFailure = (write: RecordWrite, errors: readonly SalesforceRecordError[] | undefined): CrmError | undefined => {
    const missing = missingReference(errors);
    if (!missing) return undefined;
    const named = (write.links ?? []).filter((l) => targets[l.object]?.sobject === missing.sobject && targets[l.object]?.externalIdField === missing.field);
    const link = named.find((l) => l.externalId === missing.value) ?? named.at(-1);
    const first = errors?.[0];
    return link ? linkNotFound(link, targets[link.object]!, `${first?.statusCode ?? first?.errorCode}: ${first?.message}`) : undefined;
  };

  /** External id -> Id of this parent object's records. */
  const lookupParents = (object: string, externalIds: string[]) => {
    const p = spec(object, 'record');
    return idsByValue(p.sobject, p.externalIdField, externalIds);
  };

  function parentNotFound(ref: LinkRef): CrmError {
    const p = spec(ref.object, 'record');
    return new CrmError(`parent ${ref.object} ${JSON.stringify(ref.externalId)} (${p.sobject}.${p.externalIdField}) does not exist in Salesforce; write it first, then retry`, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: 'PARENT_NOT_FOUND' });
  }

  /**
   * onMissing 'skip': which of the records this ledger wrote (the writes with a `knownId`) a record
   * still holds the external id of, by one query per batch before the upsert; undefined when none is
   * to be checked. sObject Collections upsert documents no update-only mode (its one parameter is
   * `allOrNone`; `updateOnly` is documented for the single-record upsert by external id, and
   * Salesforce's Data Loader sends it on Collections too, which is no public promise), so a record
   * found gone is not sent at all. One deleted between the query and the upsert is created by it,
   * and the engine reports that `recreated`: visible, never silent.
   */
  async function stillThere(s: Extract<SalesforceObjectConfig, { kind: 'record' }>, writes: readonly RecordWrite[]): Promise<Map<string, string> | undefined> {
    if (s.onMissing !== 'skip') return undefined;
    const known = writes.filter((w) => w.knownId !== undefined && w.externalId);
    return known.length === 0 ? undefined : idsByValue(s.sobject, s.externalIdField, known.map((w) => w.externalId));
  }

  function checkBatch(writes: readonly unknown[]): void {
    if (writes.length > MAX_BATCH) {
      throw new CrmError(`a Salesforce collection call takes at most ${MAX_BATCH} records, got ${writes.length}`, { vendor: VENDOR, kind: CrmErrorKind.permanent, splittable: true });
    }
  }

  const bulk = salesforceBulk((req, o) => send(req, {}, undefined, o?.text), opts.apiVersion, opts.bulk);

  return {
    name: VENDOR,
    capabilities: { maxBatch: MAX_BATCH, nativeActivityUpsert: true },
    objects,
    connection: conn,
    describeSObject: (sobject: string) => send<DescribeResult>({ method: 'GET', url: `${base}/sobjects/${encodeURIComponent(sobject)}/describe` }),
    bulk,
    bulkLane: salesforceBulkLane({ bulk, objects: opts.objects, targets, minRecords: opts.bulk?.minRecords, onProgress: opts.bulk?.onProgress, refuse: refuseRecord, refuseActivity, parentNotFound }),

    async upsertRecords(object: string, writes: RecordWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const s = spec(object, 'record');
      checkBatch(writes);
      const present = await stillThere(s, writes);
      const prepare = (w: RecordWrite): Prepared<RecordWrite> => {
        const refused = refuseRecord(object, s, w);
        if (refused) return { fail: refused };
        if (present && w.knownId !== undefined && !present.has(w.externalId)) {
          return { fail: recordGoneError(VENDOR, `${object} ${JSON.stringify(w.externalId)}`, w.knownId, `no ${s.sobject} has ${s.externalIdField}=${w.externalId}`) };
        }
        return { send: w };
      };
      // Links travel inline as external-id references: no request beyond the upsert itself.
      return writeInOrder(writes, prepare, (sent) =>
        upsertCollection(s, numeric.get(object)!, sent.map((w) => recordValues(s, w, targets)), context, (i, errors) => linkFailure(sent[i]!, errors)),
      );
    },

    async createActivities(object: string, writes: ActivityWrite[], context?: BatchContext): Promise<WriteResult[]> {
      const s = spec(object, 'activity');
      checkBatch(writes);
      const attachable = (w: ActivityWrite) => w.parent.object in s.parents;
      const lookups = new Map(writes.map((w) => [w, activityLookups(s, w)]));
      // One query per parent object for every target and link of the batch; ids known from
      // earlier in the call, or from an earlier attempt of this batch, are not queried again.
      const wanted = writes.filter((w) => attachable(w) && w.key).flatMap((w) => [...lookups.get(w)!.values()].map((parent) => ({ ...w, parent })));
      const ids = await resolveParents(wanted, context, lookupParents);
      const sentFrom: ActivityWrite[] = [];
      const prepare = (w: ActivityWrite): Prepared<Record<string, unknown>> => {
        const refused = refuseActivity(object, s, w);
        if (refused) return { fail: refused };
        const set: Record<string, string> = {};
        for (const [field, ref] of lookups.get(w)!) {
          const id = ids.get(parentMemoKey(ref.object, ref.externalId));
          if (id) set[field] = id;
          else return { fail: sameRef(ref, w.parent) ? parentNotFound(ref) : linkNotFound(ref, targets[ref.object]!) };
        }
        sentFrom.push(w);
        return { send: activityValues(s, w, set) };
      };
      // A lookup id known from before (the batch memo) that Salesforce says is deleted or unknown
      // (merged away, deleted since it was read) is dropped: the engine sends the record again and
      // the parent is queried again by its external id. The error itself stands.
      const dropDead = (i: number, errors: readonly SalesforceRecordError[] | undefined): undefined => {
        for (const e of errors ?? []) {
          if (!DEAD_REFERENCE_CODES.has(e.statusCode ?? e.errorCode ?? '')) continue;
          for (const field of e.fields ?? []) {
            const ref = lookups.get(sentFrom[i]!)?.get(field);
            if (ref) context?.memo.delete(parentMemoKey(ref.object, ref.externalId));
          }
        }
        return undefined;
      };
      return writeInOrder(writes, prepare, (records) => upsertCollection(s, numeric.get(object)!, records, context, dropDead));
    },

    async findActivities(object: string, writes: ActivityWrite[]): Promise<Map<string, string>> {
      const s = spec(object, 'activity');
      const keys = writes.map((w) => w.key).filter(Boolean);
      if (keys.length === 0) return new Map();
      return idsByValue(s.sobject, s.externalIdField, keys);
    },

    // One SOQL query per group (each as many ids as one query URL holds), links in the same query.
    planReads: reads.planReads,
    readRecords: reads.readRecords,

    classifyError: (err: unknown) => classifySalesforceError(err, { usage: usage() }),
    apiCalls: gate.apiCalls,
  };
}

/**
 * The records (by index) holding the value a JSON_PARSER_ERROR names, each with its failure;
 * undefined when the error names none of them. The column it points at picks the field (so a
 * Subject that happens to read "12/01/2026" is not taken for the date); every record with that
 * value in that field fails with it. Without a usable column, any field holding the value counts.
 */
function holdersOf({ sobject, externalIdField }: SalesforceObjectConfig, numeric: ReadonlySet<string>, records: ReadonlyArray<Record<string, unknown>>, error: CrmError): Map<number, WriteResult> | undefined {
  const named = unparsableValue(error);
  if (!named) return undefined;
  // The key travels as text, which the parser always reads: never the culprit.
  const holds = (record: Readonly<Record<string, unknown>>, k: string) => {
    const v = record[k];
    return k !== externalIdField && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && String(v) === named.value;
  };
  const at = named.column === undefined ? undefined : recordAt(sobject, numeric, records, named.column);
  const fieldAt = at === undefined ? undefined : Object.keys(records[at]!).find((k) => holds(records[at]!, k));
  const held = new Map<number, WriteResult>();
  records.forEach((record, i) => {
    const field = fieldAt !== undefined ? (holds(record, fieldAt) ? fieldAt : undefined) : Object.keys(record).find((k) => holds(record, k));
    if (field !== undefined) held.set(i, { ok: false, error: unparsableFailure(sobject, field, record[field], named.type, error) });
  });
  return held.size > 0 ? held : undefined;
}

/** The record whose JSON spans `column` (1-based) of the one-line body `sendCollection` sent. */
function recordAt(sobject: string, numeric: ReadonlySet<string>, records: ReadonlyArray<Record<string, unknown>>, column: number): number | undefined {
  let start = collectionBody(sobject, []).length - 2;
  for (let i = 0; i < records.length; i++) {
    const end = start + recordJson(sobject, records[i]!, numeric).length;
    if (column - 1 >= start && column - 1 < end) return i;
    start = end + 1;
  }
  return undefined;
}

function toWriteResult(r: CollectionResult | undefined, sent: SentRecord): WriteResult {
  if (!r || typeof r !== 'object') {
    return { ok: false, error: new CrmError('Salesforce returned no result for this record; it may or may not have been written', { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true }) };
  }
  if (r.success === true && typeof r.id === 'string' && r.id) return { ok: true, recordId: r.id, created: r.created === true };
  if (r.success === true) {
    return { ok: false, error: new CrmError('Salesforce reported success without a record id', { vendor: VENDOR, kind: CrmErrorKind.transient, ambiguous: true }) };
  }
  return { ok: false, error: recordError(r.errors, sent) };
}

/** Why a record write cannot be sent at all: no external id, or a link the config gives no lookup field. */
function refuseRecord(object: string, s: Extract<SalesforceObjectConfig, { kind: 'record' }>, w: RecordWrite): CrmError | undefined {
  if (w.externalId === '' || w.externalId === undefined || w.externalId === null) return missingValue(`${s.sobject}.${s.externalIdField}`);
  const stray = (w.links ?? []).find((l) => s.links?.[l.object] === undefined);
  return stray ? linkNotConfigured(object, 'links', stray) : undefined;
}

/** Why an activity cannot be sent at all: a parent or link the config gives no lookup field, or no key. */
function refuseActivity(object: string, s: Extract<SalesforceObjectConfig, { kind: 'activity' }>, w: ActivityWrite): CrmError | undefined {
  if (!(w.parent.object in s.parents)) return linkNotConfigured(object, 'parents', w.parent, 'PARENT_NOT_CONFIGURED');
  const stray = (w.links ?? []).find((l) => !(l.object in s.parents));
  if (stray) return linkNotConfigured(object, 'parents', stray);
  return w.key ? undefined : missingValue(`${s.sobject}.${s.externalIdField}`);
}

const sameRef = (a: LinkRef, b: LinkRef) => a.object === b.object && a.externalId === b.externalId;

/** A target or link to an object this one has no lookup field for in the options. */
function linkNotConfigured(object: string, map: 'links' | 'parents', ref: LinkRef, vendorCode = 'LINK_NOT_CONFIGURED'): CrmError {
  return new CrmError(`${object} cannot ${map === 'links' ? 'link' : 'attach'} to "${ref.object}": configure objects.${object}.${map}.${ref.object} (its lookup field)`, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode });
}

function missingValue(field: string): CrmError {
  return new CrmError(`${field} is empty: Salesforce cannot upsert without an external id value`, { vendor: VENDOR, kind: CrmErrorKind.permanent, vendorCode: 'MISSING_EXTERNAL_ID' });
}
