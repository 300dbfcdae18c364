/**
 * The VendorCli contract: everything the `crm-upsert` CLI needs from one CRM, so the CLI itself
 * names no CRM (its registry, src/cli/vendors.ts, maps each config `crm` value to one of these).
 *
 * Loading a VendorCli must not load its SDK: `buildAdapter`, `checkSetup` and `demo.start`
 * import what they need when called, so a run against one CRM never loads the other's client.
 * Every failure a user fixes (a missing token, a refused one, an unreachable CRM) is a
 * ConfigError: the CLI prints its message and exits 2.
 */
import type { z } from 'zod';
import type { Action } from '../../schemas/action.js';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import type { CrmAdapter } from '../../src/adapter.js';
import type { CrmError } from '../../src/errors.js';
import type { RateBudget } from '../../src/rate-budget.js';
import type { FaultOptions } from '../testing/fake-http.js';

/** One line of `check-setup`: `ok  contact -> contacts.email (allowlisted)`. */
export interface SetupFinding {
  object: string;
  /** `contacts.ai_external_id`, `Contact.Email`. */
  target: string;
  /** What the field must be, shown after the target: `(unique)`, `(allowlisted)`. */
  role: string;
  /**
   * `missing` and `problem` fail the check (exit 1); `warning` passes it but says what may go
   * wrong (a read that may match several records, a definitions file narrower than the CRM);
   * `info` is not a check (what was not checked, and why).
   */
  status: 'ok' | 'created' | 'missing' | 'problem' | 'warning' | 'info';
  detail?: string;
  fix?: string;
}

export interface SetupReport {
  findings: SetupFinding[];
  /** Printed after the findings (what to create by hand, for a CRM whose API cannot). */
  appendix?: string;
  /**
   * The drift of a field definitions file against the CRM's definitions now, pulled as `schema
   * pull` pulls them (configured objects, allowlisted fields) from the answers the checks already
   * read (HubSpot reads the deal pipelines besides, when a pipeline or stage is allowlisted): one
   * finding per object, field and change, `problem` or `warning`, each fixed by `fix`.
   */
  fieldDrift?(file: FieldDefinitionsFile, options: { fix: string }): Promise<SetupFinding[]>;
}

/** The request `sync --dry-run` prints for an action: what the adapter would send. */
export interface RequestPreview {
  /** Method and path: `POST /crm/v3/objects/contacts/batch/upsert`. */
  request: string;
  /** The action's part of the body. A parent id is known only at write time, so it is shown as `<id of … where …>`. */
  body: unknown;
}

/** Where one job of an adapter's bulk lane stands (Salesforce's `BulkProgress`). */
export interface BulkJobProgress {
  /** The logical object and the job. */
  object: string;
  jobId: string;
  /** The job's state as last read (`Open`, `UploadComplete`, `InProgress`, `JobComplete`, `Failed`, `Aborted`). */
  state: string;
  /** Rows uploaded into the job; absent when not known (a job followed after a restart). */
  uploaded?: number;
  processed: number;
  failed: number;
}

/** A fake CRM serving the demo on loopback. */
export interface DemoFake {
  url: string;
  requests(): number;
  /** Records per CRM object, and how many of them duplicate another's external id / key. */
  inventory(): { records: Record<string, number>; duplicates: number };
  close(): Promise<void>;
}

/** The seeded fault options `fake-server --faults` takes (JSON: no `match` function). */
export type FakeServerFaults = Omit<FaultOptions, 'match'>;

/** A fake CRM served by `fake-server` until the process is stopped. */
export interface ServedFake {
  /** Base URL on 127.0.0.1, no trailing slash. */
  url: string;
  /** Requests received so far (faulted ones count). */
  requests(): number;
  close(): Promise<void>;
}

/** What `init` writes for a CRM: a starter config section and example actions that run against its fake. */
export interface VendorStarter<Section> {
  /** The config section: the objects with their fields and id / key fields (no URL: `fake-server` prints it). */
  section: Section;
  /** Example actions, one per JSONL line: contacts, notes and tasks, one webhook delivered twice. */
  actions: readonly Record<string, unknown>[];
  /** Where the section points a real CRM, and the variables to export: printed as next steps. */
  realCrm: string;
}

export interface VendorCli<Section> {
  /** The config's `crm` value and the name of its section: `hubspot`. */
  readonly name: string;
  /** The CRM's name in messages: `HubSpot`. */
  readonly label: string;
  /** The config section (validated with the core config; secrets refused). */
  readonly configSchema: z.ZodType<Section>;
  /** The environment variable holding the token, named in auth messages. */
  readonly tokenEnv: string;
  /** Environment variables holding secrets, registered for redaction at startup. */
  readonly secretEnv: readonly string[];
  /** Credentials for a dry run, which builds the adapter but sends nothing (applied where unset). */
  readonly dryRunEnv: Readonly<Record<string, string>>;

  /**
   * The adapter the section describes, credentials from `env`. `onBulkProgress` is called as each
   * job of its bulk lane moves (a CRM without one ignores it).
   */
  buildAdapter(section: Section, env: NodeJS.ProcessEnv, options: { rateBudget?: RateBudget; fieldDefinitions?: FieldDefinitionsFile; onBulkProgress?: (progress: BulkJobProgress) => void }): Promise<CrmAdapter>;
  /**
   * What one job of the adapter's bulk lane sends, as `sync --dry-run` names it:
   * `a Bulk API 2.0 job (create, upload, close, polls, results)`. Absent for a CRM without a bulk lane.
   */
  readonly bulkJob?: string;
  /** The request the adapter would send for `action` under `key`, from the adapter's own request builders. */
  previewRequest(section: Section, action: Action, key: string): RequestPreview;
  /** Verify (or, with `create`, create) the id, key and allowlisted fields through the CRM API. */
  checkSetup(section: Section, env: NodeJS.ProcessEnv, options: { create: boolean }): Promise<SetupReport>;
  /**
   * `crm-upsert schema pull`: the definitions of every configured object's allowlisted fields,
   * read from the CRM (HubSpot properties and deal pipelines, Salesforce describe), `pulledAt` the
   * day `now` falls on. Fields the CRM does not have are left out (check-setup names them).
   */
  pullFields?(section: Section, env: NodeJS.ProcessEnv, options: { now: Date }): Promise<FieldDefinitionsFile>;

  readonly auth: {
    /** The token itself was refused (not only a permission). Default: HTTP 401. */
    tokenRefused?(error: CrmError): boolean;
    /** What the token needs for the configured objects: `the private app needs the scopes …`. */
    forbidden(section: Section): string;
  };

  readonly demo: {
    /** Files in examples/: the config and the actions the demo syncs. */
    config: string;
    actions: string;
    /** Start this CRM's fake on loopback for the section's objects. */
    start(section: Section): Promise<DemoFake>;
    /** The section pointed at the fake's URL. */
    at(section: Section, url: string): Section;
    /** The environment the demo runs with: a throwaway token, the fake's URL. */
    env(url: string, token: string): Record<string, string>;
  };

  /** `crm-upsert init`: the starter config section and actions. */
  readonly starter: VendorStarter<Section>;
  /**
   * `crm-upsert init --template sales` (and `fake-server --template sales`): contact, company,
   * deal, note and task with their links, and one sales call written as a whole graph.
   */
  readonly salesStarter: VendorStarter<Section>;

  readonly fakeServer: {
    /** Serve this CRM's fake on 127.0.0.1:`port` (0 = any free port) with seeded faults. */
    start(options: { port: number; faults?: FakeServerFaults }): Promise<ServedFake>;
    /** The section's keys pointing a config at the fake: `{ basePath: url }`. */
    configAt(url: string): Record<string, string>;
    /** The environment variables pointing a run at the fake (any token is accepted). */
    env(url: string): Record<string, string>;
  };
}

/** A table of fake records: its records and, per record, the value that must be unique. */
export interface InventoryTable {
  type: string;
  rows(): unknown[];
  idOf(row: unknown): unknown;
}

/** Records per table and the extra copies beyond the first of each unique value. */
export function inventoryOf(tables: Iterable<InventoryTable>): { records: Record<string, number>; duplicates: number } {
  const records: Record<string, number> = {};
  let duplicates = 0;
  for (const table of tables) {
    const rows = table.rows();
    records[table.type] = rows.length;
    const seen = new Map<string, number>();
    for (const row of rows) {
      const k = table.idOf(row);
      if (typeof k !== 'string' || k === '') continue;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
    for (const c of seen.values()) duplicates += c - 1;
  }
  return { records, duplicates };
}
