/** fakeHubSpot's batch read and association read, on the wire: what HubSpot answers to a read. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../../adapters/testing/index.js';

type Results = { id: string; properties: Record<string, string | null> }[];

let fake: FakeHubSpot;
let base = '';
let close: () => Promise<void> = async () => undefined;

beforeEach(async () => {
  fake = fakeHubSpot();
  const server = await fake.listen();
  base = server.basePath;
  close = server.close;
});
afterEach(() => close());

async function read(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer pat-test' }, body: JSON.stringify(body) });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const readContacts = (body: Record<string, unknown>) => read('/crm/v3/objects/contacts/batch/read', { propertiesWithHistory: [], ...body });

describe('fakeHubSpot batch read', () => {
  it.each([
    ['the HubSpot id (no idProperty)', undefined, (id: string) => id],
    ['a unique custom property', 'customer_number', () => 'n-1'],
    ['the unique external id', 'ai_external_id', () => 'C-1'],
  ])('reads by %s with a 200 when every id is found', async (_, idProperty, value) => {
    fake.defineProperty('contacts', 'customer_number', { unique: true });
    const id = fake.state.seed('contacts', { ai_external_id: 'C-1', customer_number: 'n-1', firstname: 'Ann' });
    const r = await readContacts({ ...(idProperty ? { idProperty } : {}), inputs: [{ id: value(id) }], properties: ['firstname'] });
    expect(r.status).toBe(200);
    expect((r.body.results as Results).map((x) => [x.id, x.properties.firstname])).toEqual([[id, 'Ann']]);
  });

  it('answers the asked properties and the three HubSpot always sends, null for one without a value, none for one the object lacks', async () => {
    const id = fake.state.seed('contacts', { ai_external_id: 'C-1', firstname: 'Ann', lastname: 'Lee', email: 'ann@example.test' });
    const r = await readContacts({ idProperty: 'ai_external_id', inputs: [{ id: 'C-1' }], properties: ['firstname', 'jobtitle', 'no_such_property'] });
    const [result] = r.body.results as Results;
    expect(Object.keys(result!.properties).sort()).toEqual(['createdate', 'firstname', 'hs_object_id', 'jobtitle', 'lastmodifieddate']);
    expect(result!.properties).toMatchObject({ hs_object_id: id, firstname: 'Ann', jobtitle: null });
  });

  it('answers ids it does not find with a 207 OBJECT_NOT_FOUND error listing them as asked, also when none is found', async () => {
    fake.state.seed('contacts', { ai_external_id: 'C-1' });
    const some = await readContacts({ idProperty: 'ai_external_id', inputs: [{ id: 'C-1' }, { id: 'X-1' }, { id: 'X-2' }], properties: [] });
    expect(some.status).toBe(207);
    expect(some.body).toMatchObject({
      status: 'COMPLETE', numErrors: 1,
      errors: [{ status: 'error', category: 'OBJECT_NOT_FOUND', message: 'Could not get some CONTACT objects, they may be deleted or not exist. Check that ids are valid.', context: { ids: ['X-1', 'X-2'] } }],
    });
    expect(some.body.results as Results).toHaveLength(1);
    const none = await readContacts({ idProperty: 'ai_external_id', inputs: [{ id: 'X-3' }], properties: [] });
    expect(none).toMatchObject({ status: 207, body: { results: [], numErrors: 1, errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['X-3'] } }] } });
  });

  it('matches any other idProperty exactly: another case is another value', async () => {
    fake.state.seed('contacts', { ai_external_id: 'C-1' });
    const r = await readContacts({ idProperty: 'ai_external_id', inputs: [{ id: 'c-1' }], properties: [] });
    expect(r).toMatchObject({ status: 207, body: { results: [], errors: [{ context: { ids: ['c-1'] } }] } });
  });

  it('reads contacts by email without regard to case, answering the stored email', async () => {
    const id = fake.state.seed('contacts', { email: 'Ann.Lee@Example.test' });
    const r = await readContacts({ idProperty: 'email', inputs: [{ id: 'ann.lee@example.TEST' }, { id: 'bob@example.test' }], properties: ['email'] });
    expect(r.status).toBe(207);
    expect((r.body.results as Results).map((x) => [x.id, x.properties.email])).toEqual([[id, 'Ann.Lee@Example.test']]);
    expect(r.body.errors).toMatchObject([{ context: { ids: ['bob@example.test'] } }]);
  });

  it('follows a contact email written after the first read by email', async () => {
    const id = fake.state.seed('contacts', { ai_external_id: 'C-1', email: 'old@example.test' });
    expect((await readContacts({ idProperty: 'email', inputs: [{ id: 'old@example.test' }], properties: [] })).status).toBe(200);
    await read('/crm/v3/objects/contacts/batch/upsert', { inputs: [{ idProperty: 'ai_external_id', id: 'C-1', properties: { email: 'new@example.test' } }] });
    expect((await readContacts({ idProperty: 'email', inputs: [{ id: 'old@example.test' }], properties: [] })).status).toBe(207);
    expect((await readContacts({ idProperty: 'email', inputs: [{ id: 'NEW@example.test' }], properties: [] })).body.results).toMatchObject([{ id }]);
  });

  it.each([
    ['a property that is not unique', 'contacts', 'firstname'],
    ['email on an object other than contacts', 'companies', 'email'],
    ['a property the object lacks', 'contacts', 'no_such_property'],
  ])('refuses an idProperty that is %s with a 400 VALIDATION_ERROR', async (_, objectType, idProperty) => {
    const r = await read(`/crm/v3/objects/${objectType}/batch/read`, { idProperty, inputs: [{ id: 'x' }], properties: [] });
    expect(r).toMatchObject({ status: 400, body: { status: 'error', category: 'VALIDATION_ERROR' } });
    expect(String(r.body.message)).toContain(idProperty);
  });

  it('answers a record with no associations of a type with the 207 NO_ASSOCIATIONS_FOUND error HubSpot sends', async () => {
    const deal = fake.state.seed('deals', { ai_external_id: 'd-1' });
    const r = await read('/crm/v4/associations/deals/companies/batch/read', { inputs: [{ id: deal }] });
    expect(r).toMatchObject({
      status: 207,
      body: {
        results: [], numErrors: 1,
        errors: [{
          status: 'error', category: 'OBJECT_NOT_FOUND', subCategory: 'crm.associations.NO_ASSOCIATIONS_FOUND', message: `No company is associated with deal ${deal}.`,
          context: { fromObjectId: [deal], fromObjectType: ['deal'], toObjectType: ['company'] },
        }],
      },
    });
  });
});
