/**
 * bench:calls — API calls per record. N contact upserts and N activities (HubSpot notes,
 * Salesforce tasks) through createSync against each fake on loopback (real SDK clients), next
 * to the naive ways users write this today, in the same run:
 *   (a) one create/update call per action: HubSpot basicApi.create per contact and per note,
 *       jsforce single-record upsert per contact and per task;
 *   (b) search-then-create per action (HubSpot search API; its index lags writes).
 * Each approach runs fault-free (calls, wall time) and again with a small lost-response rate
 * (duplicates, actions lost). Then ours runs the same actions a second time: 0 calls.
 *
 * And the sales-call workload (bench/sales-call.ts): `events` calls, each a company, a contact,
 * a deal, a note with three associations and a task, against the floor the batch limits imply.
 *
 *   npm run bench:calls              N = 10,000, 1,000 sales calls
 *   npm run bench:calls -- --n=1000 --lost=0.01 --concurrency=8
 *   npm run bench:calls -- --only=sales --events=1000
 */
import { Client } from '@hubspot/api-client';
import { Connection } from 'jsforce';
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { salesforceAdapter } from '../adapters/salesforce/index.js';
import { createSync, type OutcomeStatus } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { fakeHubSpot, fakeSalesforce, type FakeCrmBase } from '../adapters/testing/index.js';
import { runSalesCalls, salesCallFloor } from './sales-call.js';
import { activityAction, contactAction, duplicates, hubspotObjects, isMain, main, numberArg, pool, round, salesforceObjects, seconds, tempDir, TOKEN, type Crm } from './lib.js';

export interface CallsOptions {
  n: number;
  /** Lost-response probability for the faulted runs. */
  lost: number;
  /** Requests in flight for the naive loops; batches in flight for ours. */
  concurrency: number;
  /** HubSpot search index lag, ms (real HubSpot: seconds). */
  searchLagMs: number;
  /** Which approaches to run. Default all. */
  only?: string[];
  seed?: number;
  /** Sales-call events (run with approach `sales`). Default 1,000. */
  events?: number;
}

export interface RunFigures {
  approach: string;
  crm: Crm;
  records: number;
  calls: number;
  callsPerRecord: number;
  wallSeconds: number;
  /** Extra copies of contacts / activities (grouped by their unique email / body). */
  duplicates: { contacts: number; activities: number };
  /** Actions that never completed (gave up, failed). */
  lost: number;
  /** Responses the fake dropped after committing. */
  lostResponses: number;
  byEndpoint?: Record<string, number>;
  secondRunCalls?: number;
}

const COMPLETED = new Set<OutcomeStatus>(['created', 'updated', 'unchanged', 'replayed', 'suppressed']);

/** The naive caller's retry: try again right away, up to 3 attempts, any error. */
async function retry3<T>(fn: () => Promise<T>): Promise<T> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await fn();
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

interface Env {
  crm: Crm;
  url: string;
  calls(): number;
  lostResponses(): number;
  counts(): Record<string, number>;
  dupes(): { contacts: number; activities: number };
  close(): Promise<void>;
}

async function startFake(crm: Crm, lost: number, seed: number, searchLagMs: number): Promise<Env> {
  const faults = lost > 0 ? { seed, lostResponse: lost } : {};
  let fake: FakeCrmBase;
  let dupes: Env['dupes'];
  if (crm === 'hubspot') {
    const hubspot = fakeHubSpot({ token: TOKEN, faults, searchLagMs, searchPerSecond: 1_000_000 });
    fake = hubspot;
    dupes = () => ({
      contacts: duplicates(hubspot.records('contacts'), (r) => r.properties.email),
      activities: duplicates(hubspot.records('notes'), (r) => r.properties.hs_note_body),
    });
  } else {
    const salesforce = fakeSalesforce({ accessToken: TOKEN, faults, dailyLimit: 100_000_000 });
    fake = salesforce;
    dupes = () => ({
      contacts: duplicates(salesforce.records('Contact'), (r) => r.Email as string | undefined),
      activities: duplicates(salesforce.records('Task'), (r) => r.Subject as string | undefined),
    });
  }
  const server = await fake.open('loopback');
  return {
    crm, url: server.url,
    calls: () => fake.count(),
    lostResponses: () => fake.core.faultCounts().lost_response,
    counts: () => fake.counts(),
    dupes,
    close: server.stop,
  };
}

function figures(env: Env, approach: string, n: number, startedAt: number, lost: number, extra: Partial<RunFigures> = {}): RunFigures {
  const calls = env.calls();
  return {
    approach, crm: env.crm, records: 2 * n, calls, callsPerRecord: round(calls / (2 * n), 4),
    wallSeconds: seconds(performance.now() - startedAt), duplicates: env.dupes(), lost, lostResponses: env.lostResponses(), ...extra,
  };
}

/**
 * Actions per applyMany: 1,000 contacts and their 1,000 activities, a multiple of both batch
 * sizes (a chunk of 500 contacts would cut Salesforce batches at 200 + 200 + 100).
 */
const CHUNK = 2_000;

/** Ours: createSync + the adapter + a SQLite ledger, applyMany in chunks of CHUNK actions. */
async function ours(env: Env, n: number, concurrency: number): Promise<RunFigures> {
  const dir = tempDir('calls');
  const adapter = env.crm === 'hubspot'
    ? hubspotAdapter({ accessToken: TOKEN, basePath: env.url, objects: hubspotObjects, rateBudget: unlimitedRateBudget })
    : salesforceAdapter({ instanceUrl: env.url, accessToken: TOKEN, objects: salesforceObjects });
  // The fake starts empty, and the ledger is new: `auto` would look every activity batch up (a
  // new ledger vouches for no earlier run). This counts the writes alone, as bench:verify counts
  // the lookups.
  const sync = createSync({ adapter, ledger: openLedger(`sqlite:${dir.path}/ledger.db`), concurrency, verifyCreates: 'after-failure' });
  const actions: unknown[] = [];
  for (let i = 0; i < n; i++) actions.push(contactAction(env.crm, i), activityAction(env.crm, i));
  try {
    const t0 = performance.now();
    let lost = 0;
    for (let i = 0; i < actions.length; i += CHUNK) {
      for (const o of await sync.applyMany(actions.slice(i, i + CHUNK))) if (!COMPLETED.has(o.status)) lost += 1;
    }
    const result = figures(env, 'ours', n, t0, lost, { byEndpoint: env.counts() });
    const before = env.calls();
    for (let i = 0; i < actions.length; i += CHUNK) {
      for (const o of await sync.applyMany(actions.slice(i, i + CHUNK))) if (o.status !== 'replayed') throw new Error(`second run: ${o.key} is ${o.status}`);
    }
    result.secondRunCalls = env.calls() - before;
    return result;
  } finally {
    await sync.close();
    dir.remove();
  }
}

/** (a) HubSpot: basicApi.create for the contact, then for its note (associated to the new id). */
async function naiveHubSpotCreate(env: Env, n: number, concurrency: number): Promise<RunFigures> {
  const client = new Client({ accessToken: TOKEN, basePath: env.url });
  const t0 = performance.now();
  let lost = 0;
  await pool(Array.from({ length: n }, (_, i) => i), concurrency, async (i) => {
    const c = contactAction('hubspot', i) as { fields: Record<string, string> };
    const a = activityAction('hubspot', i) as { fields: Record<string, string> };
    try {
      const contact = await retry3(() => client.crm.contacts.basicApi.create({ properties: c.fields, associations: [] }));
      await retry3(() => client.crm.objects.notes.basicApi.create({
        properties: a.fields,
        associations: [{ to: { id: contact.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] }],
      } as never));
    } catch {
      lost += 1;
    }
  });
  return figures(env, 'naive-create-per-action', n, t0, lost);
}

/** (b) HubSpot: search by email / note body, create when the search finds nothing. */
async function naiveHubSpotSearch(env: Env, n: number, concurrency: number): Promise<RunFigures> {
  const client = new Client({ accessToken: TOKEN, basePath: env.url });
  const search = (api: { doSearch(body: never): Promise<{ results: { id: string }[] }> }, propertyName: string, value: string) =>
    api.doSearch({ filterGroups: [{ filters: [{ propertyName, operator: 'EQ', value }] }], properties: [propertyName], limit: 1, after: '0', sorts: [] } as never);
  const t0 = performance.now();
  let lost = 0;
  await pool(Array.from({ length: n }, (_, i) => i), concurrency, async (i) => {
    const c = contactAction('hubspot', i) as { fields: Record<string, string> };
    const a = activityAction('hubspot', i) as { fields: Record<string, string> };
    try {
      const contactId = await retry3(async () => {
        const found = await search(client.crm.contacts.searchApi as never, 'email', c.fields.email!);
        if (found.results[0]) return (await client.crm.contacts.basicApi.update(found.results[0].id, { properties: c.fields })).id;
        return (await client.crm.contacts.basicApi.create({ properties: c.fields, associations: [] })).id;
      });
      await retry3(async () => {
        const found = await search(client.crm.objects.notes.searchApi as never, 'hs_note_body', a.fields.hs_note_body!);
        if (found.results[0]) return;
        await client.crm.objects.notes.basicApi.create({
          properties: a.fields,
          associations: [{ to: { id: contactId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] }],
        } as never);
      });
    } catch {
      lost += 1;
    }
  });
  return figures(env, 'naive-search-then-create', n, t0, lost);
}

/** (a) Salesforce: jsforce single-record upsert per contact and per task. */
async function naiveSalesforceUpsert(env: Env, n: number, concurrency: number): Promise<RunFigures> {
  const conn = new Connection({ instanceUrl: env.url, accessToken: TOKEN, version: '60.0' });
  const t0 = performance.now();
  let lost = 0;
  await pool(Array.from({ length: n }, (_, i) => i), concurrency, async (i) => {
    const c = contactAction('salesforce', i) as { externalId: string; fields: Record<string, string> };
    const a = activityAction('salesforce', i) as { eventId: string; fields: Record<string, string> };
    try {
      const contact = await retry3(() => conn.sobject('Contact').upsert({ ...c.fields, AI_External_Id__c: c.externalId }, 'AI_External_Id__c'));
      if (!contact.success || !contact.id) throw new Error('contact upsert failed');
      const task = await retry3(() => conn.sobject('Task').upsert({ ...a.fields, WhoId: contact.id, AI_Idempotency_Key__c: a.eventId }, 'AI_Idempotency_Key__c'));
      if (!task.success) throw new Error('task upsert failed');
    } catch {
      lost += 1;
    }
  });
  return figures(env, 'naive-upsert-per-action', n, t0, lost);
}

type Runner = (env: Env, n: number, concurrency: number) => Promise<RunFigures>;
const runners: { name: string; crm: Crm; run: Runner }[] = [
  { name: 'ours', crm: 'hubspot', run: ours },
  { name: 'naive-create-per-action', crm: 'hubspot', run: naiveHubSpotCreate },
  { name: 'naive-search-then-create', crm: 'hubspot', run: naiveHubSpotSearch },
  { name: 'ours', crm: 'salesforce', run: ours },
  { name: 'naive-upsert-per-action', crm: 'salesforce', run: naiveSalesforceUpsert },
];

export async function runCallsBench(o: CallsOptions): Promise<Record<string, unknown>> {
  const clean: RunFigures[] = [];
  const faulted: RunFigures[] = [];
  for (const r of runners) {
    if (o.only && !o.only.includes(r.name)) continue;
    for (const lost of [0, o.lost]) {
      if (lost === 0 || o.lost > 0) {
        const env = await startFake(r.crm, lost, o.seed ?? 7, o.searchLagMs);
        try {
          (lost === 0 ? clean : faulted).push(await r.run(env, o.n, o.concurrency));
        } finally {
          await env.close();
        }
      }
    }
  }
  const events = o.events ?? 1_000;
  const sales = !o.only || o.only.includes('sales')
    ? { events, floor: { hubspot: salesCallFloor('hubspot', events), salesforce: salesCallFloor('salesforce', events) }, runs: [await runSalesCalls('hubspot', events), await runSalesCalls('salesforce', events)] }
    : undefined;
  const slim = (f: RunFigures) => ({ crm: f.crm, approach: f.approach, calls: f.calls, callsPerRecord: f.callsPerRecord, wallSeconds: f.wallSeconds, duplicates: f.duplicates, lost: f.lost, lostResponses: f.lostResponses });
  return {
    bench: 'calls',
    n: o.n,
    records: 2 * o.n,
    limit: {
      hubspot: { upserts: Math.ceil(o.n / 100), activityCreates: Math.ceil(o.n / 100), parentReads: Math.ceil(o.n / 100), total: 3 * Math.ceil(o.n / 100) },
      salesforce: { upserts: Math.ceil(o.n / 200), activityUpserts: Math.ceil(o.n / 200), parentReadsAtLeast: Math.ceil(o.n / 200), total: 3 * Math.ceil(o.n / 200) },
    },
    concurrency: o.concurrency,
    lostResponseRate: o.lost,
    searchLagMs: o.searchLagMs,
    clean: clean.map((f) => ({ ...slim(f), ...(f.secondRunCalls !== undefined ? { secondRunCalls: f.secondRunCalls, byEndpoint: f.byEndpoint } : {}) })),
    withLostResponses: faulted.map(slim),
    ...(sales ? { salesCall: sales } : {}),
  };
}

if (isMain(import.meta.url)) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  await main(() => runCallsBench({
    n: numberArg('n', 10_000),
    lost: numberArg('lost', 0.01),
    concurrency: numberArg('concurrency', 4),
    searchLagMs: numberArg('search-lag', 1_000),
    events: numberArg('events', 1_000),
    ...(only ? { only } : {}),
  }));
}
