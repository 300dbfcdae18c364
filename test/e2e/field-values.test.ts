/**
 * A model's bad values, with field definitions pulled from the fake CRM (`schema pull`'s own
 * code) and loaded into the adapter: each value that cannot be made valid is `rejected` naming the
 * field and the allowed values, with no request; the sloppy ones that keep their meaning are
 * written normalized; the valid neighbours go out in one batch. Without definitions, the same
 * values reach the CRM and it refuses them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import type { HubSpotConfig } from '../../adapters/hubspot/hubspot-config.js';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { salesforceAdapter } from '../../adapters/salesforce/index.js';
import { salesforceCli } from '../../adapters/salesforce/salesforce-cli.js';
import type { SalesforceConfig } from '../../adapters/salesforce/salesforce-config.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import { harness as hubspotHarness, TOKEN as HS_TOKEN } from './hubspot-helpers.js';
import { harness as salesforceHarness, TOKEN as SF_TOKEN } from './salesforce-helpers.js';

const fast = { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 };
const stop: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stop.splice(0)) await s();
});

const byIndex = (outcomes: Outcome[]) => outcomes.map((o, i) => `${i}:${o.status}`);

describe('HubSpot: contact and deal values a model got wrong, with definitions pulled from the fake portal', () => {
  const section = (basePath: string): HubSpotConfig => ({ ...structuredClone(hubspotCli.salesStarter.section), basePath });
  const contact = (n: number, fields: Record<string, unknown>) => ({ source: 'agent', eventId: `c-${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email: `c${n}@acme.test`, ...fields } });
  const deal = (n: number, fields: Record<string, unknown>) => ({ source: 'agent', eventId: `d-${n}`, op: 'upsert', object: 'deal', externalId: `d-${n}`, fields: { dealname: `Deal ${n}`, ...fields } });
  const inputs = [
    contact(1, { lifecyclestage: 'Customer ' }),
    contact(2, { lifecyclestage: 'client' }),
    contact(3, { firstname: 42 }),
    contact(4, { lifecyclestage: 'lead' }),
    deal(1, { closedate: 'next Friday' }),
    deal(2, { dealstage: 'Won!!' }),
    deal(3, { amount: '$12,000' }),
    deal(4, { amount: '12000', dealstage: 'Closed Won', closedate: '2027-01-15T17:30:00+01:00' }),
  ];

  it('rejects what cannot be made valid with no request, writes the rest normalized, one batch per object', async () => {
    const h = await hubspotHarness('loopback');
    stop.push(h.stop);
    const fieldDefinitions = await hubspotCli.pullFields!(section(h.basePath), { HUBSPOT_ACCESS_TOKEN: HS_TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
    const adapter = hubspotAdapter({ accessToken: HS_TOKEN, basePath: h.basePath, objects: section(h.basePath).objects, fieldDefinitions });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const before = h.fake.count();

    const outcomes = await sync.applyMany(inputs);
    expect(byIndex(outcomes)).toEqual(['0:created', '1:rejected', '2:rejected', '3:created', '4:rejected', '5:rejected', '6:rejected', '7:created']);
    expect(outcomes[0]!.normalized).toEqual([{ field: 'lifecyclestage', from: 'Customer ', to: 'customer' }]);
    expect(outcomes[1]!.error!.message).toMatch(/fields\.lifecyclestage: "client" is not an allowed value; allowed: .*"lead".*"customer"/);
    expect(outcomes[2]!.error!.message).toContain('fields.firstname: must be text (got a number)');
    expect(outcomes[4]!.error!.message).toContain('fields.closedate: must be an ISO 8601 date-time with its offset, e.g. 2026-11-28T10:00:00Z; "next Friday" is not one');
    expect(outcomes[5]!.error!.message).toMatch(/fields\.dealstage: "Won!!" is not an allowed value; allowed: "appointmentscheduled"/);
    expect(outcomes[6]!.error!.message).toContain('fields.amount: must be a number with no currency sign, unit or thousands separator (got "$12,000")');
    // "12000" is already the text HubSpot stores: written, not reported. closedate is a datetime: a time of day goes through, in UTC.
    expect(outcomes[7]!.normalized).toEqual([
      { field: 'dealstage', from: 'Closed Won', to: 'closedwon' },
      { field: 'closedate', from: '2027-01-15T17:30:00+01:00', to: '2027-01-15T16:30:00Z' },
    ]);
    // One contacts upsert and one deals upsert for the four valid actions; nothing for the five rejected.
    expect(h.fake.count() - before).toBe(2);
    const dealRecord = h.fake.records('deals')[0]!;
    expect(dealRecord.properties).toMatchObject({ dealstage: 'closedwon', closedate: '2027-01-15T16:30:00Z', amount: '12000' });
    await sync.close();
  });

  it('without definitions sends the values, and HubSpot refuses the batch they are in', async () => {
    const h = await hubspotHarness('loopback');
    stop.push(h.stop);
    const adapter = hubspotAdapter({ accessToken: HS_TOKEN, basePath: h.basePath, objects: section(h.basePath).objects });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    const outcomes = await sync.applyMany([inputs[1]!, inputs[3]!]);
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'created']);
    expect(outcomes[0]!.error).toMatchObject({ vendorCode: 'INVALID_OPTION' });
    await sync.close();
  });
});

describe('Salesforce: Task values a model got wrong, with definitions pulled from the fake org', () => {
  const section = (url: string): SalesforceConfig => ({ ...salesforceCli.salesStarter.section, instanceUrl: url });
  const task = (n: number, fields: Record<string, unknown>) => ({
    source: 'agent', eventId: `t-${n}`, op: 'create', object: 'task', target: { object: 'contact', externalId: 'ada' }, fields: { Subject: `Follow up ${n}`, ...fields },
  });
  const contact = { source: 'agent', eventId: 'c-ada', op: 'upsert', object: 'contact', externalId: 'ada', fields: { LastName: 'Lovelace' } };
  const inputs = [
    task(1, { Status: 'done' }),
    task(2, { Priority: 'URGENT!!' }),
    task(3, { ActivityDate: '12/01/2026' }),
    task(4, { ActivityDate: 20261201 }),
    task(5, { Status: 'completed', Priority: 'high ', ActivityDate: '2026-12-01T00:00:00Z' }),
    task(6, { Status: 'Not Started', ActivityDate: '2026-12-08' }),
  ];

  it('rejects what cannot be made valid with no request, writes the rest normalized in one batch', async () => {
    const h = await salesforceHarness('loopback');
    stop.push(h.stop);
    const fieldDefinitions = await salesforceCli.pullFields!(section(h.instanceUrl), { SF_ACCESS_TOKEN: SF_TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
    expect(fieldDefinitions.objects.task!.Status).toMatchObject({ type: 'enumeration' });
    const adapter = salesforceAdapter({ instanceUrl: h.instanceUrl, accessToken: SF_TOKEN, objects: section(h.instanceUrl).objects, fieldDefinitions });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.applyMany([contact]);
    const before = h.fake.count();

    const outcomes = await sync.applyMany(inputs);
    expect(byIndex(outcomes)).toEqual(['0:rejected', '1:rejected', '2:rejected', '3:rejected', '4:created', '5:created']);
    expect(outcomes[0]!.error!.message).toMatch(/fields\.Status: "done" is not an allowed value; allowed: "Not Started", .*"Completed"/);
    expect(outcomes[1]!.error!.message).toMatch(/fields\.Priority: "URGENT!!" is not an allowed value; allowed: "High", "Normal", "Low"/);
    expect(outcomes[2]!.error!.message).toContain('fields.ActivityDate: must be an ISO 8601 date, YYYY-MM-DD; "12/01/2026" is not one');
    expect(outcomes[3]!.error!.message).toContain('fields.ActivityDate: must be an ISO 8601 date, YYYY-MM-DD; 20261201 is not a date');
    expect(outcomes[4]!.normalized).toEqual([
      { field: 'Status', from: 'completed', to: 'Completed' },
      { field: 'Priority', from: 'high ', to: 'High' },
      { field: 'ActivityDate', from: '2026-12-01T00:00:00Z', to: '2026-12-01' },
    ]);
    // The two valid Tasks in one request; nothing sent for the four rejected.
    expect(h.fake.count() - before).toBe(1);
    const written = h.fake.records('Task').find((t) => t.Subject === 'Follow up 5')!;
    expect(written).toMatchObject({ Status: 'Completed', Priority: 'High', ActivityDate: '2026-12-01' });
    await sync.close();
  });

  it('without definitions sends the values, and the org refuses them', async () => {
    const h = await salesforceHarness('loopback');
    stop.push(h.stop);
    const adapter = salesforceAdapter({ instanceUrl: h.instanceUrl, accessToken: SF_TOKEN, objects: section(h.instanceUrl).objects });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: fast });
    await sync.applyMany([contact]);
    const outcomes = await sync.applyMany([inputs[0]!, inputs[1]!, inputs[5]!]);
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'failed', 'created']);
    expect(outcomes[0]!.error).toMatchObject({ vendorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST' });
    await sync.close();
  });
});
