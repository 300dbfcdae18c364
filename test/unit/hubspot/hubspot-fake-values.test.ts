import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../../adapters/testing/index.js';

interface Reply { status: number; body: Record<string, unknown> }

let fake: FakeHubSpot;
let close: () => Promise<void> = async () => undefined;
let base = '';

beforeEach(async () => {
  fake = fakeHubSpot();
  const server = await fake.listen();
  base = server.basePath;
  close = server.close;
});
afterEach(() => close());

async function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { 'content-type': 'application/json', authorization: 'Bearer pat-test' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const upsert = (objectType: string, properties: Record<string, string>, id = 'X-1') =>
  call('POST', `/crm/v3/objects/${objectType}/batch/upsert`, { inputs: [{ idProperty: 'ai_external_id', id, properties }] });
const createNote = (properties: Record<string, string>) => call('POST', '/crm/v3/objects/notes/batch/create', { inputs: [{ properties, associations: [] }] });
/** The JSON list HubSpot puts inside `message`. */
const detail = (r: Reply) => JSON.parse(/^Property values were not valid: (\[.*\])$/s.exec(String(r.body.message))![1]!) as Record<string, unknown>[];

describe('fakeHubSpot property values', () => {
  it.each([
    ['contacts', 'lifecyclestage', 'Customer ', 'LEADING_TRAILING_WHITESPACE', '"Customer " includes leading or trailing whitespace.'],
    ['contacts', 'lifecyclestage', 'client', 'INVALID_OPTION', 'client was not one of the allowed options: [subscriber, lead, marketingqualifiedlead, salesqualifiedlead, opportunity, customer, evangelist, other]'],
    ['deals', 'ai_contract_start', 'next Friday', 'INVALID_DATE', 'next Friday was not a valid date.'],
    ['deals', 'ai_contract_start', '1635535135865', 'INVALID_DATE', '1635535135865 is at 19:18:55.865 UTC, not midnight!'],
    ['deals', 'ai_contract_start', '1786334400000', 'INVALID_DATE', '1786334400000 is at 4:0:0.0 UTC, not midnight!'],
    ['deals', 'ai_contract_start', '1496643178005', 'INVALID_DATE', '1496643178005 is at 6:12:58.5 UTC, not midnight!'],
    ['deals', 'amount', '$12,000', 'INVALID_INTEGER', '$12,000 was not a valid number.'],
    ['contacts', 'email', 'ana at northwind', 'INVALID_EMAIL', 'Email address ana at northwind is invalid'],
  ])('refuses %s.%s = %j with the whole batch: 400 %s', async (objectType, name, value, code, message) => {
    // Portals have no default `date` property (deal closedate is a datetime): a custom one, as most are.
    fake.defineProperty('deals', 'ai_contract_start', { type: 'date' });
    const r = await upsert(objectType, { [name]: value });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR', correlationId: expect.any(String) });
    expect(detail(r)).toEqual([{ isValid: false, message, error: code, name, localizedErrorMessage: message, propertyValue: value }]);
    expect(r.body.errors).toEqual([{ message, code, context: { propertyName: [name] } }]);
    expect(fake.records(objectType)).toHaveLength(0);
  });

  it('refuses a stage outside the pipeline with HubSpot\'s pipeline wording and no propertyValue', async () => {
    const r = await upsert('deals', { dealstage: 'Won!!' });
    expect(r.status).toBe(400);
    const message = 'Won!! is not a valid pipeline stage ID. Valid options are: pipelineId=default : [appointmentscheduled, qualifiedtobuy, presentationscheduled, decisionmakerboughtin, contractsent, closedwon, closedlost]';
    expect(detail(r)).toEqual([{ isValid: false, message, error: 'INVALID_OPTION', name: 'dealstage', localizedErrorMessage: message }]);
    expect(fake.records('deals')).toHaveLength(0);
  });

  it('takes a time of day in deal closedate, a datetime as in real portals', async () => {
    const closedate = await call('GET', '/crm/v3/properties/deals/closedate');
    expect(closedate.body).toMatchObject({ name: 'closedate', type: 'datetime', fieldType: 'date' });
    expect((await upsert('deals', { closedate: '1786334400000' }, 'D-1')).status).toBe(200);
    expect((await upsert('deals', { closedate: '2027-01-15T16:30:00Z' }, 'D-2')).status).toBe(200);
    expect(fake.records('deals').map((d) => d.properties.closedate)).toEqual(['1786334400000', '2027-01-15T16:30:00Z']);
    const r = await upsert('deals', { closedate: 'next Friday' }, 'D-3');
    expect(detail(r)[0]).toMatchObject({ error: 'INVALID_DATE', name: 'closedate', message: 'next Friday was not a valid date.' });
  });

  it('refuses a note whose hs_timestamp is "28/11/2026 10:00" (a datetime takes ISO 8601 or epoch ms)', async () => {
    const r = await createNote({ hs_timestamp: '28/11/2026 10:00', hs_note_body: 'x' });
    expect(r.status).toBe(400);
    expect(detail(r)[0]).toMatchObject({ error: 'INVALID_DATE', name: 'hs_timestamp', message: '28/11/2026 10:00 was not a valid date.' });
    expect(fake.records('notes')).toHaveLength(0);
  });

  it.each([
    ['deals', { amount: '12000.50', closedate: '2027-01-15', dealstage: 'closedwon', pipeline: 'default' }],
    ['deals', { closedate: String(Date.UTC(2027, 0, 15)), amount: '' }],
    ['contacts', { lifecyclestage: 'customer', phone: ' +1 555 0100', email: 'ana@northwind.example' }],
    ['notes', { hs_timestamp: '2026-11-28T10:00:00Z' }],
    ['notes', { hs_timestamp: '1764324000000' }],
    ['tasks', { hs_timestamp: '2026-11-28T10:00:00.000+01:00', hs_task_status: 'WAITING', hs_task_priority: 'HIGH' }],
    ['companies', { industry: 'COMPUTER_SOFTWARE' }],
  ])('accepts valid %s values %j', async (objectType, properties) => {
    const r = objectType === 'notes' || objectType === 'tasks'
      ? await call('POST', `/crm/v3/objects/${objectType}/batch/create`, { inputs: [{ properties, associations: [] }] })
      : await upsert(objectType, properties);
    expect(r.status).toBeLessThan(300);
    expect(fake.records(objectType)).toHaveLength(1);
  });

  it('fails a whole upsert batch for one bad value, naming only that property and value', async () => {
    const r = await call('POST', '/crm/v3/objects/contacts/batch/upsert', {
      inputs: [1, 2, 3].map((n) => ({ idProperty: 'ai_external_id', id: `C-${n}`, properties: { lifecyclestage: n === 2 ? 'client' : 'lead' } })),
    });
    expect(r.status).toBe(400);
    expect(detail(r).map((d) => [d.name, d.propertyValue])).toEqual([['lifecyclestage', 'client']]);
    expect(fake.records('contacts')).toHaveLength(0);
  });

  it('answers a traced batch create with 207: the bad input refused, the others created', async () => {
    const inputs = ['2026-11-28T10:00:00Z', 'tomorrow', '2026-11-29T10:00:00Z'].map((t, i) => ({ properties: { hs_timestamp: t }, associations: [], objectWriteTraceId: String(i) }));
    const r = await call('POST', '/crm/v3/objects/notes/batch/create', { inputs });
    expect(r.status).toBe(207);
    expect(r.body.numErrors).toBe(1);
    const [error] = r.body.errors as Record<string, unknown>[];
    expect(error).toMatchObject({ category: 'VALIDATION_ERROR', context: { objectWriteTraceId: ['1'] } });
    expect(String(error!.message)).toContain('"propertyValue":"tomorrow"');
    expect(fake.records('notes')).toHaveLength(2);
  });

  it('holds a stage to the pipeline written beside it, else the deal\'s own, else the default one, and knows pipelines a test defines', async () => {
    fake.definePipeline({ id: 'renewals', label: 'Renewals', stages: [{ id: 'renewal_open', label: 'Open' }, { id: 'renewal_won', label: 'Won', closed: true, probability: 1 }] });
    const outside = await upsert('deals', { pipeline: 'renewals', dealstage: 'closedwon' }, 'D-1');
    expect(outside.status).toBe(400);
    expect(detail(outside)[0]).toMatchObject({ error: 'INVALID_OPTION', name: 'dealstage', message: 'closedwon is not a valid pipeline stage ID. Valid options are: pipelineId=renewals : [renewal_open, renewal_won]' });
    expect((await upsert('deals', { pipeline: 'renewals', dealstage: 'renewal_open' }, 'D-2')).status).toBe(200);
    // An update writing the stage alone: the deal is in `renewals`.
    expect((await upsert('deals', { dealstage: 'renewal_won' }, 'D-2')).status).toBe(200);
    const moved = await upsert('deals', { dealstage: 'closedwon' }, 'D-2');
    expect(detail(moved)[0]).toMatchObject({ name: 'dealstage', message: expect.stringContaining('pipelineId=renewals : [renewal_open, renewal_won]') });
    const byId = await call('POST', '/crm/v3/objects/deals/batch/update', { inputs: [{ id: fake.records('deals')[0]!.id, properties: { dealstage: 'closedlost' } }] });
    expect(byId.status).toBe(400);
    expect(fake.records('deals')[0]!.properties.dealstage).toBe('renewal_won');
    // A create without a pipeline is in the default one.
    const created = await upsert('deals', { dealstage: 'renewal_open' }, 'D-3');
    expect(detail(created)[0]).toMatchObject({ message: expect.stringContaining('pipelineId=default : [appointmentscheduled,') });
    expect((await upsert('deals', { dealstage: 'closedwon' }, 'D-3')).status).toBe(200);
  });

  it('holds a multi-select (checkbox) property a test defines to its options, values joined with ;', async () => {
    fake.defineProperty('contacts', 'ai_interests', { type: 'enumeration', fieldType: 'checkbox', options: ['crm', 'billing', { value: 'api', label: 'API' }] });
    expect((await upsert('contacts', { ai_interests: 'crm;api' }, 'C-1')).status).toBe(200);
    const r = await upsert('contacts', { ai_interests: 'crm;APIs' }, 'C-2');
    expect(detail(r)[0]).toMatchObject({ error: 'INVALID_OPTION', message: 'APIs was not one of the allowed options: [crm, billing, api]' });
  });

  it('takes the value of a hidden option (hidden from forms, not refused) and lists it marked hidden', async () => {
    fake.defineProperty('contacts', 'lifecyclestage', { type: 'enumeration', fieldType: 'radio', options: ['lead', { value: 'subscriber', label: 'Subscriber', hidden: true }] });
    expect((await upsert('contacts', { lifecyclestage: 'subscriber' }, 'C-1')).status).toBe(200);
    expect(fake.records('contacts')[0]!.properties.lifecyclestage).toBe('subscriber');
    const one = await call('GET', '/crm/v3/properties/contacts/lifecyclestage');
    expect(one.body.options).toEqual([{ label: 'lead', value: 'lead', displayOrder: 0, hidden: false }, { label: 'Subscriber', value: 'subscriber', displayOrder: 1, hidden: true }]);
  });

  it('serves property definitions and the deal pipelines in HubSpot\'s shapes', async () => {
    const one = await call('GET', '/crm/v3/properties/contacts/lifecyclestage');
    expect(one.body).toMatchObject({ name: 'lifecyclestage', type: 'enumeration', fieldType: 'radio', externalOptions: false });
    expect((one.body.options as unknown[])[5]).toEqual({ label: 'Customer', value: 'customer', displayOrder: 5, hidden: false });
    const deals = await call('GET', '/crm/v3/properties/deals');
    const stage = (deals.body.results as Record<string, unknown>[]).find((p) => p.name === 'dealstage');
    expect(stage).toMatchObject({ type: 'enumeration', externalOptions: true, options: [] });
    const pipelines = await call('GET', '/crm/v3/pipelines/deals');
    expect(pipelines.status).toBe(200);
    const [pipeline] = pipelines.body.results as { id: string; label: string; stages: { id: string; label: string; metadata: Record<string, string> }[] }[];
    expect(pipeline).toMatchObject({ id: 'default', label: 'Sales Pipeline' });
    expect(pipeline!.stages.map((s) => s.id)).toEqual(['appointmentscheduled', 'qualifiedtobuy', 'presentationscheduled', 'decisionmakerboughtin', 'contractsent', 'closedwon', 'closedlost']);
    expect(pipeline!.stages[5]).toMatchObject({ label: 'Closed Won', metadata: { isClosed: 'true', probability: '1' } });
  });
});

describe('fakeHubSpot batch update', () => {
  it('fails the whole batch for one refused value and writes nothing', async () => {
    await upsert('deals', { amount: '100' }, 'D-1');
    await upsert('deals', { amount: '200' }, 'D-2');
    const [d1, d2] = fake.records('deals');
    const r = await call('POST', '/crm/v3/objects/deals/batch/update', { inputs: [{ id: d1!.id, properties: { amount: '150' } }, { id: d2!.id, properties: { amount: '$12,000' } }] });
    expect(r.status).toBe(400);
    expect(detail(r)[0]).toMatchObject({ error: 'INVALID_INTEGER', name: 'amount', propertyValue: '$12,000' });
    expect(fake.records('deals').map((d) => d.properties.amount)).toEqual(['100', '200']);
  });

  it('updates valid inputs (200) and answers an unknown id with a 207 error', async () => {
    await upsert('deals', { amount: '100' }, 'D-1');
    const [d1] = fake.records('deals');
    const ok = await call('POST', '/crm/v3/objects/deals/batch/update', { inputs: [{ id: d1!.id, properties: { amount: '150', closedate: '2027-01-15' } }] });
    expect(ok.status).toBe(200);
    expect(fake.records('deals')[0]!.properties).toMatchObject({ amount: '150', closedate: '2027-01-15' });
    const partial = await call('POST', '/crm/v3/objects/deals/batch/update', { inputs: [{ id: d1!.id, properties: { amount: '175' } }, { id: '999999', properties: { amount: '1' } }] });
    expect(partial.status).toBe(207);
    expect(partial.body.errors).toEqual([expect.objectContaining({ category: 'OBJECT_NOT_FOUND', context: { ids: ['999999'] } })]);
    expect(fake.records('deals')[0]!.properties.amount).toBe('175');
  });
});
