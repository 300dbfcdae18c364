import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import type { HubSpotConfig } from '../../adapters/hubspot/hubspot-config.js';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { ConfigError } from '../../src/errors.js';
import { createSync, openLedger, toolSchema } from '../../src/index.js';
import { describeObject } from '../../src/mcp/read-tools.js';
import { readToolSpecs } from '../../src/mcp/index.js';
import { fieldDefinitionsFileSchema, formatFieldDefinitions } from '../../schemas/field-definitions.js';

const TOKEN = 'pat-na1-fields-test-7d1e';
const now = new Date('2026-12-05T23:59:59Z');
const STAGES = [
  { value: 'appointmentscheduled', label: 'Appointment Scheduled' }, { value: 'qualifiedtobuy', label: 'Qualified To Buy' },
  { value: 'presentationscheduled', label: 'Presentation Scheduled' }, { value: 'decisionmakerboughtin', label: 'Decision Maker Bought-In' },
  { value: 'contractsent', label: 'Contract Sent' }, { value: 'closedwon', label: 'Closed Won' }, { value: 'closedlost', label: 'Closed Lost' },
].map((s) => ({ ...s, pipeline: 'default' }));

describe('hubspotCli.pullFields against fakeHubSpot over loopback (real @hubspot/api-client)', () => {
  let fake: FakeHubSpot;
  let stop: () => Promise<void> = async () => undefined;
  afterEach(() => stop());

  async function open(): Promise<HubSpotConfig> {
    fake = fakeHubSpot({ token: TOKEN });
    const server = await fake.listen();
    stop = server.close;
    return { ...structuredClone(hubspotCli.salesStarter.section), basePath: server.basePath };
  }
  const pull = (hs: HubSpotConfig, token = TOKEN) => hubspotCli.pullFields!(hs, { HUBSPOT_ACCESS_TOKEN: token }, { now });

  it('reads each object type\'s properties once and the deal pipelines once, and maps types, options and stages', async () => {
    const hs = await open();
    fake.defineProperty('deals', 'ai_tags', { type: 'enumeration', fieldType: 'checkbox', options: ['renewal', { value: 'upsell', label: 'Upsell' }, { value: 'old', label: 'Old', hidden: true }] });
    fake.defineProperty('deals', 'ai_score', { type: 'number', calculated: true });
    hs.objects.deal!.fields.push('ai_tags', 'ai_score', 'not_in_portal');
    const file = await pull(hs);
    // companies, contacts, deals, notes, tasks: one properties read each; one pipelines read.
    expect(fake.count('/crm/v3/properties/')).toBe(5);
    expect(fake.count('/crm/v3/pipelines/deals')).toBe(1);
    expect(fake.count()).toBe(6);
    expect(file).toMatchObject({ crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-12-05' });
    expect(file.objects.contact!.lifecyclestage).toEqual({
      type: 'enumeration',
      options: [
        { value: 'subscriber', label: 'Subscriber' }, { value: 'lead', label: 'Lead' }, { value: 'marketingqualifiedlead', label: 'Marketing Qualified Lead' },
        { value: 'salesqualifiedlead', label: 'Sales Qualified Lead' }, { value: 'opportunity', label: 'Opportunity' }, { value: 'customer', label: 'Customer' },
        { value: 'evangelist', label: 'Evangelist' }, { value: 'other', label: 'Other' },
      ],
    });
    expect(file.objects.deal).toEqual({
      dealname: { type: 'string' },
      amount: { type: 'number' },
      dealstage: { type: 'enumeration', options: STAGES, pipelineField: 'pipeline' },
      pipeline: { type: 'enumeration', options: [{ value: 'default', label: 'Sales Pipeline' }] },
      closedate: { type: 'datetime' },
      ai_tags: { type: 'enumeration', options: [{ value: 'renewal', label: 'renewal' }, { value: 'upsell', label: 'Upsell' }, { value: 'old', label: 'Old', hidden: true }], multiple: true },
      ai_score: { type: 'number', readOnly: true },
    });
    expect(file.objects.contact!.email).toEqual({ type: 'email' });
    expect(file.objects.note).toEqual({ hs_note_body: { type: 'string' }, hs_timestamp: { type: 'datetime' } });
    expect(file.objects.task!.hs_task_status!.options!.map((o) => (typeof o === 'string' ? o : o.value))).toEqual(['NOT_STARTED', 'IN_PROGRESS', 'WAITING', 'COMPLETED', 'DEFERRED']);
    expect(file.objects.company!.industry!.options).toContainEqual({ value: 'COMPUTER_SOFTWARE', label: 'Computer Software' });
  });

  it('gives dealstage the stages of every pipeline, each keeping its pipeline, and pipeline every pipeline id', async () => {
    const hs = await open();
    fake.definePipeline({ id: '7654321', label: 'Renewals', stages: [{ id: '1122', label: 'Renewal due' }, { id: '1123', label: 'Closed Won', closed: true, probability: 1 }] });
    const file = await pull(hs);
    expect(file.objects.deal!.dealstage).toEqual({
      type: 'enumeration', pipelineField: 'pipeline',
      options: [...STAGES, { value: '1122', label: 'Renewal due', pipeline: '7654321' }, { value: '1123', label: 'Closed Won', pipeline: '7654321' }],
    });
    expect(file.objects.deal!.pipeline!.options).toEqual([{ value: 'default', label: 'Sales Pipeline' }, { value: '7654321', label: 'Renewals' }]);
    // The file as written keeps them, and loads again.
    const written = JSON.parse(formatFieldDefinitions(file)) as typeof file;
    expect(fieldDefinitionsFileSchema.parse(written).objects.deal!.dealstage!.options).toContainEqual({ value: '1123', label: 'Closed Won', pipeline: '7654321' });
  });

  it('keeps a hidden option marked: its value is written (label too), tool schemas leave it out, describe lists it apart', async () => {
    const hs = await open();
    const stages = ['lead', 'customer'].map((v) => ({ value: v, label: v[0]!.toUpperCase() + v.slice(1) }));
    fake.defineProperty('contacts', 'lifecyclestage', { type: 'enumeration', fieldType: 'radio', options: [...stages, { value: 'subscriber', label: 'Subscriber', hidden: true }] });
    const file = await pull(hs);
    expect(file.objects.contact!.lifecyclestage).toEqual({ type: 'enumeration', options: [...stages, { value: 'subscriber', label: 'Subscriber', hidden: true }] });
    expect(formatFieldDefinitions(file)).toContain('"hidden": true');

    const adapter = hubspotAdapter({ accessToken: TOKEN, basePath: hs.basePath, objects: hs.objects, fieldDefinitions: file });
    const sync = createSync({ adapter, ledger: openLedger('memory:'), retry: { retries: 1, minTimeoutMs: 5, maxTimeoutMs: 10 } });
    const contact = (n: number, lifecyclestage: string) => ({ source: 'app', eventId: `e-${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email: `c${n}@acme.test`, lifecyclestage } });
    const outcomes = await sync.applyMany([contact(1, 'subscriber'), contact(2, 'Subscriber'), contact(3, 'member')]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'created', 'rejected']);
    expect(outcomes[1]!.normalized).toEqual([{ field: 'lifecyclestage', from: 'Subscriber', to: 'subscriber' }]);
    expect(fake.records('contacts').map((r) => r.properties.lifecyclestage)).toEqual(['subscriber', 'subscriber']);
    await sync.close();

    const field = (toolSchema(adapter, 'contact') as { properties: { fields: { properties: Record<string, { enum?: string[]; description?: string }> } } }).properties.fields.properties.lifecyclestage!;
    expect(field.enum).toEqual(['lead', 'customer']);
    expect(field.description).not.toContain('Subscriber');
    const describe = readToolSpecs(adapter.objects, { crm: 'hubspot' }).find((t) => t.name === 'describe_contact')!;
    const described = describeObject(describe, true).fields.find((f) => f.name === 'lifecyclestage');
    expect(described).toMatchObject({ allowed: ['lead', 'customer'], hidden: ['subscriber'], labels: { lead: 'Lead', customer: 'Customer' } });
  });

  it('is deterministic: two pulls format to the same bytes', async () => {
    const hs = await open();
    const first = formatFieldDefinitions(await pull(hs));
    const second = formatFieldDefinitions(await pull(hs));
    expect(second).toBe(first);
    expect(first.endsWith('\n')).toBe(true);
  });

  it('turns a refused token into a ConfigError that does not print it', async () => {
    const hs = await open();
    const err = await pull(hs, 'pat-na1-wrong-token-99').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/auth failed .*401/);
    expect((err as Error).message).not.toContain('pat-na1-wrong-token-99');
  });
});
