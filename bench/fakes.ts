/**
 * bench:fakes — do the fake CRMs stay flat as they fill? Each fake's state is seeded directly
 * (no HTTP) with `records` contacts, then the real clients (@hubspot/api-client, jsforce) write
 * and read through the loopback front, in passes interleaved with the same calls against an
 * empty fake: a 100-record batch upsert of new contacts, a 100-activity batch on existing
 * parents (HubSpot notes with an association, Salesforce Tasks with WhoId), and the key lookup
 * the adapters make after an ambiguous failure (HubSpot batch read by idProperty, a SOQL
 * `WHERE AI_External_Id__c IN (...)` of 100 keys). Figures are medians after warm-up passes.
 *
 * Target: a batch into the full fake costs at most 2x the same batch into the empty one.
 *
 *   npm run bench:fakes                          1,000,000 records, 60 passes (about 40 s)
 *   npm run bench:fakes -- --records=100000 --passes=15
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client } from '@hubspot/api-client';
import { Connection } from 'jsforce';
import { FakeHubSpotState, fakeHubSpotFromState } from '../adapters/hubspot/fake/hubspot-fake.js';
import { FakeSalesforceState, fakeSalesforceFromState } from '../adapters/salesforce/fake/salesforce-fake.js';
import { soqlIn } from '../adapters/salesforce/soql.js';
import { isMain, main, numberArg, round, TOKEN } from './lib.js';

export interface FakesOptions {
  /** Contacts seeded into the full fake. Default 1,000,000. */
  records: number;
  /** Timed passes per operation (after 5 warm-up passes). Default 60. */
  passes: number;
}

const BATCH = 100;
const WARMUP = 5;

type Op = (pass: number) => Promise<unknown>;
interface Side { ops: Record<string, Op>; close(): Promise<void> }

// A full collection between seeding and timing, so a major GC of the seeded heap does not land
// in the timed passes (the flag set at runtime exposes gc in a new context).
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Time every op on both sides, alternating which side goes first each pass. */
async function compare(empty: Side, full: Side, passes: number): Promise<Record<string, { emptyMs: number; fullMs: number; ratio: number }>> {
  const out: Record<string, { emptyMs: number; fullMs: number; ratio: number }> = {};
  for (const name of Object.keys(empty.ops)) {
    const times = { empty: [] as number[], full: [] as number[] };
    for (let pass = 0; pass < WARMUP + passes; pass++) {
      const order = pass % 2 === 0 ? (['empty', 'full'] as const) : (['full', 'empty'] as const);
      for (const side of order) {
        const t0 = performance.now();
        await (side === 'empty' ? empty : full).ops[name]!(pass);
        if (pass >= WARMUP) times[side].push(performance.now() - t0);
      }
    }
    const emptyMs = median(times.empty);
    const fullMs = median(times.full);
    out[name] = { emptyMs: round(emptyMs, 2), fullMs: round(fullMs, 2), ratio: round(fullMs / emptyMs, 2) };
  }
  return out;
}

const keys = (n: number, pass: number, stride: number) => Array.from({ length: BATCH }, (_, i) => `c-${((pass * BATCH + i) * stride) % n}`);

async function hubspotSide(state: FakeHubSpotState, parents: string[], known: number): Promise<Side> {
  const fake = fakeHubSpotFromState(state);
  const front = await fake.open('loopback');
  const client = new Client({ accessToken: TOKEN, basePath: front.url });
  const spread = (pass: number) => Array.from({ length: BATCH }, (_, i) => parents[((pass * BATCH + i) * 7919) % parents.length]!);
  return {
    close: () => front.stop(),
    ops: {
      upsert: (pass) => client.crm.objects.batchApi.upsert('contacts', {
        inputs: Array.from({ length: BATCH }, (_, i) => ({ idProperty: 'ai_external_id', id: `new-${pass}-${i}`, properties: { email: `n${pass}-${i}@bench.example`, firstname: `N${i}` } })),
      }),
      activities: (pass) => client.crm.objects.batchApi.create('notes', {
        inputs: spread(pass).map((parent, i) => ({
          properties: { hs_timestamp: '2026-11-29T10:00:00Z', hs_note_body: `note ${pass}-${i}`, crm_upsert_key: `k-${pass}-${i}` },
          associations: [{ to: { id: parent }, types: [{ associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 202 }] }],
        })),
      }),
      keyLookup: (pass) => client.crm.objects.batchApi.read('contacts', {
        idProperty: 'ai_external_id', inputs: keys(known, pass, 7919).map((id) => ({ id })), properties: ['ai_external_id'], propertiesWithHistory: [],
      }),
    },
  };
}

async function salesforceSide(state: FakeSalesforceState, parents: string[], known: number): Promise<Side> {
  const fake = fakeSalesforceFromState(state);
  const front = await fake.open('loopback');
  const conn = new Connection({ instanceUrl: front.url, accessToken: TOKEN, version: '60.0' });
  const spread = (pass: number) => Array.from({ length: BATCH }, (_, i) => parents[((pass * BATCH + i) * 7919) % parents.length]!);
  return {
    close: () => front.stop(),
    ops: {
      upsert: (pass) => conn.sobject('Contact').upsert(
        Array.from({ length: BATCH }, (_, i) => ({ AI_External_Id__c: `new-${pass}-${i}`, LastName: `N${i}`, Email: `n${pass}-${i}@bench.example` })),
        'AI_External_Id__c', { allOrNone: false },
      ),
      activities: (pass) => conn.sobject('Task').upsert(
        spread(pass).map((parent, i) => ({ AI_Idempotency_Key__c: `k-${pass}-${i}`, Subject: `task ${pass}-${i}`, WhoId: parent })),
        'AI_Idempotency_Key__c', { allOrNone: false },
      ),
      keyLookup: async (pass) => await conn.query(`SELECT Id, AI_External_Id__c FROM Contact WHERE ${soqlIn('AI_External_Id__c', keys(known, pass, 7919))}`),
    },
  };
}

/** A HubSpot portal with `n` contacts (c-0 ... c-(n-1)); returns it with every contact id. */
function seedHubSpot(n: number): { state: FakeHubSpotState; ids: string[] } {
  const state = new FakeHubSpotState({ token: TOKEN });
  const ids = Array.from({ length: n }, (_, i) => state.seed('contacts', { ai_external_id: `c-${i}`, email: `c${i}@bench.example`, firstname: `First${i}` }));
  return { state, ids };
}

function seedSalesforce(n: number): { state: FakeSalesforceState; ids: string[] } {
  const state = new FakeSalesforceState({ accessToken: TOKEN, dailyLimit: Number.MAX_SAFE_INTEGER });
  const ids = Array.from({ length: n }, (_, i) => state.seed('Contact', { AI_External_Id__c: `c-${i}`, LastName: `Last${i}`, Email: `c${i}@bench.example` }));
  return { state, ids };
}

/** The figures of one CRM; `heapMB` is what seeding both fakes added to the heap (after full collections). */
async function measure<S extends { state: unknown; ids: string[] }>(
  seed: (n: number) => S,
  side: (state: S['state'], parents: string[], known: number) => Promise<Side>,
  o: FakesOptions,
): Promise<Record<string, unknown>> {
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const full = seed(o.records);
  const seedMs = performance.now() - t0;
  // The empty fake still needs parents for its activities and keys for its lookups: a handful.
  const small = seed(BATCH);
  const fullSide = await side(full.state, full.ids, o.records);
  const emptySide = await side(small.state, small.ids, BATCH);
  collect();
  const heapMB = Math.round((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20);
  try {
    const figures = await compare(emptySide, fullSide, o.passes);
    return { ...figures, seedMs: Math.round(seedMs), heapMB };
  } finally {
    await fullSide.close();
    await emptySide.close();
  }
}

export async function runFakes(o: FakesOptions): Promise<Record<string, unknown>> {
  const hubspot = await measure(seedHubSpot, hubspotSide, o);
  const salesforce = await measure(seedSalesforce, salesforceSide, o);
  const ratios = [hubspot, salesforce].flatMap((c) => Object.values(c).flatMap((v) => (typeof v === 'object' && v && 'ratio' in v ? [(v as { ratio: number }).ratio] : [])));
  return { bench: 'fakes', records: o.records, batch: BATCH, passes: o.passes, target: 2, worstRatio: Math.max(...ratios), hubspot, salesforce };
}

if (isMain(import.meta.url)) {
  void main(() => runFakes({ records: numberArg('records', 1_000_000), passes: numberArg('passes', 60) }));
}
