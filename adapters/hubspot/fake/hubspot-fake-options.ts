/** What a fake HubSpot portal can be set up with. */
import type { FaultOptions } from '../../testing/fake-http.js';

export interface FakeHubSpotOptions {
  /** The only bearer token accepted. Default: any non-empty token. */
  token?: string;
  /** Seeded random faults (see FaultOptions). Default none. */
  faults?: FaultOptions;
  /** Records become visible to search this long after their last write. Default 0. */
  searchLagMs?: number;
  /** Search requests allowed per rolling second before a 429 "secondly limit". Default 4. */
  searchPerSecond?: number;
  /** Requests allowed per rolling 10 s before a 429 TEN_SECONDLY_ROLLING. Default unlimited. */
  tenSecondLimit?: number;
  /** Requests allowed in total (the "day") before a 429 DAILY. Default unlimited. */
  dailyLimit?: number;
  /** Duplicate `id`s inside one batch upsert: HubSpot's 400 (`error`, default) or last write wins. */
  duplicateIdsInBatch?: 'error' | 'last-wins';
  /** Status for a write that collides with another record's unique value. Default 409. */
  uniqueConflictStatus?: 400 | 409;
  /**
   * A batch upsert where an input collides with another record's unique value: the whole batch
   * fails naming the first conflict, as HubSpot does (`reject-batch`, default), or that input
   * gets a 207 error and the rest are written (`per-input`).
   */
  batchConflicts?: 'reject-batch' | 'per-input';
  /**
   * The status of a v4 association batch create without errors: 201 as specified (default), or
   * 200, as HubSpot's v3 association batch create has answered since August 2025, to check a
   * client copes with either. With errors it is 207 either way.
   */
  associationCreateStatus?: 200 | 201;
  /** Associations returned per `from` id by the v4 batch read before paging. Default 500. */
  associationPageSize?: number;
  /**
   * Words error messages as a portal in another language does (HubSpot writes `message` in the
   * portal's language): called with each English message of an error answer (of a 207's errors
   * too; each entry of a `Property values were not valid: [...]` list and the words before it
   * apart), its answer sent instead. Codes, property names and context stay as they are. Injected
   * faults keep their English. Default: English.
   */
  localize?: (message: string) => string;
  /** Clock (epoch ms) for timestamps, search lag and rate windows. Default Date.now. */
  now?: () => number;
}
