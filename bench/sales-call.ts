/**
 * bench:calls, sales-call workload: N sales-call events, each a company, a contact linked to it, a
 * deal linked to both, the call's note on the contact linked to the company and the deal, and a
 * follow-up task on the deal, through createSync with a SQLite ledger against each fake on
 * loopback (real SDK clients), `applyMany` per chunk of events. Reports calls per event next to
 * the floor the CRMs' batch limits imply, and the calls of the same events applied again (0).
 *
 *   npm run bench:calls -- --only=sales --events=1000
 */
import { hubspotCli } from '../adapters/hubspot/hubspot-cli.js';
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { salesforceAdapter } from '../adapters/salesforce/index.js';
import { salesforceCli } from '../adapters/salesforce/salesforce-cli.js';
import { fakeHubSpot, fakeSalesforce } from '../adapters/testing/index.js';
import { createSync } from '../src/engine/index.js';
import { openLedger } from '../src/ledger/index.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { round, seconds, tempDir, TOKEN, type Crm } from './lib.js';

// The configs `crm-upsert init --template sales` writes.
const hubspotSales = hubspotCli.salesStarter.section.objects;
const salesforceSales = salesforceCli.salesStarter.section.objects;

const ref = (object: string, externalId: string) => ({ object, externalId });

/** The five actions of sales call `i`. */
export function salesCallActions(crm: Crm, i: number): Record<string, unknown>[] {
  const event = { source: 'gong', eventId: `call-${i}`, occurredAt: '2026-12-01T16:00:00Z' };
  const [co, ct, dl] = [`co-${i}.example`, `ct-${i}`, `deal-${i}`];
  const hub = crm === 'hubspot';
  return [
    { ...event, op: 'upsert', object: 'company', externalId: co, fields: hub ? { name: `Company ${i}`, domain: co } : { Name: `Company ${i}` } },
    { ...event, op: 'upsert', object: 'contact', externalId: ct, fields: hub ? { email: `${ct}@${co}`, firstname: `Person ${i}` } : { Email: `${ct}@${co}`, LastName: `Person ${i}` }, links: [ref('company', co)] },
    {
      ...event, op: 'upsert', object: 'deal', externalId: dl, fields: hub ? { dealname: `Deal ${i}`, amount: 1000 + i } : { Name: `Deal ${i}`, StageName: 'Prospecting', CloseDate: '2027-01-31' },
      links: hub ? [ref('contact', ct), ref('company', co)] : [ref('company', co)],
    },
    {
      ...event, op: 'create', object: 'note', target: ref('contact', ct), fields: hub ? { hs_note_body: `Call ${i} summary`, hs_timestamp: event.occurredAt } : { Subject: `Call ${i}`, Description: `Call ${i} summary` },
      // A Salesforce Task has one What: the deal (its Account is the company).
      links: hub ? [ref('company', co), ref('deal', dl)] : [ref('deal', dl)],
    },
    { ...event, op: 'create', object: 'task', target: ref('deal', dl), fields: hub ? { hs_task_subject: `Follow up ${i}`, hs_timestamp: event.occurredAt } : { Subject: `Follow up ${i}`, ActivityDate: '2026-12-08' } },
  ];
}

/**
 * The fewest requests N events can take: per batch of events (HubSpot 100, Salesforce 200) one
 * write per object (company, contact, deal, note, task) and, on HubSpot, one association call per
 * linked pair of records (contact->company, deal->contact, deal->company). Salesforce links ride
 * inside the upserts; activities carry theirs inline on both.
 */
export function salesCallFloor(crm: Crm, events: number): { perBatch: number; batch: number; total: number } {
  const batch = crm === 'hubspot' ? 100 : 200;
  const perBatch = crm === 'hubspot' ? 5 + 3 : 5;
  return { perBatch, batch, total: perBatch * Math.ceil(events / batch) };
}

export interface SalesCallFigures {
  crm: Crm;
  events: number;
  calls: number;
  callsPerEvent: number;
  floor: number;
  atFloor: boolean;
  byEndpoint: Record<string, number>;
  secondRunCalls: number;
  wallSeconds: number;
}

/** `events` sales calls on one CRM, `chunk` events per applyMany (a multiple of the batch size keeps batches full). */
export async function runSalesCalls(crm: Crm, events: number, chunk = 200): Promise<SalesCallFigures> {
  const dir = tempDir('sales');
  const fake = crm === 'hubspot' ? fakeHubSpot({ token: TOKEN }) : fakeSalesforce({ accessToken: TOKEN, dailyLimit: 100_000_000 });
  const server = await fake.open('loopback');
  const adapter = crm === 'hubspot'
    ? hubspotAdapter({ accessToken: TOKEN, basePath: server.url, objects: hubspotSales, rateBudget: unlimitedRateBudget })
    : salesforceAdapter({ instanceUrl: server.url, accessToken: TOKEN, objects: salesforceSales });
  const sync = createSync({ adapter, ledger: openLedger(`sqlite:${dir.path}/ledger.db`), verifyCreates: 'after-failure' });
  const apply = async () => {
    for (let from = 0; from < events; from += chunk) {
      const actions = Array.from({ length: Math.min(chunk, events - from) }, (_, k) => salesCallActions(crm, from + k)).flat();
      const outcomes = await sync.applyMany(actions);
      const bad = outcomes.find((o) => !['created', 'updated', 'replayed'].includes(o.status));
      if (bad) throw new Error(`sales call bench: an action ended ${bad.status}: ${bad.error?.message ?? ''}`);
    }
  };
  try {
    const t0 = performance.now();
    await apply();
    const wall = performance.now() - t0;
    const calls = fake.count();
    const byEndpoint = fake.counts();
    await apply();
    const floor = salesCallFloor(crm, events).total;
    return {
      crm, events, calls, callsPerEvent: round(calls / events, 4), floor, atFloor: calls === floor, byEndpoint,
      secondRunCalls: fake.count() - calls, wallSeconds: seconds(wall),
    };
  } finally {
    await sync.close();
    await server.stop();
    dir.remove();
  }
}
