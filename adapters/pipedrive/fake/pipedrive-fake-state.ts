/**
 * The state machine behind fakePipedrive: what Pipedrive checks before the account
 * (FakePipedriveCrm): the API token (the `x-api-token` header; a token in the URL is accepted, as
 * Pipedrive accepts it, and counted so a test can assert it never happens), the burst window per
 * 2 s, the search window (10 per 2 s on every plan), the daily budget, and the routes of the v2
 * (and the few v1) endpoints the adapter calls. `handle` takes a parsed request and commits.
 */
import { proxyErrorPage, type FakeRequest, type FakeResponse, type FakeVendor, type FaultOptions } from '../../testing/fake-http.js';
import { errorResponse, FakePipedriveCrm, type FakeEntity } from './pipedrive-fake-crm.js';

export interface FakePipedriveOptions {
  /** The token accepted. Default: any non-empty token. */
  apiToken?: string;
  /** How long a write stays out of the search index, in ms. Default 1000 (Pipedrive's lag is undocumented; it is there). */
  searchLagMs?: number;
  /** Requests per 2-second window before a 429; false for none. Default 80 (an API token on a mid plan). */
  burstLimit?: number | false;
  /** Search requests per 2-second window before a 429; false for none. Default 10 (every plan). */
  searchLimit?: number | false;
  /** Requests per day before the daily-budget 429. Default none. */
  dailyBudget?: number;
  /** Seeded random faults (the fake HTTP kit's). */
  faults?: FaultOptions;
  /** Injected clock (ms). Default Date.now. */
  now?: () => number;
}

/** Pipedrive's own faults, injectable with `failNext` next to the shared ones; none commits anything. */
export const PipedriveFault = {
  /** 403 with an HTML page from the edge (Cloudflare), as a client hammering after 429s gets. */
  edgeBlock: 'edge_block',
  /** The daily-budget 429. */
  dailyBudget: 'daily_budget',
} as const;
export type PipedriveFault = (typeof PipedriveFault)[keyof typeof PipedriveFault];

const ENTITY_OF_PATH: Record<string, FakeEntity> = { persons: 'person', organizations: 'organization', deals: 'deal' };
const FIELDS_OF_PATH: Record<string, FakeEntity | 'activity'> = { personFields: 'person', organizationFields: 'organization', dealFields: 'deal', activityFields: 'activity' };
const WINDOW_MS = 2_000;

const dailyBudgetResponse = (): FakeResponse => ({ status: 429, headers: { 'retry-after': '3600', 'x-daily-requests-left': '0' }, body: { success: false, error: 'daily request budget exceeded', errorCode: 429 } });

export class FakePipedriveState implements FakeVendor {
  readonly name = 'pipedrive';
  readonly crm: FakePipedriveCrm;
  /** Requests that carried the token in the URL (`?api_token=`): it then lands in logs and proxies. */
  tokenInUrl = 0;
  private readonly now: () => number;
  private readonly burst: number[] = [];
  private readonly searches: number[] = [];
  private daily = 0;

  constructor(private readonly options: FakePipedriveOptions = {}) {
    this.now = options.now ?? Date.now;
    this.crm = new FakePipedriveCrm(this.now, options.searchLagMs ?? 1_000);
  }

  resetDaily(dailyBudget?: number): void {
    this.daily = 0;
    if (dailyBudget !== undefined) this.options.dailyBudget = dailyBudget;
  }

  endpointOf(req: FakeRequest): string {
    return `${req.method} ${req.path.replace(/\/\d+(?=\/|$)/g, '/{id}')}`;
  }

  rateLimited(retryAfterSeconds: number): FakeResponse {
    return { status: 429, headers: { 'retry-after': String(retryAfterSeconds), 'x-ratelimit-limit': '80', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(retryAfterSeconds) }, body: { success: false, error: 'Request over limit', errorCode: 429 } };
  }

  serverError(): FakeResponse {
    return errorResponse(500, 'Internal Server Error', 'ERR_UNKNOWN');
  }

  faults = {
    [PipedriveFault.edgeBlock]: (): FakeResponse => ({ status: 403, headers: { 'content-type': 'text/html; charset=UTF-8' }, rawBody: proxyErrorPage(403, 'Forbidden') }),
    [PipedriveFault.dailyBudget]: dailyBudgetResponse,
  };

  /** Spend one slot of a sliding window; false when it is full. */
  private spend(window: number[], limit: number | false | undefined): boolean {
    if (limit === false || limit === undefined) return true;
    const now = this.now();
    while (window.length > 0 && window[0]! <= now - WINDOW_MS) window.shift();
    if (window.length >= limit) return false;
    window.push(now);
    return true;
  }

  handle(req: FakeRequest): FakeResponse {
    if (req.query.has('api_token')) this.tokenInUrl += 1;
    const token = req.headers['x-api-token'] ?? req.query.get('api_token') ?? '';
    if (!token || (this.options.apiToken !== undefined && token !== this.options.apiToken)) {
      return { status: 401, body: { success: false, error: 'unauthorized access', errorCode: 401, error_info: 'Please check developers.pipedrive.com for more information about Pipedrive API.' } };
    }
    if (this.options.dailyBudget !== undefined && this.daily >= this.options.dailyBudget) return dailyBudgetResponse();
    this.daily += 1;
    if (!this.spend(this.burst, this.options.burstLimit ?? 80)) return this.rateLimited(2);
    const isSearch = req.path.includes('/itemSearch') || req.path.endsWith('/search');
    if (isSearch && !this.spend(this.searches, this.options.searchLimit ?? 10)) return this.rateLimited(2);
    return this.route(req);
  }

  private route(req: FakeRequest): FakeResponse {
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const parts = req.path.split('/').filter(Boolean);
    // /api/v2/<collection>[/<id>[/<verb>]] or /api/v1/...
    if (parts[0] !== 'api' || (parts[1] !== 'v1' && parts[1] !== 'v2')) return errorResponse(404, 'Unknown method .', 'ERR_NOT_FOUND');
    const [version, collection, id, verb] = [parts[1], parts[2] ?? '', parts[3], parts[4]];
    const fieldsEntity = FIELDS_OF_PATH[collection];
    if (version === 'v2' && fieldsEntity) {
      if (req.method === 'GET') return { status: 200, body: { success: true, data: this.crm.fieldsOf(fieldsEntity), additional_data: { next_cursor: null } } };
      if (req.method === 'POST') {
        const name = body.field_name;
        const type = body.field_type;
        if (typeof name !== 'string' || typeof type !== 'string') return errorResponse(400, 'Validation failed: field_name and field_type are required', 'ERR_SCHEMA_VALIDATION_FAILED');
        const options = Array.isArray(body.options) ? (body.options as { label: string }[]).map((o) => o.label) : [];
        const key = this.crm.defineField(fieldsEntity, name, type as 'varchar', options);
        return { status: 200, body: { success: true, data: this.crm.fieldsOf(fieldsEntity).find((f) => f.field_code === key) } };
      }
    }
    if (version === 'v2' && collection === 'itemSearch' && id === 'field' && req.method === 'GET') {
      const entity = req.query.get('entity_type') as FakeEntity | null;
      const field = req.query.get('field');
      const term = req.query.get('term');
      if (!entity || !ENTITY_OF_PATH[`${entity === 'person' ? 'persons' : entity === 'organization' ? 'organizations' : entity === 'deal' ? 'deals' : ''}`] || !field || term === null || term === '') {
        return errorResponse(400, 'Validation failed: term, entity_type and field are required', 'ERR_SCHEMA_VALIDATION_FAILED');
      }
      const f = this.crm.field(entity, field);
      if (!f) return errorResponse(400, `Validation failed: field "${field}" does not exist`, 'ERR_SCHEMA_VALIDATION_FAILED');
      if (!['varchar', 'varchar_auto', 'text', 'double', 'monetary', 'phone', 'address'].includes(f.field_type)) return errorResponse(400, `Validation failed: field "${field}" is not searchable`, 'ERR_SCHEMA_VALIDATION_FAILED');
      const ids = this.crm.search(entity, f.field_code, term, req.query.get('match') ?? 'middle');
      return { status: 200, body: { success: true, data: ids.map((i) => ({ result_score: 1, item: { id: i, type: entity } })), additional_data: { next_cursor: null } } };
    }
    if (version === 'v2' && collection === 'persons' && id === 'search' && req.method === 'GET') {
      const term = req.query.get('term');
      if (!term) return errorResponse(400, 'Validation failed: term is required', 'ERR_SCHEMA_VALIDATION_FAILED');
      const ids = req.query.get('exact_match') === 'true' && req.query.get('fields') === 'email' ? this.crm.searchEmail(term) : [];
      return { status: 200, body: { success: true, data: { items: ids.map((i) => ({ result_score: 1, item: { id: i, type: 'person' } })) }, additional_data: { next_cursor: null } } };
    }
    const entity = ENTITY_OF_PATH[collection];
    if (entity && version === 'v2') return this.records(req, entity, id, body);
    if (entity && version === 'v1' && verb === 'merge' && req.method === 'PUT') {
      const mergeWith = body.merge_with_id;
      if (typeof mergeWith !== 'number') return errorResponse(400, 'merge_with_id is required', 'ERR_BAD_REQUEST');
      return this.crm.merge(entity, Number(id), mergeWith);
    }
    if (version === 'v1' && collection === 'notes' && id === undefined) {
      if (req.method === 'POST') return this.crm.createNote(body);
      if (req.method === 'GET') return this.listNotes(req);
    }
    if (version === 'v2' && collection === 'activities' && id === undefined) {
      if (req.method === 'POST') return this.crm.createActivity(body);
      if (req.method === 'GET') return this.listActivities(req);
    }
    return errorResponse(404, 'Unknown method .', 'ERR_NOT_FOUND');
  }

  private records(req: FakeRequest, entity: FakeEntity, id: string | undefined, body: Record<string, unknown>): FakeResponse {
    if (id === undefined) {
      if (req.method === 'POST') return this.crm.create(entity, body);
      if (req.method === 'GET') return this.listRecords(req, entity);
      return errorResponse(404, 'Unknown method .', 'ERR_NOT_FOUND');
    }
    const n = Number(id);
    const label = entity === 'person' ? 'Person' : entity === 'organization' ? 'Organization' : 'Deal';
    if (req.method === 'GET') {
      const r = this.crm.get(entity, n);
      return r ? { status: 200, body: { success: true, data: this.crm.view(r) } } : errorResponse(404, `${label} not found`, 'ERR_NOT_FOUND');
    }
    if (req.method === 'PATCH') return this.crm.update(entity, n, body);
    if (req.method === 'DELETE') return this.crm.remove(entity, n) ? { status: 200, body: { success: true, data: { id: n } } } : errorResponse(404, `${label} not found`, 'ERR_NOT_FOUND');
    return errorResponse(404, 'Unknown method .', 'ERR_NOT_FOUND');
  }

  /** v2 list: `ids`, `org_id`, `updated_since` (RFC 3339), sorted by id or update time, cursor pages (the cursor is an offset here). */
  private listRecords(req: FakeRequest, entity: FakeEntity): FakeResponse {
    let rows = this.crm.list(entity);
    const ids = req.query.get('ids');
    if (ids) {
      const wanted = new Set(ids.split(',').map(Number));
      rows = rows.filter((r) => wanted.has(r.id));
    }
    const org = req.query.get('org_id');
    if (org) rows = rows.filter((r) => r.data.org_id === Number(org));
    const since = req.query.get('updated_since');
    if (since) {
      const at = Date.parse(since);
      if (!Number.isFinite(at)) return errorResponse(400, 'Validation failed: updated_since must be an RFC 3339 date-time', 'ERR_SCHEMA_VALIDATION_FAILED');
      // Pipedrive's update_time has whole seconds.
      rows = rows.filter((r) => Math.floor(r.updatedAt / 1000) * 1000 >= at);
    }
    const desc = req.query.get('sort_direction') === 'desc';
    const by = req.query.get('sort_by') === 'update_time' ? (r: { updatedAt: number; id: number }) => r.updatedAt : (r: { id: number }) => r.id;
    rows = [...rows].sort((a, b) => (by(a) - by(b)) * (desc ? -1 : 1));
    const limit = Math.min(Number(req.query.get('limit') ?? 100) || 100, 500);
    const start = Number(req.query.get('cursor') ?? 0) || 0;
    const page = rows.slice(start, start + limit);
    const keys = req.query.get('custom_fields');
    const only = keys ? new Set(keys.split(',')) : undefined;
    return { status: 200, body: { success: true, data: page.map((r) => this.crm.view(r, only)), additional_data: { next_cursor: start + limit < rows.length ? String(start + limit) : null } } };
  }

  /** v1 GET /notes: by person_id, org_id or deal_id, start/limit pages; `data` is null when there are none (v1 does that). */
  private listNotes(req: FakeRequest): FakeResponse {
    let rows = [...this.crm.notes.values()];
    for (const field of ['person_id', 'org_id', 'deal_id'] as const) {
      const v = req.query.get(field);
      if (v) rows = rows.filter((n) => n[field] === Number(v));
    }
    if (/desc/i.test(req.query.get('sort') ?? '')) rows.reverse();
    const start = Number(req.query.get('start') ?? 0) || 0;
    const limit = Math.min(Number(req.query.get('limit') ?? 100) || 100, 500);
    const page = rows.slice(start, start + limit);
    const more = start + limit < rows.length;
    return { status: 200, body: { success: true, data: page.length > 0 ? page : null, additional_data: { pagination: { start, limit, more_items_in_collection: more, ...(more ? { next_start: start + limit } : {}) } } } };
  }

  private listActivities(req: FakeRequest): FakeResponse {
    let rows = [...this.crm.activities.values()];
    for (const field of ['person_id', 'org_id', 'deal_id'] as const) {
      const v = req.query.get(field);
      // person_id: the activities whose primary participant is the person (v2 GET /activities).
      if (v) rows = rows.filter((a) => a[field] === Number(v) || (field === 'person_id' && a.participants.some((p) => p.primary && p.person_id === Number(v))));
    }
    const start = Number(req.query.get('cursor') ?? 0) || 0;
    const limit = Math.min(Number(req.query.get('limit') ?? 100) || 100, 500);
    return { status: 200, body: { success: true, data: rows.slice(start, start + limit), additional_data: { next_cursor: start + limit < rows.length ? String(start + limit) : null } } };
  }
}
