/**
 * fakeHubSpot: an in-memory HubSpot CRM speaking the v3 objects / v4 associations / v3
 * properties wire format (CRM-API.md §1), built on the shared FakeHttpCore so it gets request
 * counts, seeded faults and both fronts (nock, loopback server).
 *
 * It enforces what real HubSpot enforces and what the adapter must survive: bearer token,
 * unique-value idProperty, unknown properties and refused values (the property types, options and
 * deal pipelines of hubspot-fake-properties.ts: whole-batch 400 on upsert, per-input 207 on a
 * traced create), 100 inputs per batch, duplicate ids in one upsert, notes/tasks need
 * hs_timestamp, the ten-second / daily / search-per-second limits, and a search index that
 * lags writes by `searchLagMs`, and the association types valid for each pair of objects.
 * Batch read answers by HubSpot id, by any unique property and by contact email (without regard
 * to case), with only the asked properties and HubSpot's three defaults.
 * Statuses follow HubSpot: batch upsert 200/207 (never 201), batch create 201/207, batch read
 * 200/207, single create 201, and v4 association batch create 201/207 as specified (200 with
 * `associationCreateStatus: 200`, which the SDK's `batchApi.create` does not accept). Error
 * messages are English unless `localize` words them as a portal in another language.
 *
 * The state lives in hubspot-fake-state.ts (limits, auth), hubspot-fake-crm.ts (the portal's
 * records) and hubspot-fake-crm-associations.ts (their associations); this file only puts it
 * behind the fronts.
 */
import { FakeHttpCore, fakeCrmBase, type FakeCrmBase, interceptWithNock, listenLoopback, type FaultOptions, type FaultKind } from '../../testing/fake-http.js';
import { FakeHubSpotState, HubSpotFault, type FakeHubSpotOptions } from './hubspot-fake-state.js';
import type { FakeHubSpotAssociation, FakeHubSpotRecord, FakePipeline, FakePropertyDefinition } from './hubspot-fake-crm.js';

export { FakeHubSpotState, HubSpotFault, type FakeHubSpotAssociation, type FakeHubSpotOptions, type FakeHubSpotRecord, type FakePipeline, type FakePropertyDefinition };

export interface FakeHubSpot extends FakeCrmBase<FaultKind | HubSpotFault> {
  /** The state machine (records, properties). */
  state: FakeHubSpotState;
  /** Serve on a loopback port (0 = any). `basePath` is `http://127.0.0.1:PORT`. */
  listen(port?: number): Promise<{ basePath: string; close(): Promise<void> }>;
  /** Intercept `origin` (default https://api.hubapi.com) with nock. */
  intercept(origin?: string): Promise<{ basePath: string; stop(): void }>;
  /** Records of one object type (`contacts`, `notes`, ...). */
  records(objectType: string): FakeHubSpotRecord[];
  /**
   * The associations of one record, from its side: `{ toObjectType, toId, typeId, label }` each,
   * a primary company listed with its unlabeled type beside it (contact->company 279 and 1).
   * [] when the record does not exist.
   */
  associations(objectType: string, id: string): FakeHubSpotAssociation[];
  /**
   * Define (or redefine) a property: `unique: true` makes it usable as an upsert idProperty;
   * `type` (string, number, bool, enumeration, date, datetime, phone_number), `fieldType` (checkbox:
   * a multi-select) and `options` are what writes are then held to, as HubSpot holds them.
   */
  defineProperty(objectType: string, name: string, definition?: FakePropertyDefinition): void;
  /** Add (or replace, by id) a deal pipeline; its stage ids become `dealstage` values. The portal starts with `default`. */
  definePipeline(pipeline: FakePipeline): void;
  /** Delete a record as a user in HubSpot would, with its associations (see `FakeHubSpotState.delete`); returns whether it existed. */
  delete(objectType: string, id: string): boolean;
  /** Merge `objectIdToMerge` into `primaryObjectId` as a user in HubSpot would (see `FakeHubSpotState.merge`); returns the id of the record the merge made. */
  merge(objectType: string, primaryObjectId: string, objectIdToMerge: string): string;
  /** Remove a property (the portal does not have it). */
  removeProperty(objectType: string, name: string): void;
  /** Start a new "day" for `dailyLimit`, optionally with a new limit. */
  resetDaily(dailyLimit?: number): void;
}

/**
 * An in-memory HubSpot with contacts, companies and deals (each with a unique `ai_external_id`),
 * and notes and tasks (with a `crm_upsert_key` property) defined, associated by the
 * HUBSPOT_DEFINED types of hubspot-fake-associations.ts. Point the adapter's `basePath` at `listen()`
 * or `intercept()`.
 */
export function fakeHubSpot(options: FakeHubSpotOptions = {}): FakeHubSpot {
  return fakeHubSpotFromState(new FakeHubSpotState(options), options.faults);
}

/** fakeHubSpot over a state built (and perhaps seeded) beforehand, with its random fault schedule. */
export function fakeHubSpotFromState(state: FakeHubSpotState, faults?: FaultOptions): FakeHubSpot {
  const core = new FakeHttpCore(state, faults);
  return {
    ...fakeCrmBase<FaultKind | HubSpotFault>(core, 'https://api.hubapi.com'),
    state,
    async listen(port = 0) {
      const server = await listenLoopback(core, port);
      return { basePath: server.url, close: () => server.close() };
    },
    async intercept(origin = 'https://api.hubapi.com') {
      const front = await interceptWithNock(core, origin);
      return { basePath: origin.replace(/\/+$/, ''), stop: () => front.stop() };
    },
    records: (objectType) => state.records(objectType),
    associations: (objectType, id) => state.associations(objectType, id),
    defineProperty: (objectType, name, definition) => state.defineProperty(objectType, name, definition),
    delete: (objectType, id) => state.delete(objectType, id),
    merge: (objectType, primaryObjectId, objectIdToMerge) => state.merge(objectType, primaryObjectId, objectIdToMerge),
    removeProperty: (objectType, name) => state.crm.removeProperty(objectType, name),
    definePipeline: (pipeline) => state.crm.definePipeline(pipeline),
    resetDaily: (dailyLimit) => state.resetDaily(dailyLimit),
  };
}
