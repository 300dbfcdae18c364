/**
 * bench:reads — requests per record read. N sales-call contacts, each linked to its company, are
 * written through createSync against each fake on loopback (real SDK clients), then read back by
 * external id with `sync.read`, without and with `links`, next to the floor the CRMs' limits imply
 * (HubSpot: one batch read per 100 ids, plus per 100 ids one association read and one read of the
 * linked records per linked object; Salesforce: one query per group the query URL holds, links in
 * the same query), and next to the naive way: one request per record (HubSpot `getById` by the id
 * property). Wall times are from one noisy machine: compare the ratio, not the seconds.
 *
 *   npm run bench:reads              N = 5,000
 *   npm run bench:reads -- --n=1000
 */
import { Client } from '@hubspot/api-client';
import { hubspotCli } from '../adapters/hubspot/hubspot-cli.js';
import { hubspotAdapter } from '../adapters/hubspot/index.js';
import { salesforceAdapter } from '../adapters/salesforce/index.js';
import { salesforceCli } from '../adapters/salesforce/salesforce-cli.js';
import { fakeHubSpot, fakeSalesforce } from '../adapters/testing/index.js';
import { createSync } from '../src/engine/index.js';
import { readableFields } from '../src/engine/read.js';
import { openLedger } from '../src/ledger/index.js';
import { unlimitedRateBudget } from '../src/rate-budget.js';
import { salesCallActions } from './sales-call.js';
import { isMain, main, numberArg, pool, round, seconds, TOKEN, type Crm } from './lib.js';

export interface ReadFigures {
  crm: Crm;
  records: number;
  /** `sync.read` of every contact: requests, the floor, and whether they meet. */
  plain: { calls: number; floor: number; atFloor: boolean; wallSeconds: number; found: number };
  /** The same with `links: true` (each contact's company with its external id). */
  withLinks: { calls: number; floor: number; atFloor: boolean; wallSeconds: number; linked: number };
  /** One request per record (HubSpot only: `basicApi.getById` by the id property, 8 in flight). */
  naive?: { calls: number; wallSeconds: number };
  /** Ids one request carries (HubSpot 100; Salesforce: what one query URL holds for these ids). */
  idsPerRequest: number;
}

export async function runReads(crm: Crm, n: number): Promise<ReadFigures> {
  const fake = crm === 'hubspot' ? fakeHubSpot({ token: TOKEN }) : fakeSalesforce({ accessToken: TOKEN, dailyLimit: 100_000_000 });
  const server = await fake.open('loopback');
  const objects = crm === 'hubspot' ? hubspotCli.salesStarter.section.objects : salesforceCli.salesStarter.section.objects;
  const adapter = crm === 'hubspot'
    ? hubspotAdapter({ accessToken: TOKEN, basePath: server.url, objects: objects as never, rateBudget: unlimitedRateBudget })
    : salesforceAdapter({ instanceUrl: server.url, accessToken: TOKEN, objects: objects as never });
  const sync = createSync({ adapter, ledger: openLedger('memory:') });
  try {
    for (let from = 0; from < n; from += 500) {
      const actions = Array.from({ length: Math.min(500, n - from) }, (_, k) => salesCallActions(crm, from + k).slice(0, 2)).flat();
      const bad = (await sync.applyMany(actions)).find((o) => o.status !== 'created');
      if (bad) throw new Error(`bench:reads: a write ended ${bad.status}: ${bad.error?.message ?? ''}`);
    }
    const ids = Array.from({ length: n }, (_, i) => `ct-${i}`);
    // The groups the engine asks for: every readable field, links or not.
    const fields = readableFields(adapter.objects.contact!);
    const groupsOf = (links: boolean) => adapter.planReads!('contact', ids, { fields, links }).length;
    const linkedObjects = crm === 'hubspot' ? 1 : 0;
    const timed = async (links: boolean) => {
      const before = fake.count();
      const t0 = performance.now();
      const answers = await sync.read('contact', ids, { links });
      return { answers, calls: fake.count() - before, wallSeconds: seconds(performance.now() - t0) };
    };
    const plain = await timed(false);
    const linked = await timed(true);
    const floorPlain = groupsOf(false);
    const floorLinks = groupsOf(true) * (1 + 2 * linkedObjects);
    const figures: ReadFigures = {
      crm, records: n, idsPerRequest: Math.ceil(n / floorPlain),
      plain: { calls: plain.calls, floor: floorPlain, atFloor: plain.calls === floorPlain, wallSeconds: plain.wallSeconds, found: plain.answers.filter((a) => a.found).length },
      withLinks: {
        calls: linked.calls, floor: floorLinks, atFloor: linked.calls === floorLinks, wallSeconds: linked.wallSeconds,
        linked: linked.answers.filter((a) => a.found && a.links?.length === 1).length,
      },
    };
    if (crm === 'hubspot') {
      const client = new Client({ accessToken: TOKEN, basePath: server.url });
      const before = fake.count();
      const t0 = performance.now();
      await pool(ids, 8, async (id) => void (await client.crm.contacts.basicApi.getById(id, ['email', 'firstname'], undefined, undefined, false, 'ai_external_id')));
      figures.naive = { calls: fake.count() - before, wallSeconds: seconds(performance.now() - t0) };
    }
    return figures;
  } finally {
    await sync.close();
    await server.stop();
  }
}

export async function runReadsBench(n: number): Promise<Record<string, unknown>> {
  const runs = [await runReads('hubspot', n), await runReads('salesforce', n)];
  return {
    bench: 'reads', n,
    runs: runs.map((r) => ({ ...r, callsPerRecord: round(r.plain.calls / r.records, 4) })),
  };
}

if (isMain(import.meta.url)) void main(() => runReadsBench(numberArg('n', 5_000)));
