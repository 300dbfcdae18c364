/**
 * The state machine behind fakeHubSpot: the portal (FakeHubSpotCrm: objects, properties,
 * records, associations) behind what HubSpot checks before it: the bearer token, the
 * ten-second, daily and search-per-second limits, and the bodies of HubSpot's own faults.
 * No server and no interceptor here: `handle` takes a parsed request and commits; the
 * factory in hubspot-fake.ts puts it behind the fake HTTP kit's fronts.
 */
import { proxyErrorPage, type FakeRequest, type FakeResponse, type FakeVendor } from '../../testing/fake-http.js';
import { errorBody, FakeHubSpotCrm, type FakeHubSpotAssociation, type FakeHubSpotRecord, type FakePropertyDefinition } from './hubspot-fake-crm.js';
import type { FakeHubSpotOptions } from './hubspot-fake-options.js';

export type { FakeHubSpotOptions } from './hubspot-fake-options.js';

/**
 * HubSpot's own faults, injectable with `failNext` next to the shared ones: each answers in
 * place of the CRM with the exact body HubSpot sends, and commits nothing.
 */
export const HubSpotFault = {
  /** Whole-batch 409 CONFLICT naming only the first conflict (`Contact already exists. Existing ID: …`). */
  conflict: 'conflict',
  /** 400 `Unable to perform update/upsert by non-unique <idProperty> property` (the idProperty is not unique). */
  nonUniqueIdProperty: 'non_unique_id_property',
  /** 400 PROPERTY_DOESNT_EXIST naming a property every input sends (the portal lacks it). */
  unknownProperty: 'unknown_property',
  /** 429 with `policyName: "SECONDLY"`. */
  secondlyLimit: 'secondly_limit',
} as const;
export type HubSpotFault = (typeof HubSpotFault)[keyof typeof HubSpotFault];

type Inputs = { idProperty?: unknown; properties?: Record<string, unknown> }[];
const inputsOf = (req: FakeRequest): Inputs => {
  const inputs = (req.body as { inputs?: unknown } | undefined)?.inputs;
  return Array.isArray(inputs) ? (inputs as Inputs) : [];
};

export class FakeHubSpotState implements FakeVendor {
  readonly name = 'hubspot';
  /** Objects, properties, records and associations. */
  readonly crm: FakeHubSpotCrm;
  private readonly options: FakeHubSpotOptions;
  private readonly requestTimes: number[] = [];
  private readonly searchTimes: number[] = [];
  private dailyCount = 0;
  private readonly now: () => number;

  constructor(options: FakeHubSpotOptions = {}) {
    this.options = { ...options };
    this.now = options.now ?? Date.now;
    this.crm = new FakeHubSpotCrm(this.options);
  }

  defineProperty(objectType: string, name: string, definition: FakePropertyDefinition = {}): void {
    this.crm.defineProperty(objectType, name, definition);
  }

  /** Put a record straight into the portal, bypassing requests and limits (seeding); returns its id. */
  seed(objectType: string, properties: Record<string, string>): string {
    return this.crm.seed(objectType, properties);
  }

  /**
   * Delete a record as a user in HubSpot would (or as a merge removes the merged-away one): it is
   * gone with its associations, and a write naming its id is answered as HubSpot answers one
   * (association create: 207 VALIDATION_ERROR with INVALID_OBJECT_IDS). Returns whether it existed.
   */
  delete(objectType: string, id: string): boolean {
    return this.crm.remove(objectType, id);
  }

  /**
   * Merge two records as a user in HubSpot would (`POST /crm/v3/objects/{type}/merge`, see
   * `FakeHubSpotCrm.merge`): both end, a new record with a new id holds the result, and both old
   * ids answer with it. Returns the new record's id; throws when HubSpot would refuse the merge.
   */
  merge(objectType: string, primaryObjectId: string, objectIdToMerge: string): string {
    const r = this.crm.merge(objectType, primaryObjectId, objectIdToMerge);
    const body = r.body as { id?: string; message?: string };
    if (r.status !== 200 || !body.id) throw new Error(`fakeHubSpot: cannot merge: ${body.message ?? r.status}`);
    return body.id;
  }

  records(objectType: string): FakeHubSpotRecord[] {
    return this.crm.records(objectType);
  }

  associations(objectType: string, id: string): FakeHubSpotAssociation[] {
    return this.crm.associations(objectType, id);
  }

  /** Midnight in the account's time zone: the daily request count starts again (optionally with a new limit). */
  resetDaily(dailyLimit?: number): void {
    this.dailyCount = 0;
    if (dailyLimit !== undefined) this.options.dailyLimit = dailyLimit;
  }

  rateLimited(retryAfterSeconds: number): FakeResponse {
    const r = errorBody(429, 'RATE_LIMITS', 'You have reached your ten_secondly_rolling limit.', {
      errorType: 'RATE_LIMIT', policyName: 'TEN_SECONDLY_ROLLING', groupName: 'publicapi:private_app-api-calls-ten-secondly:1:1',
    });
    r.headers = { 'retry-after': String(retryAfterSeconds), 'x-hubspot-ratelimit-interval-milliseconds': '10000', 'x-hubspot-ratelimit-max': String(this.options.tenSecondLimit ?? 100), 'x-hubspot-ratelimit-remaining': '0' };
    return r;
  }

  serverError(): FakeResponse {
    return errorBody(503, 'SERVICE_UNAVAILABLE', 'Service Unavailable');
  }

  /** A proxy's HTML page, served (as HubSpot's edge does) with a JSON content type. */
  htmlError(): FakeResponse {
    return { status: 502, headers: { 'content-type': 'application/json;charset=utf-8' }, rawBody: proxyErrorPage(502, 'Bad Gateway') };
  }

  readonly faults: Record<HubSpotFault, (req: FakeRequest) => FakeResponse> = {
    conflict: () => errorBody(409, 'CONFLICT', 'Contact already exists. Existing ID: 37765128953'),
    non_unique_id_property: (req) => {
      const idProperty = inputsOf(req).find((i) => typeof i.idProperty === 'string')?.idProperty ?? 'email';
      return errorBody(400, 'VALIDATION_ERROR', `Unable to perform update/upsert by non-unique ${String(idProperty)} property`);
    },
    unknown_property: (req) => {
      const inputs = inputsOf(req);
      const shared = Object.keys(inputs[0]?.properties ?? {}).find((name) => inputs.every((i) => name in (i.properties ?? {}))) ?? 'nope';
      const message = `Property "${shared}" does not exist`;
      const detail = JSON.stringify([{ isValid: false, message, error: 'PROPERTY_DOESNT_EXIST', name: shared, localizedErrorMessage: message }]);
      return errorBody(400, 'VALIDATION_ERROR', `Property values were not valid: ${detail}`);
    },
    secondly_limit: () =>
      errorBody(429, 'RATE_LIMITS', 'You have reached your secondly limit.', {
        errorType: 'RATE_LIMIT', policyName: 'SECONDLY', groupName: 'publicapi:private_app-api-calls-secondly:1:1',
      }),
  };

  endpointOf(req: FakeRequest): string {
    const path = req.path.replace(/^(\/crm\/v3\/objects\/[^/]+\/)(?!batch\/|search$|merge$)[^/]+$/, '$1{id}').replace(/^(\/crm\/v3\/properties\/[^/]+\/)[^/]+$/, '$1{name}');
    return `${req.method} ${path}`;
  }

  handle(req: FakeRequest): FakeResponse {
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer\s+(.+)$/i.exec(auth)?.[1];
    if (!token) {
      return errorBody(401, 'INVALID_AUTHENTICATION', 'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview');
    }
    if (this.options.token !== undefined && token !== this.options.token) {
      return errorBody(401, 'INVALID_AUTHENTICATION', 'The access token provided is invalid or has expired.');
    }
    const limited = this.checkLimits(req);
    if (limited) return limited;
    const response = this.crm.route(req);
    if (this.options.dailyLimit !== undefined || this.options.tenSecondLimit !== undefined) {
      response.headers = { ...this.limitHeaders(), ...(response.headers ?? {}) };
    }
    return this.options.localize ? localized(response, this.options.localize) : response;
  }

  private limitHeaders(): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.options.tenSecondLimit !== undefined) {
      h['x-hubspot-ratelimit-interval-milliseconds'] = '10000';
      h['x-hubspot-ratelimit-max'] = String(this.options.tenSecondLimit);
      h['x-hubspot-ratelimit-remaining'] = String(Math.max(0, this.options.tenSecondLimit - this.requestTimes.length));
    }
    if (this.options.dailyLimit !== undefined) {
      h['x-hubspot-ratelimit-daily'] = String(this.options.dailyLimit);
      h['x-hubspot-ratelimit-daily-remaining'] = String(Math.max(0, this.options.dailyLimit - this.dailyCount));
    }
    return h;
  }

  private checkLimits(req: FakeRequest): FakeResponse | null {
    const t = this.now();
    if (req.path.endsWith('/search')) {
      while (this.searchTimes.length > 0 && this.searchTimes[0]! <= t - 1000) this.searchTimes.shift();
      if (this.searchTimes.length >= (this.options.searchPerSecond ?? 4)) {
        return errorBody(429, 'RATE_LIMITS', 'You have reached your secondly limit.', { errorType: 'RATE_LIMIT' });
      }
      this.searchTimes.push(t);
      return null;
    }
    if (this.options.dailyLimit !== undefined) {
      if (this.dailyCount >= this.options.dailyLimit) {
        const r = errorBody(429, 'RATE_LIMITS', 'You have reached your daily limit.', { errorType: 'RATE_LIMIT', policyName: 'DAILY', groupName: 'publicapi:private_app-api-calls-daily:1:1' });
        r.headers = this.limitHeaders();
        return r;
      }
      this.dailyCount += 1;
    }
    if (this.options.tenSecondLimit !== undefined) {
      while (this.requestTimes.length > 0 && this.requestTimes[0]! <= t - 10_000) this.requestTimes.shift();
      if (this.requestTimes.length >= this.options.tenSecondLimit) {
        const retryAfter = Math.max(1, Math.ceil((this.requestTimes[0]! + 10_000 - t) / 1000));
        return this.rateLimited(retryAfter);
      }
      this.requestTimes.push(t);
    }
    return null;
  }

}

type ErrorLike = { message?: unknown; errors?: unknown };

/** A message in the portal's language: a JSON list inside it has each entry's words localized, the list kept. */
function localizeMessage(message: string, localize: (message: string) => string): string {
  const list = /^(.*?): (\[.*\])$/s.exec(message);
  if (list) {
    try {
      const entries = JSON.parse(list[2]!) as Record<string, unknown>[];
      if (Array.isArray(entries)) {
        const words = entries.map((e) => ({ ...e, ...(typeof e.message === 'string' ? { message: localize(e.message), localizedErrorMessage: localize(e.message) } : {}) }));
        return `${localize(list[1]!)}: ${JSON.stringify(words)}`;
      }
    } catch {
      // no list: the whole message is words
    }
  }
  return localize(message);
}

function localizeError(e: ErrorLike, localize: (message: string) => string): ErrorLike {
  return {
    ...e,
    ...(typeof e.message === 'string' ? { message: localizeMessage(e.message, localize) } : {}),
    ...(Array.isArray(e.errors) ? { errors: (e.errors as ErrorLike[]).map((d) => ({ ...d, ...(typeof d.message === 'string' ? { message: localize(d.message) } : {}) })) } : {}),
  };
}

/** An error answer, or a 207's errors, worded by `localize`. */
function localized(response: FakeResponse, localize: (message: string) => string): FakeResponse {
  const body = response.body as ErrorLike | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return response;
  if (response.status >= 400) return { ...response, body: localizeError(body, localize) };
  if (Array.isArray(body.errors)) return { ...response, body: { ...body, errors: (body.errors as ErrorLike[]).map((e) => localizeError(e, localize)) } };
  return response;
}
