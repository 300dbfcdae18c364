/**
 * Deal stages within their pipeline, end to end: definitions pulled from a fake portal with two
 * pipelines that each have a "Closed Won", then written through the engine. A stage is resolved in
 * the pipeline the action gives; what the file can tell is refused with no request; a stage outside
 * the pipeline the deal is already in is refused by HubSpot, with a hint that is not "schema pull".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import type { HubSpotConfig } from '../../adapters/hubspot/hubspot-config.js';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { createSync, openLedger } from '../../src/index.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { harness, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 };
const objects: HubSpotConfig['objects'] = {
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'pipeline', 'dealstage'] },
};
const deal = (id: string, fields: Record<string, unknown>, n = 0) => ({ source: 'agent', eventId: `${id}-${n}`, op: 'upsert', object: 'deal', externalId: id, fields });

describe('HubSpot deal stages within their pipeline, with definitions pulled from the fake portal', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  async function open() {
    h = await harness('loopback');
    h.fake.definePipeline({ id: 'renewals', label: 'Renewals', stages: [{ id: 'renewal_open', label: 'Renewal due' }, { id: 'renewal_won', label: 'Closed Won', closed: true, probability: 1 }] });
    const section: HubSpotConfig = { ...structuredClone(hubspotCli.salesStarter.section), basePath: h.basePath, objects };
    const fieldDefinitions = await hubspotCli.pullFields!(section, { HUBSPOT_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: h.basePath, objects, fieldDefinitions, rateBudget: unlimitedRateBudget });
    return createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
  }
  const stored = (id: string) => h.fake.records('deals').find((d) => d.properties.ai_external_id === id)?.properties;

  it('writes "Closed Won" as each pipeline\'s own stage and refuses, with no request, what the file can tell is wrong', async () => {
    const sync = await open();
    const before = h.fake.count();
    const outcomes = await sync.applyMany([
      deal('d-1', { dealname: 'Renewal', pipeline: 'Renewals', dealstage: 'Closed Won' }),
      deal('d-2', { dealname: 'Which?', dealstage: 'Closed Won' }),
      deal('d-3', { dealname: 'Outside', pipeline: 'renewals', dealstage: 'closedwon' }),
      deal('d-4', { dealname: 'New business', pipeline: 'default', dealstage: 'Closed Won' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'rejected', 'created']);
    expect(outcomes[0]!.normalized).toEqual([{ field: 'pipeline', from: 'Renewals', to: 'renewals' }, { field: 'dealstage', from: 'Closed Won', to: 'renewal_won' }]);
    expect(outcomes[1]!.error).toMatchObject({ code: 'VALIDATION', path: 'fields.dealstage' });
    expect(outcomes[1]!.error!.message).toContain('"Closed Won" is a stage of 2 pipelines ("closedwon" in "default" (Sales Pipeline), "renewal_won" in "renewals" (Renewals)): send pipeline with it');
    expect(outcomes[2]!.error!.message).toContain('"closedwon" is not a stage of pipeline "renewals" (Renewals) (it is a stage of "default" (Sales Pipeline)); its stages: "renewal_open" (Renewal due), "renewal_won" (Closed Won)');
    expect(outcomes[1]!.attempts).toBe(0);
    // The two valid deals in one request, none for the two refused.
    expect(h.fake.count() - before).toBe(1);
    expect(stored('d-1')).toMatchObject({ pipeline: 'renewals', dealstage: 'renewal_won' });
    expect(stored('d-4')).toMatchObject({ pipeline: 'default', dealstage: 'closedwon' });
    expect(stored('d-2')).toBeUndefined();
    await sync.close();
  });

  it('takes a stage id alone in an update, refuses a shared label alone, and leaves a stage outside the deal\'s own pipeline to HubSpot without the schema pull hint', async () => {
    const sync = await open();
    await sync.applyMany([deal('d-1', { dealname: 'Renewal', pipeline: 'renewals', dealstage: 'renewal_open' })]);
    let before = h.fake.count();

    const [moved] = await sync.applyMany([deal('d-1', { dealstage: 'renewal_won' }, 1)]);
    expect(moved!.status).toBe('updated');
    expect(stored('d-1')!.dealstage).toBe('renewal_won');
    expect(h.fake.count() - before).toBe(1);

    before = h.fake.count();
    const [shared] = await sync.applyMany([deal('d-1', { dealstage: 'closed won' }, 2)]);
    expect(shared!.status).toBe('rejected');
    expect(shared!.error!.message).toContain('"closed won" is a stage of 2 pipelines');
    expect(h.fake.count() - before).toBe(0);

    // `closedwon` is one stage of one pipeline: the file cannot know the deal is in another.
    const [outside] = await sync.applyMany([deal('d-1', { dealstage: 'closedwon' }, 3)]);
    expect(outside!.status).toBe('failed');
    expect(outside!.error).toMatchObject({ vendorCode: 'INVALID_OPTION', path: 'fields.dealstage', retryable: false });
    expect(outside!.error!.message).toContain('dealstage = "closedwon" (INVALID_OPTION: closedwon is not a valid pipeline stage ID. Valid options are: pipelineId=renewals : [renewal_open, renewal_won])');
    expect(outside!.error!.message).toMatch(/send pipeline with dealstage, or a stage of the pipeline the record is in$/);
    expect(outside!.error!.message).not.toContain('schema pull');
    expect(stored('d-1')!.dealstage).toBe('renewal_won');
    await sync.close();
  });
});
